// `fencepost delivered`: the delivered notifications, answered or not.
import ArgumentParser
import FencepostJSON
import FencepostLinux

struct DeliveredCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delivered",
        abstract: "List delivered notifications, oldest first; unanswered ones keep the badge LED lit.")

    @Flag(help: "Print the agent's answer as JSON.")
    var json = false

    @OptionGroup var options: SocketOptions
    @OptionGroup var zone: LocalZoneOption

    func run() throws {
        try runClient("delivered") { () throws(ClientFailure) in
            let result = try ControlClient.call(options.path, "delivered")
            if json { return try printJSON(result) }
            let list = result.array ?? []  // every cell is escaped by ClientText.table
            guard !list.isEmpty else { return try writeStandardOutput("no delivered notifications\n") }
            let now = SystemClocks.wallNow()
            let local = try zone.rules(agent: options.path)
            let rows = list.map { d -> [String] in
                let (utc, relative) = ClientText.time(d["date"]?.string, now: now)
                var outcome = d["outcome"]?.string ?? "?"
                if let n = d["count"]?.int64 { outcome += " ×\(n)" }
                if let e = d["regionEvent"]?.string { outcome += " (\(e))" }
                return [d["id"]?.string ?? "?", d["request"]?.string ?? "?", utc,
                        LocalTimeText.local(d["date"]?.string, in: local), relative, outcome,
                        d["response"]?.string ?? "unanswered", d["content"]?["title"]?.string ?? ""]
            }
            try writeStandardOutput(ClientText.table(["ID", "REQUEST", "DELIVERED (UTC)", "LOCAL (\(local.identifier))", "WHEN", "OUTCOME", "ANSWER", "TITLE"], rows))
        }
    }
}
