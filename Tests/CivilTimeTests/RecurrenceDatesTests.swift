import CivilTime
import SeededRandom
import Testing

@Suite("RecurrenceDates")
struct RecurrenceDatesTests {
    /// Dates added together in any order (sorted once) equal the same dates added one by one;
    /// duplicates collapse; the kinds (day, local, instant) stay apart.
    @Test func addingManyInAnyOrderEqualsAddingOneByOne() {
        let seed: UInt64 = 0xDA7E5
        var random = SplitMix64(seed: seed)
        func two(_ v: UInt64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var texts: [String] = []
        for _ in 0 ..< 3_000 {
            let y = 2026 + random.next() % 5, m = 1 + random.next() % 12, d = 1 + random.next() % 28
            switch random.next() % 3 {
            case 0: texts.append("\(y)-\(two(m))-\(two(d))")
            case 1: texts.append("\(y)-\(two(m))-\(two(d))T\(two(random.next() % 24)):00:00")
            default: texts.append("\(y)\(two(m))\(two(d))T\(two(random.next() % 24))0000Z")
            }
        }
        var oneByOne = RecurrenceDates()
        for t in texts {
            let ok = oneByOne.add(t)
            #expect(ok, "seed \(seed): \(t)")
        }
        var together = RecurrenceDates()
        let bad = together.add(contentsOf: texts)
        #expect(bad == nil)
        #expect(together == oneByOne, "seed \(seed)")
        #expect(together.local == together.local.sorted() && together.days == together.days.sorted())
        #expect(Set(together.texts).count == together.count)
        // Adding them again changes nothing; adding to a non-empty set merges.
        let again = together.add(contentsOf: texts.reversed())
        #expect(again == nil)
        #expect(together == oneByOne)
    }

    /// A text that is no date is named by its index, and nothing of the batch is added.
    @Test func aBadTextIsNamedAndNothingIsAdded() {
        var dates = RecurrenceDates()
        let first = dates.add("2026-12-25")
        let bad = dates.add(contentsOf: ["2026-12-26", "2026-12-27T07:00:00", "Christmas", "2026-12-28"])
        #expect(first && bad == 2)
        #expect(dates.texts == ["2026-12-25"])
    }
}
