// `fencepost pending`: the agent's pending requests and their next fires.
import ArgumentParser
import FencepostJSON
import FencepostLinux

struct PendingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pending",
        abstract: "List the agent's pending requests with their next fire (UTC and local time, and how soon) or region state.")

    @Flag(help: "Print the agent's answer as JSON.")
    var json = false

    @OptionGroup var page: PageOptions

    @OptionGroup var options: SocketOptions
    @OptionGroup var zone: LocalZoneOption

    func run() throws {
        try runClient("pending") { () throws(ClientFailure) in
            let list: [JSONValue]
            var next: String?
            if let params = page.params {
                let result = try ControlClient.call(options.path, "pending", params)
                if json { return try printJSON(result) }
                list = result["pending"]?.array ?? []
                next = result["next"]?.string
            } else {
                let all = try ControlPages.all(options.path, "pending") { $0["pending"]?.array ?? [] }
                if json { return try printJSON(.array(all)) }
                list = all
            }
            defer { if let next { writeErrorLine("more after \(next): fencepost pending --after \(next)\(page.limit.map { " --limit \($0)" } ?? "")") } }
            guard !list.isEmpty else { return try writeStandardOutput("no pending requests\n") }
            let now = SystemClocks.wallNow()
            let local = try zone.rules(agent: options.path)
            let rows = list.map { p -> [String] in
                let request = p["request"]
                let (utc, relative) = ClientText.time(p["nextFire"]?.string, now: now)
                var note: [String] = []
                if let s = p["regionState"]?.string { note.append(s) }
                if let w = p["waitingFor"]?.string { note.append(w) }
                return [request?["id"]?.string ?? "?", Self.kind(request?["trigger"]), utc,
                        LocalTimeText.local(p["nextFire"]?.string, in: local), relative,
                        request?["content"]?["title"]?.string ?? "", note.joined(separator: "; ")]
            }
            try writeStandardOutput(ClientText.table(["ID", "KIND", "NEXT FIRE (UTC)", "LOCAL (\(local.identifier))", "IN", "TITLE", "STATE"], rows))
        }
    }

    /// `calendar`, `interval` or `location`, `(repeats)` added when it repeats.
    static func kind(_ trigger: JSONValue?) -> String {
        guard case .object(let m)? = trigger, let first = m.first else { return "?" }
        return first.key + (first.value["repeats"] == .bool(true) ? " (repeats)" : "")
    }
}
