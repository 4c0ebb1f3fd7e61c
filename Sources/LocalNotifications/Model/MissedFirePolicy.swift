// What happens to fires that fell due while the agent could not deliver them (design §5).

/// What to do with fires of a request that were missed — the device was off, the process down,
/// the wall clock stepped over them, or the clock was untrusted when they fell due. Whatever the
/// policy, every missed fire is accounted for in an ``Outcome``; none disappears silently.
///
/// A fire is late by the time between its due instant and the instant the agent woke to handle
/// it. When more fires are due at one wake than a loop turn handles
/// (``EngineConfiguration/firesPerTurn``), the rest are handled in the next turns but judged as
/// of that wake: the same outcome, delivery time and order as if all were handled at once.
public enum MissedFirePolicy: Hashable, Sendable {
    /// Deliver the most recent missed fire late if it is at most `graceSeconds` old; record the
    /// others (and that one, when older) as `missed`.
    case deliverLate(graceSeconds: Int64)
    /// Deliver one notification that stands for all missed fires (outcome `coalesced`, with the count).
    case coalesce
    /// Deliver none; record them as `missed`.
    case skip

    /// The default: one late delivery for any number of missed fires.
    public static let `default` = MissedFirePolicy.coalesce
}
