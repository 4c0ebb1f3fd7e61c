// The GPS diagnostics lines of `fencepost status`, under the `gps` line: the fix as `cgps` shows
// it, the source's counters, and a hint when they point at a cause.
import FencepostJSON

enum StatusGPSText {
    /// The indented lines for the status answer's `gps` object (empty when it has no diagnostics).
    static func lines(_ g: JSONValue?) -> String {
        guard let g, g["counters"] != nil else { return "" }
        let pad = "          "
        var fix: [String] = []
        fix.append("fix \(g["mode"]?.string ?? "none yet")")
        let used = g["satellitesUsed"]?.int64.map(String.init) ?? "?"
        let seen = g["satellitesSeen"]?.int64.map(String.init) ?? "?"
        fix.append("satellites \(used) used / \(seen) seen")
        if let h = g["hdop"]?.double { fix.append("HDOP \(format(h))") }
        if let e = g["error"]?.double { fix.append("error ±\(format(e)) m") }
        if let a = g["fixAge"]?.double { fix.append("age \(format(a)) s") }
        var text = pad + fix.joined(separator: ", ") + "\n"
        let c = g["counters"], r = c?["rejected"]
        var source: [String] = []
        if let b = c?["bytes"]?.int64 { source.append("\(b) bytes") }
        source.append("\(c?["sentences"]?.int64 ?? 0) sentences")
        var rejected: [String] = []
        for (key, name) in [("checksum", "checksum"), ("framing", "framing"), ("unknownTalker", "unknown talker"),
                            ("overlong", "overlong"), ("unreadable", "unreadable")] {
            let n = r?[key]?.int64 ?? 0
            if n > 0 || key != "unreadable" { rejected.append("\(n) \(name)") }
        }
        var line = pad + "source " + source.joined(separator: ", ") + "; rejected: " + rejected.joined(separator: ", ")
        if let garbage = c?["garbageBytes"]?.int64, garbage > 0 { line += "; \(garbage) bytes of garbage" }
        text += line + "\n"
        if let hint = g["hint"]?.string { text += pad + "hint: " + hint + "\n" }
        return text
    }

    /// One decimal: 0.9, 4.2, 12.0.
    static func format(_ d: Double) -> String {
        let tenths = (d * 10).rounded()
        guard tenths.isFinite, abs(tenths) < 1e15 else { return "\(d)" }
        let t = Int64(tenths)
        return "\(t / 10).\(abs(t % 10))"
    }
}
