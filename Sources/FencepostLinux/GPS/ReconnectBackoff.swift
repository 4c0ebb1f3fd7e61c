/// How long to wait before reconnecting to a source that failed: 1 s, doubling, capped at 30 s;
/// back to 1 s after a success. Deterministic (no jitter: one device, one gpsd).
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
/// Pure: no clock, nanoseconds in and out.
public struct ReconnectBackoff: Hashable, Sendable {
    /// First delay, nanoseconds.
    public let initial: UInt64
    /// Largest delay, nanoseconds.
    public let maximum: UInt64
    /// Failures since the last reset.
    public private(set) var failures: Int = 0
    private var current: UInt64

    /// - Precondition: `0 < initial <= maximum`.
    public init(initial: UInt64 = 1_000_000_000, maximum: UInt64 = 30_000_000_000) {
        precondition(initial > 0 && initial <= maximum, "need 0 < initial <= maximum")
        self.initial = initial
        self.maximum = maximum
        current = initial
    }

    /// Records a failure and returns the delay before the next attempt.
    ///
    /// - Complexity: O(1).
    public mutating func nextDelay() -> UInt64 {
        let delay = current
        failures += 1
        current = current > maximum / 2 ? maximum : min(current * 2, maximum)
        return delay
    }

    /// The delay the next failure will get, without recording one.
    public var peekDelay: UInt64 { current }

    /// After a success: the next failure waits `initial` again.
    public mutating func reset() {
        failures = 0
        current = initial
    }
}
