// How long each turn of the daemon's loop takes, and what it spent it on: a turn over 50 ms
// delays every buzzer due in it and, repeated, the systemd watchdog. The daemon logs a warning
// naming the slow parts, and the longest turn at the end (the soak harness reads it).

/// Times one loop turn at a time. Bounded: the parts of one turn, at most `maximumParts`, are
/// kept until the turn ends.
struct LoopTurnWatch {
    /// A turn longer than this is logged (nanoseconds).
    var threshold: UInt64 = 50_000_000
    /// Parts shorter than this are not named.
    var partThreshold: UInt64 = 1_000_000
    let maximumParts = 8
    private var start: UInt64 = 0
    private var parts: [(what: String, nanoseconds: UInt64)] = []
    /// The longest turn so far and what it did.
    private(set) var longest: (nanoseconds: UInt64, what: String)?
    /// Turns over ``threshold``.
    private(set) var slowTurns = 0
    /// The warning lines about slow turns: one repeating condition, cleared once turns have been
    /// fast for the limiter's interval.
    var slowLines = RepeatLimiter()
    /// When the last slow turn ended.
    private(set) var lastSlow: UInt64 = 0
    /// The longest turn since ``resetLongestSinceMark()`` (a zone-set build began), nanoseconds.
    private(set) var longestSinceMark: UInt64 = 0

    /// A turn begins (after `epoll_wait` returned).
    mutating func begin(at now: UInt64) {
        start = now
        parts.removeAll(keepingCapacity: true)
    }

    /// One part of the turn took from `from` to `to`; `what` is built only when it is long.
    mutating func note(_ what: () -> String, from: UInt64, to: UInt64) {
        let d = to >= from ? to - from : 0
        guard d >= partThreshold else { return }
        if parts.count == maximumParts {
            guard let i = parts.indices.min(by: { parts[$0].nanoseconds < parts[$1].nanoseconds }), parts[i].nanoseconds < d else { return }
            parts.remove(at: i)
        }
        parts.append((what(), d))
    }

    /// The turn ends; returns the warning to log when it took longer than ``threshold``. The text
    /// is made only for a slow turn or a new longest one.
    mutating func end(at now: UInt64) -> String? {
        let d = now >= start ? now - start : 0
        longestSinceMark = max(longestSinceMark, d)
        let isLongest = d > (longest?.nanoseconds ?? 0)
        guard isLongest || d > threshold else { return nil }
        let text = parts.isEmpty ? "nothing over 1 ms" : parts.map { "\($0.what) \(Self.milliseconds($0.nanoseconds))" }.joined(separator: ", ")
        if isLongest { longest = (d, text) }
        guard d > threshold else { return nil }
        slowTurns += 1
        lastSlow = now
        return "loop turn took \(Self.milliseconds(d)): \(text)"
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
