import SeededRandom

/// Reconnect delays for a fleet of devices: exponential (doubling from `initial` to `maximum`) with
/// equal jitter — each delay is drawn uniformly from [d/2, d] — so that a hundred boards that lost
/// the broker at the same moment do not all come back at the same second.
///
///     var backoff = MQTTBackoff(initial: 1 s, maximum: 60 s, seed: 42)
///     retryAt = now + backoff.nextDelay()     // 0.5–1 s, 1–2 s, 2–4 s … 30–60 s
///     backoff.reset()                         // after an accepted CONNACK
///
/// Pure: no clock; the jitter comes from a ``SplitMix64`` of its own seed.
public struct MQTTBackoff: Hashable, Sendable {
    public let initial: UInt64
    public let maximum: UInt64
    /// Failures since the last reset.
    public private(set) var failures = 0
    private var current: UInt64
    private var random: SplitMix64

    /// - Precondition: `0 < initial <= maximum`.
    public init(initial: UInt64, maximum: UInt64, seed: UInt64) {
        precondition(initial > 0 && initial <= maximum, "need 0 < initial <= maximum")
        self.initial = initial
        self.maximum = maximum
        current = initial
        random = SplitMix64(seed: seed)
    }

    /// Records a failure and returns the delay before the next attempt, in [d/2, d] for the
    /// current step d.
    ///
    /// - Complexity: O(1).
    public mutating func nextDelay() -> UInt64 {
        let d = current
        failures += 1
        current = current > maximum / 2 ? maximum : min(current * 2, maximum)
        let half = d / 2
        return half + (half == 0 ? 0 : random.next() % (d - half + 1))
    }

    /// After a success: the next failure starts at `initial` again.
    public mutating func reset() {
        failures = 0
        current = initial
    }
}

/// When EPOLLOUT may be armed before the CONNACK (libmosquitto 2.0.11 in an external loop).
///
/// During the TLS handshake the library reports `want_write` while it waits for the server
/// (upstream #3745), and its `loop_write` does nothing until the handshake is done (only
/// `loop_read` drives it): a level-triggered EPOLLOUT would wake the loop without end at 100 % CPU.
/// So before the CONNACK a writable wake is allowed once, then again only after a readable wake
/// (the server answered): writes follow reads one for one, and the 1 s tick drives whatever is left.
/// After the CONNACK, EPOLLOUT follows `want_write` (the socket really has data queued).
public struct HandshakeWriteGate: Hashable, Sendable {
    private var wroteSinceRead = false

    public init() {}

    /// Whether EPOLLOUT may be armed now, given the library's `want_write` and whether the CONNACK came.
    public func allowsWritable(wantWrite: Bool, connected: Bool) -> Bool {
        wantWrite && (connected || !wroteSinceRead)
    }

    /// A writable wake was handled.
    public mutating func wrote() { wroteSinceRead = true }
    /// A readable wake was handled.
    public mutating func read() { wroteSinceRead = false }
    /// A new socket: its first writable wake (the TCP connect done) is needed.
    public mutating func reset() { wroteSinceRead = false }
}
