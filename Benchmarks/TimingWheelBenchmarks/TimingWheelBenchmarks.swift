// The timing wheel against swift-collections' `Heap`, in the same run, at 64, 10k and 1M standing
// timers. Each benchmark iteration does 1,000 operations (`scalingFactor: .kilo`), so the scaled
// wall-clock figures the plugin prints (marked `*`) are nanoseconds per operation.
//
// - schedule+cancel: schedule one timer among N standing ones, then cancel it by its handle.
//   `Heap` has no cancel by handle. Its honest equivalent is lazy deletion: insert, mark the
//   entry cancelled, pop it when it reaches the top. We charge the Heap only insert + popMin per
//   pair — the two heap operations lazy deletion must eventually do for every cancelled entry —
//   and leave out its tombstone bookkeeping, so the Heap figure is a lower bound.
// - schedule+expire: the event loop's steady state. Each operation schedules one timer
//   1 ..< 2N ticks ahead, moves time on by one tick and takes everything due (about one timer),
//   so about N timers stand. The Heap inserts, then pops while its minimum is due.
//
// Deadlines come from a xorshift generator seeded the same for both structures.

import Benchmark
import HeapModule
import TimingWheel

let benchmarks: @Sendable () -> Void = {
    #if DEBUG
    fatalError("Benchmarks must be built in release: debug builds check invariants after every operation.")
    #endif
    if TimingWheel<Int>._invariantChecksEnabled {
        fatalError("TimingWheel was built with invariant checks (debug); build it in release to benchmark.")
    }

    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )

    for standing in [64, 10_000, 1_000_000] {
        let label = standing >= 1_000_000 ? "\(standing / 1_000_000)M" : standing >= 1_000 ? "\(standing / 1_000)k" : "\(standing)"

        let wheelCancel = WheelFixture(standing: standing)
        Benchmark("TimingWheel schedule+cancel, \(label) standing") { benchmark in
            wheelCancel.scheduleAndCancel(benchmark.scaledIterations.count)
        } setup: {
            wheelCancel.fill()
        }

        let heapCancel = HeapFixture(standing: standing)
        Benchmark("Heap insert+popMin (no cancel), \(label) standing") { benchmark in
            heapCancel.insertAndPopMin(benchmark.scaledIterations.count)
        } setup: {
            heapCancel.fill()
        }

        let wheelExpire = WheelFixture(standing: standing)
        Benchmark("TimingWheel schedule+expire, \(label) standing") { benchmark in
            wheelExpire.scheduleAndExpire(benchmark.scaledIterations.count)
        } setup: {
            wheelExpire.fill()
        }

        let heapExpire = HeapFixture(standing: standing)
        Benchmark("Heap schedule+expire, \(label) standing") { benchmark in
            heapExpire.scheduleAndExpire(benchmark.scaledIterations.count)
        } setup: {
            heapExpire.fill()
        }
    }
}

/// xorshift64*: cheap enough not to blur a 10 ns measurement.
struct Deadlines {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// A value in `1 ..< bound`.
    @inline(__always)
    mutating func ahead(below bound: UInt64) -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        let random = state &* 0x2545_F491_4F6C_DD1D
        return 1 &+ random.multipliedFullWidth(by: bound &- 1).high
    }
}

/// A wheel with `standing` timers 1 ..< 2·standing ticks ahead.
final class WheelFixture {
    let standing: Int
    var wheel = TimingWheel<Int>()
    var deadlines = Deadlines()
    var now: UInt64 = 0
    var fired = 0

    init(standing: Int) { self.standing = standing }

    var spread: UInt64 { UInt64(2 * standing) }

    func fill() {
        wheel = TimingWheel(now: 0, capacity: 2 * standing)
        deadlines = Deadlines()
        now = 0
        for i in 0 ..< standing { wheel.schedule(at: deadlines.ahead(below: spread), i) }
    }

