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
            let result = all ? try ControlClient.call(options.path, "remove", .object([("all", true)])) : try Self.remove(ids, socket: options.path)
            if json { return try printJSON(result) }
            let shown = ClientText.printable(result)
            let removed = ClientText.ids(shown["removed"])
            try writeStandardOutput(removed.isEmpty ? "nothing removed (no such pending request)\n"
                                                    : "removed \(removed.joined(separator: ", "))\n")
        }
    }

    /// Removes `ids` in messages of at most 1,000 ids and the agent's message size
    /// (``ControlBatches``; each id stands alone, so batches change nothing): `{"removed":[…]}`.
    static func remove(_ ids: [String], socket: String) throws(ClientFailure) -> JSONValue {
        func params(_ list: [JSONValue]) -> JSONValue { .object([("ids", .array(list))]) }
        let values = ids.map(JSONValue.string)
        var batches = ControlBatches(method: "remove", items: values, maximumCount: 1000, params: params)
        var removed: [JSONValue] = []
        var start = 0
        while start < values.count {
            let range = batches.next(from: start)
            let answer: JSONValue
            do throws(ClientFailure) { answer = try ControlClient.call(socket, "remove", params(Array(values[range]))) } catch {
                guard let limit = error.messageLimit, range.count > 1 else { throw error }
                batches.refused(range, agentLimit: limit)
                continue
            }
            removed += answer["removed"]?.array ?? []
            start = range.upperBound
        }
        return .object([("removed", .array(removed))])
    }
}
