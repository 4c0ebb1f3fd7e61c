// `fencepost fleet command DEVICE NAME …`: one command to a board, and its answer.
import ArgumentParser
import FencepostAgent
import FencepostJSON
import FencepostLinux
import Fleet

struct FleetCommandCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "command",
        abstract: "Send a board a command and wait for its answer.",
        discussion: """
            Commands:
              ack DELIVERY [--action ID]     answer a delivery as its button would (default: \
            its default action); the board sends a response event with source "remote"
              removeDelivered DELIVERY…      remove delivered notifications
              status                         what `fencepost status` says on the board
              resync                         the board reads its retained desired document again

            The command goes to fencepost/v1/dev/DEVICE/cmd (QoS 1, not retained) with an id and \
            an expiresAt (now + --expires), also the MQTT Message Expiry: the broker drops it \
            after that, and the board refuses it if it arrives later, so a board that was off \
            never acts on a stale command. The answer comes on …/cmd/res with the same id; the \
            command waits for it until the expiry. Exit status: 0 done, 65 the board refused it, \
            75 no answer in time.
            """)

    @Argument(help: ArgumentHelp("The board's device id.", valueName: "device"))
    var device: String

    @Argument(help: ArgumentHelp("ack, removeDelivered, status or resync.", valueName: "name"))
    var name: String

    @Argument(help: ArgumentHelp("The delivery (ack) or deliveries (removeDelivered).", valueName: "delivery"))
    var deliveries: [String] = []

    @Option(help: ArgumentHelp("ack: the action id (default: the delivery's default action).", valueName: "id"))
    var action: String?

    @Option(help: ArgumentHelp("How long the command stays valid: 90s, 5m, 2h (default 5m).", valueName: "duration"))
    var expires: String = "5m"

    @Flag(help: "Print the board's answer as JSON.")
    var json = false

    @OptionGroup var connection: FleetConnectionOptions

    static let names = FleetCommand.Name.allCases.map(\.rawValue)

    func validate() throws {
        guard Self.names.contains(name) else {
            throw ValidationError("unknown command \"\(name)\": one of \(Self.names.joined(separator: ", "))")
        }
        guard let seconds = Self.seconds(expires), seconds >= 1, seconds <= 7 * 86400 else {
            throw ValidationError("--expires \(expires): a duration from 1s to 7d, like 90s, 5m, 2h")
        }
        _ = seconds
        switch name {
        case "ack" where deliveries.count != 1: throw ValidationError("ack takes one delivery id")
        case "removeDelivered" where deliveries.isEmpty: throw ValidationError("removeDelivered takes one or more delivery ids")
        case "status", "resync": if !deliveries.isEmpty { throw ValidationError("\(name) takes no arguments") }
        default: break
        }
        if action != nil && name != "ack" { throw ValidationError("--action goes with ack") }
    }

    /// `90`, `90s`, `5m`, `2h`, `1d` as seconds.
    static func seconds(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        guard let last = text.last else { return nil }
        if let unit = units[last] { return Int64(text.dropLast()).flatMap { $0.multipliedReportingOverflow(by: unit).overflow ? nil : $0 * unit } }
        return Int64(text)
    }

    func run() throws {
        try runClient("fleet command") { () throws(ClientFailure) in
            let topics = try OperatorTopics.of(device)
            let lifetime = Self.seconds(expires)!
            let mqtt = try connection.connect()
            defer { mqtt.close() }
            let resTopic = topics.commandResult
            do { try mqtt.subscribe(resTopic, qos: 1, timeout: connection.timeoutNanoseconds) } catch {
                throw ClientFailure(ClientFailure.unavailable, "subscribing to \(resTopic): \(error)")
            }
            let id = "op-" + String(UInt64.random(in: 0 ... UInt64.max), radix: 16)
            let expiresAt = OperatorClock.nowMilliseconds() + lifetime * 1000
            var args: [(key: String, value: JSONValue)] = []
            switch name {
            case "ack":
                args = [("delivery", .string(deliveries[0]))]
                if let action { args.append(("action", .string(action))) }
            case "removeDelivered": args = [("ids", .array(deliveries.map { .string($0) }))]
            default: break
            }
            let command = JSONValue.object([("v", 1), ("id", .string(id)), ("name", .string(name)), ("args", .object(args)),
                                            ("expiresAt", .string(OperatorClock.text(milliseconds: expiresAt)))])
            do {
                try mqtt.publish(topic: topics.command, payload: Array(command.serialized().utf8), qos: 1, retain: false,
                                 messageExpiry: UInt32(lifetime), timeout: connection.timeoutNanoseconds)
            } catch {
                throw ClientFailure(ClientFailure.unavailable, "publishing to \(topics.command): \(error)")
            }
            let deadline = OperatorClock.monotonic() + UInt64(lifetime) * 1_000_000_000
            while let m = mqtt.nextMessage(until: deadline) {
                guard m.topic == resTopic, let answer = try? JSONValue.parse(String(decoding: m.payload, as: UTF8.self)),
                      answer["id"]?.string == id else { continue }
                if json { try printJSON(answer) }
                let ok = answer["ok"]?.bool == true
                if !json {
                    let body = ok ? (answer["result"] ?? .null) : (answer["error"] ?? .null)
                    try writeStandardOutput("\(device): \(name) \(ok ? "done" : "refused")"
                        + (body.isNull ? "" : ": " + PrintableText.escaped(body["message"]?.string ?? body.serialized())) + "\n")
                }
                if !ok { throw ClientFailure(ClientFailure.dataError, "\(device) refused \(name) (\(id))") }
                return
            }
            throw ClientFailure(ClientFailure.tryLater, "\(device) did not answer \(name) (\(id)) before it expired at \(OperatorClock.text(milliseconds: expiresAt)); the board refuses it after that")
        }
    }
}
