#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif hasFeature(Embedded)
import CLibm
#endif

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny, fast, seedable generator.
///
/// Every seeded simulation, test and benchmark workload in Fencepost draws from this one type, so a
/// failure that prints its seed can be replayed exactly. Not for anything secret.
public struct SplitMix64: RandomNumberGenerator, Hashable, Sendable {
    public var state: UInt64

    @inlinable
    public init(seed: UInt64) { state = seed }

    /// - Complexity: O(1): one add, two multiplies, three shifts.
    @inlinable
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A generator for the `index`-th independent stream derived from `seed` (shards, cases).
    public static func stream(seed: UInt64, index: UInt64) -> SplitMix64 {
        var g = SplitMix64(seed: seed ^ (index &* 0xD1B5_4A32_D192_ED03))
        _ = g.next()
        return SplitMix64(seed: g.next())
    }

    /// A value in `0 ..< bound` (bound > 0).
    @inlinable
    public mutating func below(_ bound: UInt64) -> UInt64 { UInt64.random(in: 0 ..< bound, using: &self) }

    /// A value in `range`.
    @inlinable
    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        // What Int.random(in:using:) does on a 64-bit machine, with 64-bit draws on every machine:
        // the stdlib draws a word (UInt), so a 32-bit board got other numbers from the same seed
        // (found by the armhf build's self-check digest).
        let delta = UInt64(bitPattern: Int64(range.upperBound) &- Int64(range.lowerBound))
        if delta == UInt64.max { return Int(truncatingIfNeeded: next()) }
        return Int(truncatingIfNeeded: Int64(range.lowerBound) &+ Int64(bitPattern: next(upperBound: delta &+ 1)))
    }

    /// `true` with probability `p`.
    @inlinable
    public mutating func chance(_ p: Double) -> Bool { Double.random(in: 0 ..< 1, using: &self) < p }

    /// One element of a non-empty array.
    @inlinable
    public mutating func pick<T>(_ xs: [T]) -> T { xs[int(0 ... xs.count - 1)] }

    /// Uniform in `[lo, hi)`.
    @inlinable
    public mutating func uniform(_ lo: Double, _ hi: Double) -> Double { Double.random(in: lo ..< hi, using: &self) }

    /// Standard normal (Box–Muller).
    @inlinable
    public mutating func gaussian() -> Double {
        let u1 = max(uniform(0, 1), 1e-300), u2 = uniform(0, 1)
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}
