// `fencepost categories [--set FILE]`: show or replace the notification categories.
import ArgumentParser
import FencepostJSON
import LocalNotifications

struct CategoriesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "categories",
        abstract: "Show the registered categories, or replace them all.",
        discussion: """
            FILE holds a JSON array of categories, {"categories":[…]}, or JSON lines of single \
            categories:

              {"id":"REMINDER","actions":[{"id":"snooze","title":"Later","snoozeSeconds":600},{"id":"done","title":"Done"}]}
            """)

    @Option(help: ArgumentHelp("Replace the categories with those in this file (- for standard input).", valueName: "file"))
    var set: String?

    @Flag(help: "Print the agent's answer as JSON.")
    var json = false

    @OptionGroup var options: SocketOptions

    func run() throws {
        try runClient("categories") { () throws(ClientFailure) in
            var params: JSONValue = .object([])
            if let set {
                var items = try ClientInput.jsonValues(try ClientInput.read(set), path: set)
                if items.count == 1, case .array(let list)? = items[0].value["categories"] {
                    items = list.map { NumberedJSON(line: items[0].line, value: $0) }
                }
                for c in items {
                    do throws(RequestError) { _ = try NotificationCategory(json: c.value) } catch {
                        throw ClientFailure(ClientFailure.dataError, "\(ClientInput.name(set)):\(c.line): \(error.message) [rule: \(error.rule.rawValue)]")
                    }
                }
                params = .object([("set", .array(items.map(\.value)))])
            }
            let result = try ControlClient.call(options.path, "categories", params)
            if json { return try printJSON(result) }
            let list = (result.array ?? []).map(ClientText.printable)
            guard !list.isEmpty else { return try writeStandardOutput("no categories\n") }
            var text = ""
            for c in list {
                let actions = (c["actions"]?.array ?? []).map { a -> String in
                    var s = a["id"]?.string ?? "?"
                    var details: [String] = []
                    if let t = a["title"]?.string, t != s { details.append("\"\(t)\"") }
                    if let n = a["snoozeSeconds"]?.int64 { details.append("snooze \(ClientText.approximate(n))") }
                    if a["destructive"] == .bool(true) { details.append("destructive") }
                    if !details.isEmpty { s += " (" + details.joined(separator: ", ") + ")" }
                    return s
                }
                text += "\(c["id"]?.string ?? "?"): \(actions.isEmpty ? "no actions" : actions.joined(separator: ", "))\n"
            }
            try writeStandardOutput(text)
        }
    }
}
