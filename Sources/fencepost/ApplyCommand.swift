// `fencepost apply FILE`: make the agent's configured requests and categories those of a file.
import ArgumentParser
import FencepostJSON

struct ApplyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Install the requests and categories of a config file, idempotently.",
        discussion: """
            FILE is the TOML config, read by the agent's own reader (every key checked as a \
            start or SIGHUP checks it; its [[request]] and [[category]] tables are sent, the \
            daemon's settings are not, and the `zones` GeoJSON is the agent's zone set, built \
            by the agent itself at start and at SIGHUP, not requests), or JSON lines (request \
            lines and {"categories":[…]} lines, as `fencepost simulate --requests` reads).

            Requests installed by an earlier apply and missing now are removed; new or changed \
            ones are added; unchanged ones keep their progress. Requests added with \
            `fencepost add` are never removed by apply. A TOML file's categories replace the \
            agent's (as its SIGHUP does); JSON lines replace them only when they have some. \
            Applying the same file twice changes nothing.
            """)

    @Argument(help: ArgumentHelp("The config: .toml, or .jsonl.", valueName: "file"))
    var file: String

    @Flag(help: "Print the agent's answer as JSON.")
    var json = false

    @OptionGroup var options: SocketOptions

    func run() throws {
        try runClient("apply") { () throws(ClientFailure) in
            let config = try ClientInput.config(file)
            var params: [(key: String, value: JSONValue)] = [("requests", .array(config.requests.map(\.value)))]
            if let c = config.categories { params.append(("categories", .array(c.map(\.value)))) }
            let result: JSONValue
            do throws(ClientFailure) { result = try ControlClient.call(options.path, "apply", .object(params)) } catch {
                // One message by nature (what is not in it is removed): too long is the limit to raise.
                if error.messageLimit != nil {
                    throw ClientFailure(error.code, error.message + "; raise it, or have the agent apply its own config file (systemctl reload fencepost)")
                }
                throw ClientInput.locate(error, ["requests": config.requests.map(\.line),
                                                 "categories": (config.categories ?? []).map(\.line)], path: file)
            }
            if json { return try printJSON(result) }
            let shown = ClientText.printable(result)
            var text = ""
            for key in ["added", "replaced", "removed", "unchanged"] {
                let ids = ClientText.ids(shown[key])
                text += "\(key): \(ids.count)\(ids.isEmpty ? "" : " (" + ids.joined(separator: ", ") + ")")\n"
            }
            try writeStandardOutput(text)
        }
    }
}
