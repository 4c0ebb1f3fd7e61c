// InputRanges: the one place where every duration, instant and distance that comes from outside
// (request JSON on the control socket, the TOML configuration, GeoJSON zones, rows of the state
// file, the command line) is range-checked before it is used (design §8, "bounded everything").
//
// Why bounds at all: a value the code can hold is not one it can compute with. A snooze of 2⁶³ s
// becomes milliseconds, then nanoseconds in a UInt64, and traps; a dwell of 1e300 s is a deadline
// that no clock can be armed for; a radius of 1e-300 m is a zone no fix can ever be decided in.
// The bounds below are generous for every real use and small enough that the arithmetic done with
// the values (sums of a few of them with an instant, in milliseconds or nanoseconds since boot or
// since 1970) provably stays inside Int64/UInt64:
//
//   durations   0 … 316,224,000 s (ten 366-day years): × 10⁹ = 3.2e17 ns  < 9.2e18 (Int64.max)
//   instants    1970-01-01 … 9999-12-31T23:59:59Z (0 … 253,402,300,799 s): × 10³ = 2.5e14 ms
//   distances   radius ≥ 1 m (a fix is never better than that), finite
//
// Instants in nanoseconds (the simulation's clock) only reach 2262-04-11; ``nanoseconds(_:)``
// saturates, and callers that need more say so (``latestNanosecondInstant``). Where arithmetic on
// stored values can still exceed a type — a count of fires times an interval from a state file
// that was edited — it goes through ``SaturatingTime``.

/// A value from outside that is out of its range; names the field.
public struct RangeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The field as the user wrote it (`trigger.location.dwell`, `category.actions[0].snoozeSeconds`).
    public var field: String
    public var message: String
    public init(field: String, message: String) { self.field = field; self.message = message }
    public var description: String { "\(field) \(message)" }
}

/// Bounds and checks for outside durations, instants and distances (see the file's head).
public enum InputRanges {
    /// The longest duration accepted, seconds: ten 366-day years.
    public static let maximumDurationSeconds: Int64 = 10 * 366 * 86_400
    /// The earliest instant accepted, seconds since 1970.
    public static let earliestInstant: Int64 = 0
    /// The latest instant accepted, seconds since 1970: 9999-12-31T23:59:59Z.
    public static let latestInstant: Int64 = 253_402_300_799
    /// The latest instant a clock of Int64 nanoseconds since 1970 holds: 2262-04-11T23:47:16Z.
    public static let latestNanosecondInstant: Int64 = Int64.max / 1_000_000_000
    /// The smallest radius of a zone, metres.
    public static let minimumRadius = 1.0

    /// A duration in seconds (a fraction allowed): finite, ≥ `minimum`, ≤ the maximum duration.
    /// - Throws: ``RangeError`` naming `field` (NaN, infinities, negative, too large).
    public static func duration(_ value: Double, _ field: String, minimum: Double = 0) throws(RangeError) -> Double {
        guard value.isFinite else { throw RangeError(field: field, message: "must be a number of seconds, got \(value)") }
        guard value >= minimum else {
            throw RangeError(field: field, message: minimum == 0 ? "must be ≥ 0 seconds, got \(text(value))"
                                                                 : "must be at least \(text(minimum)) seconds, got \(text(value))")
        }
        guard value <= Double(maximumDurationSeconds) else {
            throw RangeError(field: field, message: "must be at most \(maximumDurationSeconds) seconds (ten years), got \(text(value))")
        }
        return value
    }

    /// A whole number of seconds: ≥ `minimum`, ≤ the maximum duration.
    public static func duration(seconds value: Int64, _ field: String, minimum: Int64 = 0) throws(RangeError) -> Int64 {
        guard value >= minimum else {
            throw RangeError(field: field, message: minimum == 0 ? "must be ≥ 0 seconds, got \(value)"
                                                                 : "must be at least \(minimum) seconds, got \(value)")
        }
        guard value <= maximumDurationSeconds else {
            throw RangeError(field: field, message: "must be at most \(maximumDurationSeconds) seconds (ten years), got \(value)")
        }
        return value
    }

    /// An instant in seconds since 1970: between 1970 and the end of 9999 (`latest` may lower it).
    public static func instant(_ seconds: Int64, _ field: String, latest: Int64 = latestInstant) throws(RangeError) -> Int64 {
        guard seconds >= earliestInstant, seconds <= latest else {
            throw RangeError(field: field, message: "must be an instant from 1970-01-01T00:00:00Z to \(WallInstant(secondsSinceEpoch: latest)), got \(seconds) s since 1970")
        }
        return seconds
    }

    /// A count (of fires, a generation): 0 … `maximum`.
    public static func count(_ value: Int64, _ field: String, maximum: Int64 = 1 << 53) throws(RangeError) -> Int64 {
        guard value >= 0, value <= maximum else { throw RangeError(field: field, message: "must be 0…\(maximum), got \(value)") }
        return value
    }

    /// A radius in metres: finite, ≥ 1 m, ≤ `maximum`.
    public static func radius(_ value: Double, _ field: String, maximum: Double) throws(RangeError) -> Double {
        guard value.isFinite, value >= minimumRadius else {
            throw RangeError(field: field, message: "must be at least \(text(minimumRadius)) m, got \(text(value))")
        }
        guard value <= maximum else { throw RangeError(field: field, message: "must be at most \(text(maximum)) m, got \(text(value))") }
        return value
    }

    static func text(_ d: Double) -> String {
        if let i = Int64(exactly: d) { return "\(i)" }
        return "\(d)"
    }
}

/// Time arithmetic that saturates instead of trapping: for values that passed ``InputRanges`` it
/// never saturates (see the bounds there); for anything else it clamps, and a clamped deadline is
/// simply one that never comes.
public enum SaturatingTime {
    /// a + b, clamped to Int64.
    @inlinable public static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (r, o) = a.addingReportingOverflow(b)
        return o ? (b > 0 ? .max : .min) : r
    }

    /// a − b, clamped to Int64.
    @inlinable public static func subtract(_ a: Int64, _ b: Int64) -> Int64 {
        let (r, o) = a.subtractingReportingOverflow(b)
        return o ? (b < 0 ? .max : .min) : r
    }

    /// a × b, clamped to Int64.
    @inlinable public static func multiply(_ a: Int64, _ b: Int64) -> Int64 {
        let (r, o) = a.multipliedReportingOverflow(by: b)
        return o ? ((a < 0) == (b < 0) ? .max : .min) : r
    }

    /// a × b, clamped to UInt64.
    @inlinable public static func multiply(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (r, o) = a.multipliedReportingOverflow(by: b)
        return o ? .max : r
    }

    /// a + b, clamped to UInt64.
    @inlinable public static func add(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (r, o) = a.addingReportingOverflow(b)
        return o ? .max : r
    }

    /// Seconds (a Double) as UInt64 nanoseconds, rounded up: NaN and negatives are 0, values past
    /// UInt64 are UInt64.max.
    @inlinable public static func nanosecondsRoundedUp(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        let ns = (seconds * 1e9).rounded(.up)
        return ns < 18_446_744_073_709_549_568.0 ? UInt64(ns) : .max
    }

    /// A Double as Int64, clamped (NaN is 0).
    @inlinable public static func int64(_ value: Double) -> Int64 {
        guard !value.isNaN else { return 0 }
        if value >= 9_223_372_036_854_774_784.0 { return .max }
        if value <= -9_223_372_036_854_775_808.0 { return .min }
        return Int64(value)
    }
}
