import RecentIDs
import SeededRandom
import Testing

@Suite("RecentMemory")
struct RecentMemoryTests {
    /// A key written again stays when its older write is evicted, with its newer value
    /// (a request removed, re-added and removed again must not be forgotten early).
    @Test func aKeyWrittenAgainOutlivesItsOlderWrite() {
        var m = RecentMemory<String, Int64>(capacity: 3)
        m.write("a", 1)
        m.write("b", 2)
        m.write("a", 3)
        m.write("c", 4)   // evicts the first write of a, not a
        #expect(m.value(for: "a") == 3)
        #expect(m.value(for: "b") == 2)
        #expect(m.value(for: "c") == 4)
        m.write("d", 5)   // evicts b
        #expect(m.value(for: "b") == nil)
        #expect(m.value(for: "a") == 3)
        m.write("e", 6)   // evicts the second write of a
        #expect(m.value(for: "a") == nil)
        #expect(m.count == 3)
    }

    @Test func duplicatesAreRefusedWhileHeld() {
        var m = RecentMemory<String, Void>(capacity: 2)
        var answers: [Bool] = []
        for key in ["x", "x", "y", "z", "x", "z"] { answers.append(m.insertIfNew(key)) }
        // x is forgotten once y and z came after it.
        #expect(answers == [true, false, true, true, true, false])
    }

    /// Against a reference: the distinct keys among the last `capacity` writes, each with its
    /// latest value (seeded; the seed is printed on failure).
    @Test(arguments: [1, 2, 7, 64])
    func matchesTheLastWrites(capacity: Int) {
        let seed: UInt64 = 0x5EED_0000 + UInt64(capacity)
        var random = SplitMix64(seed: seed)
        var m = RecentMemory<Int, Int>(capacity: capacity)
        var writes: [(Int, Int)] = []
        for i in 0 ..< 5_000 {
            let key = Int(random.next() % UInt64(capacity * 2 + 1))
            m.write(key, i)
            writes.append((key, i))
            var expected: [Int: Int] = [:]
            for (k, v) in writes.suffix(capacity) { expected[k] = v }
            #expect(m.count == expected.count, "seed \(seed), write \(i)")
            for k in 0 ... capacity * 2 {
                guard m.value(for: k) == expected[k] else {
                    Issue.record("seed \(seed), write \(i): key \(k) holds \(String(describing: m.value(for: k))), expected \(String(describing: expected[k]))")
                    return
                }
            }
        }
    }
}
