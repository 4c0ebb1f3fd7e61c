// A repeating condition in the log: a missing GPS retried every 2 s would write 43,200 lines a
// day. The limiter decides which occurrences are written: the first (the condition starts), then
// at most one per interval carrying the count since the previous line, and the end (it clears).
// Time is an argument (nanoseconds of the caller's monotonic clock); the limiter reads no clock,
// so tests drive it in virtual time.

/// Which occurrences of one repeating condition are logged.
///
/// Lines: ``occurred(at:)`` → `.first` when the condition starts; afterwards `.repeated` at most
/// once per ``interval`` (with the occurrences since the previous line, this one included), else
/// `.suppressed`. ``clear(at:)`` ends the condition and reports its total, once.
///
/// - Complexity: O(1) per call, no allocation.
public struct RepeatLimiter: Sendable {
    /// At most one `.repeated` line per this many nanoseconds (default one minute).
    public let interval: UInt64
    /// Whether the condition is on (it occurred and has not cleared).
    public private(set) var isActive = false
    /// When the condition started.
    public private(set) var startedAt: UInt64 = 0
    /// When the last line (first or repeated) was allowed.
    private var lastLineAt: UInt64 = 0
    /// Occurrences since the last line allowed.
    private var unlogged = 0
    /// Occurrences since the condition started.
    public private(set) var occurrences = 0

    /// What to do with one occurrence.
    public enum Decision: Equatable, Sendable {
        /// The condition starts: log the line.
        case first
        /// Log the line with `count` occurrences over the last `seconds` (since the previous line).
        case repeated(count: Int, seconds: UInt64)
        /// Do not log.
        case suppressed
    }

    /// A condition that ended.
    public struct End: Equatable, Sendable {
        /// How many times it occurred in all.
        public var occurrences: Int
        /// From its start to its end, whole seconds.
        public var seconds: UInt64

        public init(occurrences: Int, seconds: UInt64) { self.occurrences = occurrences; self.seconds = seconds }
    }

    /// - Parameter interval: nanoseconds between repeated lines (at least 1).
    public init(interval: UInt64 = 60_000_000_000) {
        self.interval = max(interval, 1)
    }

    /// Counts one occurrence at `now` and says whether to log it.
    public mutating func occurred(at now: UInt64) -> Decision {
        defer { checkInvariants() }
        guard isActive else {
            isActive = true
            startedAt = now
            lastLineAt = now
            unlogged = 0
            occurrences = 1
            return .first
        }
        occurrences += 1
        unlogged += 1
        // A clock that seems to go back (it should not) counts as no time passed.
        let elapsed = now >= lastLineAt ? now - lastLineAt : 0
        guard elapsed >= interval else { return .suppressed }
        let count = unlogged
        unlogged = 0
        lastLineAt = now
        return .repeated(count: count, seconds: elapsed / 1_000_000_000)
    }

    /// When the occurrences held back since the last line may be written (the last line plus
    /// ``interval``); nil when none are held. A caller that summarises what it held (counts it
    /// kept itself) wakes then and calls ``flush(at:)``, so nothing waits for the next occurrence.
    public var heldLineDue: UInt64? {
        isActive && unlogged > 0 ? lastLineAt &+ interval : nil
    }

    /// Allows the line for the occurrences held back when their interval is up: true (log them;
    /// they count as written) or false (not yet, or none held). Counts no occurrence.
    public mutating func flush(at now: UInt64) -> Bool {
        defer { checkInvariants() }
        guard let due = heldLineDue, now >= due else { return false }
        unlogged = 0
        lastLineAt = now
        return true
    }

    /// For a caller that keeps its own counts and writes one summary line of them (connections
    /// closed, deliveries not given to the hook): `counted` says whether new counts arrived since
    /// the last call (one occurrence). True: write the summary now, then start the counts afresh;
    /// false: keep counting (the line is due at ``heldLineDue``).
    public mutating func summary(counted: Bool, at now: UInt64) -> Bool {
        guard counted else { return flush(at: now) }
        if case .suppressed = occurred(at: now) { return false }
        return true
    }

    /// Ends the condition at `now`: its totals when it was active (log them), nil when it was not.
    public mutating func clear(at now: UInt64) -> End? {
        defer { checkInvariants() }
        guard isActive else { return nil }
        isActive = false
        let end = End(occurrences: occurrences, seconds: (now >= startedAt ? now - startedAt : 0) / 1_000_000_000)
        occurrences = 0
        unlogged = 0
        return end
    }

    private func checkInvariants() {
        #if DEBUG
        assert(isActive || (occurrences == 0 && unlogged == 0), "an inactive condition has no count")
        assert(!isActive || (occurrences >= 1 && unlogged < occurrences), "an active condition occurred at least once, and its first line was logged")
        #endif
    }
}
