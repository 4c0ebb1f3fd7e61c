// How long each turn of the daemon's loop takes, and what it spent it on: a turn over 50 ms
// delays every buzzer due in it and, repeated, the systemd watchdog. The daemon logs a warning
// naming the slow parts, and the longest turn at the end (the soak harness reads it).
//
// Each turn and each part is measured twice: wall time (CLOCK_BOOTTIME) and the loop thread's
// CPU time (CLOCK_THREAD_CPUTIME_ID). Wall time is what a buzzer waits; CPU time is the agent's
// own work. A turn slow on the wall but light on the CPU was preempted (an overloaded machine)
// or waited in the kernel (an fsync); a turn heavy on the CPU is work to bound in the code.
// The two are counted apart, and the summary at the end gives both.
//
// A delay can also come before a turn: the loop waits in epoll_wait for a timer, the timer is
// due, and the kernel runs the agent late (the CPU went to interrupts or a task above the agent's
// real-time priority, or the whole machine stalled: a virtual CPU the host did not run). No turn
// is slow, yet a buzzer step due then starts that late. A wake over the threshold after its
// timer was due is logged and counted as well, measured from the later of the deadline and the
// end of the turn before (a turn that ran past the deadline is its own warning).

/// Times one loop turn at a time, and how late the loop woke for its timers. Bounded: the parts
/// of one turn, at most `maximumParts`, are kept until the turn ends.
struct LoopTurnWatch {
    /// A turn longer than this is logged (nanoseconds, wall or CPU).
    var threshold: UInt64 = 50_000_000
    /// Parts shorter than this are not named.
    var partThreshold: UInt64 = 1_000_000
    let maximumParts = 8
    private var start: UInt64 = 0
    private var startCPU: UInt64 = 0
    private var parts: [(what: String, nanoseconds: UInt64, cpu: UInt64)] = []
    /// The longest turn so far (wall), its CPU time and what it did.
    private(set) var longest: (nanoseconds: UInt64, cpu: UInt64, what: String)?
    /// The turn with the most CPU time so far, its wall time and what it did.
    private(set) var mostCPU: (cpu: UInt64, nanoseconds: UInt64, what: String)?
    /// Turns over ``threshold`` on the wall clock.
    private(set) var slowTurns = 0
    /// Turns whose own work (CPU time) passed ``threshold``.
    private(set) var slowOnCPU = 0
    /// The warning lines about slow turns: one repeating condition, cleared once turns have been
    /// fast for the limiter's interval.
    var slowLines = RepeatLimiter()
    /// When the last slow turn ended.
    private(set) var lastSlow: UInt64 = 0
    /// The longest turn since ``resetLongestSinceMark()`` (a zone-set build began), nanoseconds.
    private(set) var longestSinceMark: UInt64 = 0
    /// When the last turn ended.
    private var lastEnd: UInt64 = 0
    /// The wakes over ``threshold`` after their timer was due.
    var late = LateWakes()

    /// A turn begins (after `epoll_wait` returned) at `now`, with the thread's CPU time `cpu`.
    mutating func begin(at now: UInt64, cpu: UInt64) {
        start = now
        startCPU = cpu
        parts.removeAll(keepingCapacity: true)
    }

    /// The turn begun was woken for a timer due at `due`: returns the warning when the turn began
    /// over ``threshold`` after the later of `due` and the end of the turn before.
    mutating func woke(due: UInt64) -> String? {
        let from = max(due, lastEnd)
        guard start > from, start - from > threshold else { return nil }
        let late = start - from
        self.late.record(late, at: start)
        return "woke \(Self.milliseconds(late)) after a timer was due (the agent was waiting, not running: "
            + "the CPU went to the kernel or a task above the agent, or the machine stalled); what was due then starts that late"
    }

    /// One part of the turn took from `from` to `to` (wall) and `cpu` nanoseconds of CPU; `what`
    /// is built only when it is long.
    mutating func note(_ what: () -> String, from: UInt64, to: UInt64, cpu: UInt64) {
        let d = to >= from ? to - from : 0
        guard d >= partThreshold || cpu >= partThreshold else { return }
        if parts.count == maximumParts {
            guard let i = parts.indices.min(by: { parts[$0].nanoseconds < parts[$1].nanoseconds }), parts[i].nanoseconds < d else { return }
            parts.remove(at: i)
        }
        parts.append((what(), d, cpu))
    }

