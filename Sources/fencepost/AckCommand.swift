// `fencepost ack DELIVERY [--action A]`: answer a delivered notification, as the button does.
import ArgumentParser
import FencepostJSON

struct AckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ack",
        abstract: "Answer a delivered notification: default (a short press), dismiss, snooze (a long press) or an action of its category.")

    @Argument(help: ArgumentHelp("The delivery id (see `fencepost delivered`).", valueName: "delivery"))
    var delivery: String

    @Option(help: ArgumentHelp("The action.", valueName: "action"))
    var action = "default"

    @Flag(help: "Print the agent's answer as JSON.")
    var json = false

    @OptionGroup var options: SocketOptions

    func run() throws {
        try runClient("ack") { () throws(ClientFailure) in
            let result = try ControlClient.call(options.path, "ack", .object([("delivery", .string(delivery)), ("action", .string(action))]))
            if json { return try printJSON(result) }
            let shown = ClientText.printable(result)
            var text = "answered \(shown["delivery"]?.string ?? delivery) with \(shown["action"]?.string ?? action)"
            if let s = shown["snoozed"]?.string { text += "; snoozed as \(s)" }
            try writeStandardOutput(text + "\n")
        }
    }
}
