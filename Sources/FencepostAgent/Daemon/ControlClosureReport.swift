// The control socket's connections closed early or refused, told in one summary log line rather
// than a line each: a burst of 1,000 misbehaving clients is one line, then at most one a minute
// (a RepeatLimiter), and a line when the condition has been quiet for a minute.

/// Counts of connections closed early or refused since the last summary line, and when to write it.
struct ControlClosureReport {
    /// Why a connection was closed early.
    enum Reason { case idle, slow, incomplete, evicted }

    private var idle = 0, slow = 0, incomplete = 0, evicted = 0
    private var refused = 0
    /// The last peer refused (uid and pid, or why its credentials were unreadable).
    private var lastRefused = ""
    private var lines = RepeatLimiter()
    /// When the last closure or refusal was counted (the condition clears a minute after it).
    private var lastCounted: UInt64 = 0
    /// Closures and refusals counted when the limiter was last told of an occurrence.
    private var seen = 0

    private var total: Int { idle + slow + incomplete + evicted + refused }

    mutating func count(_ reason: Reason) {
        switch reason {
        case .idle: idle += 1
        case .slow: slow += 1
        case .incomplete: incomplete += 1
        case .evicted: evicted += 1
        }
    }

    /// A peer refused: `who` names it in the next line.
    mutating func countRefusal(_ who: String) {
        refused += 1
        lastRefused = who
    }

    /// When a line held back is due (the loop wakes then), nil when none is.
    var heldLineDue: UInt64? { lines.heldLineDue }

    /// One log line for what was counted since the last line written: at once when the condition
    /// starts, then at most once a minute. A loop turn that counted new closures is one
    /// occurrence for the limiter; what it holds back stays in the counts and is written when its
    /// minute is up (``heldLineDue``) or at stop (``flush(log:limits:connectionCap:)``), so none
    /// is lost and none is counted twice.
    mutating func report(now: UInt64, log: DaemonLog, limits: ControlLimits, connectionCap: Int) {
        if total == 0 {
            if lines.isActive && now &- lastCounted >= lines.interval {
                log.cleared("control: no more connections refused or closed early", limiter: &lines, at: now)
            }
            return
        }
        let counted = total > seen
        if counted { seen = total; lastCounted = now }
        if lines.summary(counted: counted, at: now) { write(log: log, limits: limits, connectionCap: connectionCap) }
    }

    /// Writes what a rate-limited line still holds back (at stop).
    mutating func flush(log: DaemonLog, limits: ControlLimits, connectionCap: Int) {
        if total > 0 { write(log: log, limits: limits, connectionCap: connectionCap) }
    }

    /// Writes the closures and refusals counted since the last line, and starts counting afresh.
    private mutating func write(log: DaemonLog, limits: ControlLimits, connectionCap: Int) {
        var parts: [String] = []
        if refused > 0 { parts.append("\(refused) refused (not allowed to connect; last \(lastRefused))") }
        if idle > 0 { parts.append("\(idle) idle for \(limits.idleTimeout / 1_000_000_000) s") }
        if incomplete > 0 { parts.append("\(incomplete) with a line unfinished after \(limits.requestTimeout / 1_000_000_000) s") }
        if slow > 0 { parts.append("\(slow) not reading their answers for \(limits.writeTimeout / 1_000_000_000) s") }
        if evicted > 0 { parts.append("\(evicted) least recently active closed at the cap of \(connectionCap) connections") }
        log.warning("control: connections closed: " + parts.joined(separator: ", "))
        idle = 0; slow = 0; incomplete = 0; evicted = 0
        refused = 0
        seen = 0
    }
}
