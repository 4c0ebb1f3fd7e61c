import SeededRandom
import Testing

/// `SplitMix64.int` draws 64 bits on every machine. On this 64-bit machine it gives what the
/// stdlib's `Int.random(in:using:)` gives (so no seeded simulation or test changes here), and the
/// armhf build gets the same numbers (the stdlib's draws a word: other numbers on 32 bits).
@Suite struct SeededRandomWordSizeTests {
    @Test func intMatchesTheStdlibOn64BitMachines() {
        let seed: UInt64 = 20_261_124
        var ranges: [ClosedRange<Int>] = [0 ... 0, 0 ... 1, -5 ... 5, 1990 ... 2037, 0 ... 31_000_000, Int.min ... Int.max, -1 ... Int.max]
        var shapes = SplitMix64(seed: seed ^ 1)
        for _ in 0 ..< 200 {
            let a = Int(truncatingIfNeeded: shapes.next()) >> Int(shapes.next() % 60)
            let b = Int(truncatingIfNeeded: shapes.next()) >> Int(shapes.next() % 60)
            ranges.append(min(a, b) ... max(a, b))
        }
        var ours = SplitMix64(seed: seed), stdlib = SplitMix64(seed: seed)
        for (k, r) in ranges.enumerated() {
            for _ in 0 ..< 20 {
                let x = ours.int(r), y = Int.random(in: r, using: &stdlib)
                #expect(x == y, "seed \(seed), range \(k) \(r)")
                #expect(r.contains(x))
            }
        }
        var p = SplitMix64(seed: seed), q = SplitMix64(seed: seed)
        let xs = Array(0 ..< 37)
        for _ in 0 ..< 100 { #expect(p.pick(xs) == xs[Int.random(in: 0 ..< xs.count, using: &q)], "seed \(seed)") }
    }
}
