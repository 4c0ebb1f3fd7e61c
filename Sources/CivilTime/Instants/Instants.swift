/// An instant on the wall clock: whole seconds since 1970-01-01T00:00:00Z (UTC, leap seconds not
/// counted, as POSIX `time_t`).
///
/// Wall instants are what gets persisted and what calendar triggers fire at. They are a different
/// type from ``MonotonicInstant`` so that the two clocks cannot be mixed up (design §2).
public struct WallInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Seconds since the Unix epoch.
    public var secondsSinceEpoch: Int64

    @inlinable
    public init(secondsSinceEpoch: Int64) { self.secondsSinceEpoch = secondsSinceEpoch }

    @inlinable
    public static func < (a: WallInstant, b: WallInstant) -> Bool { a.secondsSinceEpoch < b.secondsSinceEpoch }

    /// The instant `seconds` later (or earlier, when negative).
    @inlinable
    public func adding(seconds: Int64) -> WallInstant { WallInstant(secondsSinceEpoch: secondsSinceEpoch + seconds) }

    /// ISO 8601 in UTC with a `Z`, e.g. `2026-03-08T07:00:00Z`.
    public var description: String { CivilDateTime(localSeconds: secondsSinceEpoch).iso8601 + "Z" }
}

/// An instant on the monotonic clock (`CLOCK_BOOTTIME`): nanoseconds since boot.
///
/// Used for interval triggers, dwell and cooldown, which must not move when the wall clock is set.
/// Never persisted: it restarts at every boot.
public struct MonotonicInstant: Hashable, Comparable, Sendable {
    /// Nanoseconds since boot.
    public var nanosecondsSinceBoot: UInt64

    @inlinable
    public init(nanosecondsSinceBoot: UInt64) { self.nanosecondsSinceBoot = nanosecondsSinceBoot }

    @inlinable
    public static func < (a: MonotonicInstant, b: MonotonicInstant) -> Bool {
        a.nanosecondsSinceBoot < b.nanosecondsSinceBoot
    }
}
