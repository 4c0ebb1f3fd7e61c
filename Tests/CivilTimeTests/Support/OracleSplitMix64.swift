/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, seedable generator. The calendar oracle's
/// random cases are a pure function of its seed, so any failure can be replayed with
/// `FENCEPOST_ORACLE_SEED=<seed>`.
struct OracleSplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A derived generator for the `index`-th independent stream (shards, cases).
    static func stream(seed: UInt64, index: UInt64) -> OracleSplitMix64 {
        var g = OracleSplitMix64(seed: seed ^ (index &* 0xD1B5_4A32_D192_ED03))
        _ = g.next()
        return OracleSplitMix64(seed: g.next())
    }

    /// true with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }

    mutating func int(_ r: ClosedRange<Int>) -> Int { Int.random(in: r, using: &self) }

    mutating func pick<T>(_ xs: [T]) -> T { xs[Int.random(in: 0..<xs.count, using: &self)] }
}
