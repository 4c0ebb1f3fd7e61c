// `fencepost status`: the agent's clock, GPS and, for each pending request, why it has not fired.
import ArgumentParser
import FencepostJSON
#if canImport(Glibc)
import Glibc
#endif

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the agent's clock trust, GPS fix, badge and why each pending request has not fired yet.")

    @Flag(help: "Print the agent's answer as JSON (its fields: docs/protocol.md, method status).")
    var json = false

    @OptionGroup var page: PageOptions

    @Flag(help: "Keep watching: redraw about once a second on a terminal (like cgps) until Ctrl-C; on a pipe, one line per change.")
    var follow = false

    @OptionGroup var options: SocketOptions

    func run() throws {
        try runClient("status") { () throws(ClientFailure) in
            if follow {
                return try StatusFollow.run(terminal: isatty(1) == 1) { () throws(ClientFailure) in
                    // Short: a Ctrl-C waits for the call in progress.
                    try ControlClient.call(options.path, "status", timeout: StatusFollow.callTimeout)
                }
            }
            if let params = page.params {
                let s = try ControlClient.call(options.path, "status", params)
                if json { return try printJSON(s) }
                return try writeStandardOutput(Self.text(s))
            }
            // The whole list: the first answer's page, then the rest page by page.
            var s = try ControlClient.call(options.path, "status")
            if let next = s["next"]?.string, case .object(var members) = s {
                let rest = try ControlPages.all(options.path, "status", after: next) { $0["pending"]?.array ?? [] }
                for i in members.indices {
                    if members[i].key == "pending" { members[i].value = .array((members[i].value.array ?? []) + rest) }
                    if members[i].key == "next" { members[i].value = .null }
                }
                s = .object(members)
            }
            if json { return try printJSON(s) }
            try writeStandardOutput(Self.text(s))
        }
    }

    static func text(_ s: JSONValue) -> String {
        let s = ClientText.printable(s)
        func str(_ v: JSONValue?) -> String? { v?.string }
        func num(_ v: JSONValue?) -> Double? { v?.double }
        let c = s["clock"], g = s["gps"]
        var text = ""
        let trusted = c?["trusted"] == .bool(true)
        text += "clock     \(str(c?["wall"]) ?? "?")  \(trusted ? "trusted" : "NOT trusted") (source \(str(c?["source"]) ?? "?")), zone \(str(c?["zone"]) ?? "?")\n"
        if let offset = num(c?["offsetToSystem"]) {
            text += "          the system clock is \(ClientText.approximate(Int64(abs(offset).rounded()))) \(offset >= 0 ? "behind" : "ahead of") GNSS time\n"
        }
        if let up = c?["uptime"]?.int64 {
            text += "agent     up \(ClientText.approximate(up))\(str(c?["started"]).map { " (since \($0))" } ?? "")\n"
        }
        var gps = str(g?["source"]) ?? "no source"
        gps += g?["connected"] == .bool(true) ? ", connected" : ", not connected"
        if let age = num(g?["lastFixAge"]) {
            gps += "; last fix \(ClientText.approximate(Int64(age.rounded()))) ago"
            if let e = num(g?["error"]) { gps += " ±\(Int(e.rounded())) m" }
            if let lat = num(g?["lat"]), let lon = num(g?["lon"]) { gps += " at \(lat), \(lon)" }
        } else {
            gps += "; no fix yet"
        }
        if let n = g?["fixes"]?.int64 { gps += "; \(n) fixes" }
        text += "gps       \(gps)\n"
        text += StatusGPSText.lines(g)
        text += "badge     \(s["badge"]?.int64 ?? 0) unanswered of \(s["delivered"]?.int64 ?? 0) delivered\n"
        if let p = str(s["config"]) { text += "config    \(p)\n" }
        if let p = str(s["state"]) { text += "state     \(p)\n" }
        if let z = s["zones"], let count = z["count"]?.int64, count > 0 {
            let listed = z["zones"]?.array ?? []
            let total = z["withState"]?.int64 ?? Int64(listed.count)
            text += "zones     \(count) in the zone set, \(total) with state\(Int64(listed.count) < total ? " (first \(listed.count) shown)" : "")\n"
            for zone in listed {
                var line = "          \(str(zone["id"]) ?? "?"): \(str(zone["state"]) ?? "?"), \(zone["fires"]?.int64 ?? 0) fires"
                if let q = str(zone["quietUntil"]) { line += ", quiet until \(q)" }
                text += line + "\n"
            }
        }
        let pending = s["pending"]?.array ?? []
        let total = s["pendingTotal"]?.int64 ?? Int64(pending.count)
        if let next = s["next"]?.string {
            text += "pending   \(total) (\(pending.count) listed; more: fencepost status --after \(next))\n"
        } else {
            text += "pending   \(total)\n"
        }
        if !pending.isEmpty {
            let rows = pending.map { p in [str(p["id"]) ?? "?", str(p["kind"]) ?? "?", str(p["why"]) ?? ""] }
            text += "\n" + ClientText.table(["ID", "KIND", "WHY IT HAS NOT FIRED"], rows)
        }
        return text
    }
}