    // The loops take the structure `inout` so that one exclusivity check on the class property
    // covers 1,000 operations.
    func scheduleAndCancel(_ operations: Int) {
        Self.scheduleAndCancel(&wheel, &deadlines, now: now, spread: spread, operations)
    }

    func scheduleAndExpire(_ operations: Int) {
        fired &+= Self.scheduleAndExpire(&wheel, &deadlines, now: &now, spread: spread, operations)
        blackHole(fired)
    }

    @inline(never)
    static func scheduleAndCancel(
        _ wheel: inout TimingWheel<Int>, _ deadlines: inout Deadlines, now: UInt64, spread: UInt64, _ operations: Int
    ) {
        for i in 0 ..< operations {
            let handle = wheel.schedule(at: now &+ deadlines.ahead(below: spread), i)
            blackHole(wheel.cancel(handle))
        }
    }

    @inline(never)
    static func scheduleAndExpire(
        _ wheel: inout TimingWheel<Int>, _ deadlines: inout Deadlines, now: inout UInt64, spread: UInt64,
        _ operations: Int
    ) -> Int {
        var fired = 0
        for i in 0 ..< operations {
            wheel.schedule(at: now &+ deadlines.ahead(below: spread), i)
            now &+= 1
            wheel.advance(to: now) { _, _, payload in fired &+= payload & 1 }
        }
        return fired
    }
}

/// What a heap-based timer queue stores: deadline, then schedule order for ties.
struct HeapTimer: Comparable {
    var deadline: UInt64
    var sequence: Int

    @inline(__always)
    static func < (a: HeapTimer, b: HeapTimer) -> Bool {
        (a.deadline, a.sequence) < (b.deadline, b.sequence)
    }
}

/// A `Heap` with `standing` timers 1 ..< 2·standing ticks ahead.
final class HeapFixture {
    let standing: Int
    var heap = Heap<HeapTimer>()
    var deadlines = Deadlines()
    var now: UInt64 = 0
    var sequence = 0
    var fired = 0

    init(standing: Int) { self.standing = standing }

    var spread: UInt64 { UInt64(2 * standing) }

    func fill() {
        heap = Heap()
        heap.reserveCapacity(2 * standing)
        deadlines = Deadlines()
        now = 0
        for i in 0 ..< standing { heap.insert(HeapTimer(deadline: deadlines.ahead(below: spread), sequence: i)) }
        sequence = standing
    }

    func insertAndPopMin(_ operations: Int) {
        Self.insertAndPopMin(&heap, &deadlines, now: now, spread: spread, sequence: &sequence, operations)
    }

    func scheduleAndExpire(_ operations: Int) {
        fired &+= Self.scheduleAndExpire(&heap, &deadlines, now: &now, spread: spread, sequence: &sequence, operations)
        blackHole(fired)
    }

    @inline(never)
    static func insertAndPopMin(
        _ heap: inout Heap<HeapTimer>, _ deadlines: inout Deadlines, now: UInt64, spread: UInt64,
        sequence: inout Int, _ operations: Int
    ) {
        for _ in 0 ..< operations {
            heap.insert(HeapTimer(deadline: now &+ deadlines.ahead(below: spread), sequence: sequence))
            sequence &+= 1
            blackHole(heap.popMin())
        }
    }

    @inline(never)
    static func scheduleAndExpire(
        _ heap: inout Heap<HeapTimer>, _ deadlines: inout Deadlines, now: inout UInt64, spread: UInt64,
        sequence: inout Int, _ operations: Int
    ) -> Int {
        var fired = 0
        for _ in 0 ..< operations {
            heap.insert(HeapTimer(deadline: now &+ deadlines.ahead(below: spread), sequence: sequence))
            sequence &+= 1
            now &+= 1
            while let first = heap.min, first.deadline <= now {
                fired &+= heap.removeMin().sequence & 1
            }
        }
        return fired
    }
}
