// `fencepost status --follow`: like `cgps`, the status redrawn about once a second until Ctrl-C
// on a terminal; on a pipe, one line each time something changes (the ages that grow every second
// and the count of fixes, which grow every second, do not count as a change), for `| tee` or a log.
import FencepostJSON
import FencepostAgent
import FencepostLinux
#if canImport(Glibc)
import Glibc
#endif

enum StatusFollow {
    /// How long one poll waits for the agent: signals are read between polls, so Ctrl-C can wait
    /// this long for a stuck agent (then the command fails with 69).
    static let callTimeout: Duration = .seconds(5)

    /// One line summing up the status: what changes when the agent's state does.
    static func summary(_ s: JSONValue) -> String {
        let s = ClientText.printable(s)
        let c = s["clock"], g = s["gps"]
        var parts: [String] = []
        parts.append("clock \(c?["trusted"] == .bool(true) ? "trusted" : "untrusted") (\(c?["source"]?.string ?? "?"))")
        var gps = "gps \(g?["connected"] == .bool(true) ? "connected" : "not connected")"
        if let m = g?["mode"]?.string { gps += ", fix \(m)" }
        if let u = g?["satellitesUsed"]?.int64 { gps += ", \(u) used" }
        if let n = g?["satellitesSeen"]?.int64 { gps += "/\(n) seen" }
        if let e = g?["error"]?.double { gps += ", ±\(Int(e.rounded())) m" }
        if let h = g?["hint"]?.string { gps += " (\(h))" }
        parts.append(gps)
        parts.append("pending \(s["pendingTotal"]?.int64 ?? Int64(s["pending"]?.array?.count ?? 0))")   // the total, not the first page
        parts.append("badge \(s["badge"]?.int64 ?? 0) of \(s["delivered"]?.int64 ?? 0) delivered")
        return parts.joined(separator: "; ")
    }

    /// Polls `status` about every `intervalMilliseconds` until SIGINT (Ctrl-C), SIGTERM or
    /// SIGHUP, or until the reader of standard output goes away (a closed pipe is noticed while
    /// nothing changes, not only at the next write). `ask` is one status call.
    ///
    /// The signals are blocked and read from a signalfd while the loop waits, so they end it
    /// even when the parent left them blocked or ignored (a test runner, a shell's background
    /// job): with a plain `sleep` such a Ctrl-C was lost and the command never ended.
    static func run(terminal: Bool, intervalMilliseconds: Int32 = 1000,
                    ask: () throws(ClientFailure) -> JSONValue) throws(ClientFailure) {
        let signals: SignalReceiver
        do { signals = try SignalReceiver() } catch {
            throw ClientFailure(1, "cannot receive SIGINT/SIGTERM: \(error)")
        }
        var previous: String?
        while true {
            let s = try ask()
            if terminal {
                // Home, clear the screen, the whole text: a redraw like cgps.
                try writeStandardOutput("\u{1B}[H\u{1B}[2J" + StatusCommand.text(s) + "\n(every second; Ctrl-C to stop)\n")
            } else {
                let line = summary(s)
                if line != previous {
                    try writeStandardOutput("\(PrintableText.escaped(s["clock"]?["wall"]?.string ?? "?"))  \(line)\n")
                    previous = line
                }
            }
            let end: SignalReceiver.PauseEnd
            do { end = try signals.pause(milliseconds: intervalMilliseconds, watching: .standardOutput) } catch {
                throw ClientFailure(ClientFailure.ioError, "waiting for the next poll: \(error)")
            }
            switch end {
            case .timedOut: continue
            case .signal, .outputClosed: return
            }
        }
    }
}
