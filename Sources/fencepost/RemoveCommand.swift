// `fencepost remove ID… | --all`: remove pending requests.
import ArgumentParser
import FencepostJSON

struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove pending requests by id, or all of them (unknown ids are ignored, as on iOS).")

    @Argument(help: ArgumentHelp("Request ids.", valueName: "id"))
    var ids: [String] = []

    @Flag(help: "Remove every pending request.")
    var all = false

    @Flag(help: "Print the agent's answer as JSON.")
    var json = false

    @OptionGroup var options: SocketOptions

    func validate() throws {
        if all && !ids.isEmpty { throw ValidationError("Give ids or --all, not both.") }
        if !all && ids.isEmpty { throw ValidationError("Give the ids to remove, or --all.") }
    }

    func run() throws {
        try runClient("remove") { () throws(ClientFailure) in
            let params: JSONValue = all ? .object([("all", true)]) : .object([("ids", .array(ids.map(JSONValue.string)))])
            let result = try ControlClient.call(options.path, "remove", params)
            if json { return try printJSON(result) }
            let shown = ClientText.printable(result)
            let removed = ClientText.ids(shown["removed"])
            try writeStandardOutput(removed.isEmpty ? "nothing removed (no such pending request)\n"
                                                    : "removed \(removed.joined(separator: ", "))\n")
        }
    }
}
