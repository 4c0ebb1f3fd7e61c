import SeededRandom

/// How long to wait before reconnecting to a source that failed: `initial` (1 s), doubling, capped
/// at `maximum` (30 s); back to `initial` after a success.
///
///     var backoff = ReconnectBackoff()
///     // connect failed or the connection dropped:
///     let wakeAt = now + backoff.nextDelay()      // 1 s, 2 s, 4 s … 30 s, 30 s
///     // a connection delivered a fix:
///     backoff.reset()
///
/// Reset on a delivered fix rather than on a bare connect, so that a gpsd that accepts and then drops
/// connections is not hammered every second.
///
/// Without a seed the delays are exact (one device, one gpsd). With `jitterSeed` each delay is drawn
/// uniformly from [d/2, d] for the step d (equal jitter), from a ``SplitMix64`` stream of that seed:
/// a hundred boards that lost the broker at the same moment do not all come back at the same second.
///
///     var backoff = ReconnectBackoff(initial: 1 s, maximum: 60 s, jitterSeed: seed)
///     retryAt = now + backoff.nextDelay()         // 0.5–1 s, 1–2 s, 2–4 s … 30–60 s
///
/// Pure: no clock, nanoseconds in and out.
public struct ReconnectBackoff: Hashable, Sendable {
    /// First delay, nanoseconds.
    public let initial: UInt64
    /// Largest delay, nanoseconds.
    public let maximum: UInt64
    /// Failures since the last reset.
    public private(set) var failures: Int = 0
    private var current: UInt64
    /// The jitter stream's state (``SplitMix64/state``); nil: no jitter.
    private var jitter: UInt64?

    /// - Precondition: `0 < initial <= maximum`.
    public init(initial: UInt64 = 1_000_000_000, maximum: UInt64 = 30_000_000_000, jitterSeed: UInt64? = nil) {
        precondition(initial > 0 && initial <= maximum, "need 0 < initial <= maximum")
        self.initial = initial
        self.maximum = maximum
        current = initial
        jitter = jitterSeed
    }

    /// Records a failure and returns the delay before the next attempt: the current step d, or
    /// with jitter a draw from [d/2, d].
    ///
    /// - Complexity: O(1).
    public mutating func nextDelay() -> UInt64 {
        let delay = current
        failures += 1
        current = current > maximum / 2 ? maximum : min(current * 2, maximum)
        guard let state = jitter else { return delay }
        var random = SplitMix64(seed: state)
        let half = delay / 2
        let drawn = half + random.below(delay - half + 1)
        jitter = random.state
        return drawn
    }

    /// The step of the next failure (its delay without jitter), without recording one.
    public var peekDelay: UInt64 { current }

    /// After a success: the next failure waits `initial` again.
    public mutating func reset() {
        failures = 0
        current = initial
    }
}
