import SeededRandom
import Testing
import TimingWheel

/// `advance(to:limit:)`: a stalled loop that wakes to thousands of due timers takes them at most
/// `limit` a call, in the order one unbounded advance fires them, none lost, none twice.
@Suite("TimingWheel bounded advance")
struct TimingWheelLimitTests {
    /// 5,000 timers spread over every level that 10 minutes at 1 ms reach (ties, past deadlines,
    /// level-0 bursts), all due at one wake: drained `limit` at a time against an unbounded copy.
    @Test("thousands due at once are taken at most limit a call, in order", arguments: [1, 7, 64])
    func drainsInOrder(limit: Int) {
        let seed: UInt64 = 0x5eed_0000 + UInt64(limit)
        var random = SplitMix64(seed: seed)
        var wheel = TimingWheel<Int>(now: 1_000)
        for i in 0 ..< 5_000 {
            let deadline: UInt64
            switch random.below(5) {
            case 0: deadline = 1_000 + random.below(64)          // level 0
            case 1: deadline = 1_000 + random.below(600_000)     // up to level 3
            case 2: deadline = 5_000                             // ties
            case 3: deadline = random.below(1_000)               // past: the due list
            default: deadline = 1_000 + random.below(4_096)      // level 1
            }
            wheel.schedule(at: deadline, i)
        }
        var unbounded = wheel   // a copy (copy on write)
        let target: UInt64 = 1_000 + 600_000
        let expected = unbounded.advance(to: target).map(\.payload)
        #expect(expected.count == 5_000, "seed \(seed)")

        var got: [Int] = []
        var calls = 0
        var more = true
        while more {
            let step = wheel.advance(to: target, limit: limit)
            #expect(step.fired.count <= limit, "seed \(seed): \(step.fired.count) fired in one call")
            if step.more {
                #expect(step.fired.count == limit, "seed \(seed): stopped short of the limit")
                #expect(wheel.nextDeadline.map { $0 <= target } == true, "seed \(seed): more due, next deadline \(String(describing: wheel.nextDeadline))")
            }
            got += step.fired.map(\.payload)
            more = step.more
            calls += 1
            if calls > 10_000 { Issue.record("seed \(seed): no end after \(calls) calls"); break }
        }
        #expect(got == expected, "seed \(seed): order or content differs from one unbounded advance")
        #expect(calls == (5_000 + limit - 1) / limit, "seed \(seed): \(calls) calls")
        #expect(wheel.isEmpty && wheel.now == target, "seed \(seed): \(wheel.count) left, now \(wheel.now)")
    }

    /// Timers scheduled while a backlog waits go in deadline order among it: a past deadline
    /// before the rest, a later one after.
    @Test func timersScheduledDuringABacklogKeepDeadlineOrder() {
        var wheel = TimingWheel<String>(now: 0)
        for i in 0 ..< 10 { wheel.schedule(at: 100 + UInt64(i), "a\(i)") }
        let first = wheel.advance(to: 200, limit: 3)
        #expect(first.fired.map(\.payload) == ["a0", "a1", "a2"] && first.more)
        wheel.schedule(at: 50, "early")
        wheel.schedule(at: 150, "late")
        let rest = wheel.advance(to: 200, limit: 100)
        #expect(rest.fired.map(\.payload) == ["early", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "late"])
        #expect(!rest.more && wheel.now == 200)
    }

    /// Limit 0 fires nothing and says whether anything is due; time does not pass a due timer.
    @Test func limitZeroOnlyAnswers() {
        var wheel = TimingWheel<Int>(now: 0)
        wheel.schedule(at: 10, 1)
        let before = wheel.advance(to: 5, limit: 0)
        #expect(before.fired.isEmpty && !before.more && wheel.now == 5)
        let at = wheel.advance(to: 20, limit: 0)
        #expect(at.fired.isEmpty && at.more && wheel.now <= 10 && wheel.count == 1)
        #expect(wheel.advance(to: 20, limit: 1).fired.map(\.payload) == [1])
    }
}