    /// The turn ends; returns the warning to log when it took longer than ``threshold`` on the
    /// wall or the CPU. The text is made only for such a turn or a new longest one.
    mutating func end(at now: UInt64, cpu nowCPU: UInt64) -> String? {
        let d = now >= start ? now - start : 0
        let cpu = nowCPU >= startCPU ? nowCPU - startCPU : 0
        lastEnd = now
        longestSinceMark = max(longestSinceMark, d)
        let isLongest = d > (longest?.nanoseconds ?? 0)
        let isMostCPU = cpu > (mostCPU?.cpu ?? 0)
        guard isLongest || isMostCPU || d > threshold || cpu > threshold else { return nil }
        let text = parts.isEmpty ? "nothing over 1 ms"
            : parts.map { "\($0.what) \(Self.milliseconds($0.nanoseconds)) (CPU \(Self.milliseconds($0.cpu)))" }.joined(separator: ", ")
        if isLongest { longest = (d, cpu, text) }
        if isMostCPU { mostCPU = (cpu, d, text) }
        guard d > threshold || cpu > threshold else { return nil }
        slowTurns += d > threshold ? 1 : 0
        slowOnCPU += cpu > threshold ? 1 : 0
        lastSlow = now
        let cause = cpu > threshold ? "the agent's own work" : "off the CPU (preempted, or waiting in the kernel)"
        return "loop turn took \(Self.milliseconds(d)), \(Self.milliseconds(cpu)) of it on the CPU (\(cause)): \(text)"
    }

    /// The summary at the end: the longest turn, the counts, the late wakes (when any), the turn
    /// with the most CPU time.
    var summary: String? {
        guard let l = longest else { return nil }
        var line = "longest loop turn: \(Self.milliseconds(l.nanoseconds)), \(Self.milliseconds(l.cpu)) on the CPU (\(l.what)); "
            + "\(slowTurns) turns over \(threshold / 1_000_000) ms, \(slowOnCPU) with over \(threshold / 1_000_000) ms on the CPU"
        if late.count > 0 { line += "; \(late.count) wakes over \(threshold / 1_000_000) ms after their timer, the longest \(Self.milliseconds(late.longest))" }
        if let c = mostCPU { line += "; the most CPU in one turn: \(Self.milliseconds(c.cpu)) of \(Self.milliseconds(c.nanoseconds)) (\(c.what))" }
        return line
    }

    /// Whether the slow-turn condition may be logged as cleared at `now` (it is on, and no turn
    /// was slow for the limiter's interval).
    func slowLinesMayClear(at now: UInt64) -> Bool {
        slowLines.isActive && now &- lastSlow >= slowLines.interval
    }

    /// Starts measuring ``longestSinceMark`` again.
    mutating func resetLongestSinceMark() { longestSinceMark = 0 }

    /// `12.3 ms`.
    static func milliseconds(_ ns: UInt64) -> String {
        let tenths = (ns + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10) ms"
    }
}

/// The loop's wakes over the threshold after their timer was due: how many, the longest delay,
/// and the warning's repeat limiter, cleared after a quiet interval like the slow turns'.
struct LateWakes {
    private(set) var count = 0
    /// The longest delay of them, nanoseconds.
    private(set) var longest: UInt64 = 0
    var lines = RepeatLimiter()
    /// When the last one was.
    private(set) var last: UInt64 = 0

    /// A wake `late` nanoseconds after its deadline, at `now`.
    mutating func record(_ late: UInt64, at now: UInt64) {
        count += 1
        longest = max(longest, late)
        last = now
    }

    /// Whether the late-wake warning may be logged as cleared at `now` (it is on, and no wake was
    /// late for the limiter's interval).
    func mayClear(at now: UInt64) -> Bool {
        lines.isActive && now &- last >= lines.interval
    }
}
