// `fencepost status`: the agent's clock, GPS and, for each pending request, why it has not fired.
import ArgumentParser
import FencepostJSON

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the agent's clock trust, GPS fix, badge and why each pending request has not fired yet.")

    @Flag(help: "Print the agent's answer as JSON.")
    var json = false

    @OptionGroup var options: SocketOptions

    func run() throws {
        try runClient("status") { () throws(ClientFailure) in
            let s = try ControlClient.call(options.path, "status")
            if json { return try printJSON(s) }
            try writeStandardOutput(Self.text(s))
        }
    }

    static func text(_ s: JSONValue) -> String {
        func str(_ v: JSONValue?) -> String? { v?.string }
        func num(_ v: JSONValue?) -> Double? { v?.double }
        let c = s["clock"], g = s["gps"]
        var text = ""
        let trusted = c?["trusted"] == .bool(true)
        text += "clock     \(str(c?["wall"]) ?? "?")  \(trusted ? "trusted" : "NOT trusted") (source \(str(c?["source"]) ?? "?")), zone \(str(c?["zone"]) ?? "?")\n"
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
        let pending = s["pending"]?.array ?? []
        text += "pending   \(pending.count)\n"
        if !pending.isEmpty {
            let rows = pending.map { p in [str(p["id"]) ?? "?", str(p["kind"]) ?? "?", str(p["why"]) ?? ""] }
            text += "\n" + ClientText.table(["ID", "KIND", "WHY IT HAS NOT FIRED"], rows)
        }
        return text
    }
}
