import Testing
import TimingWheel

/// Deadlines of the Fencepost shell: 1 tick = 1 ms.
private let second: UInt64 = 1_000
private let day: UInt64 = 86_400 * second

@Suite("TimingWheel edge cases")
struct TimingWheelEdgeCaseTests {
    @Test("a deadline equal to now fires at the next advance, even to the same now")
    func deadlineEqualToNow() {
        var wheel = TimingWheel<String>(now: 100)
        let handle = wheel.schedule(at: 100, "now")
        #expect(wheel.nextDeadline == 100)
        #expect(wheel.count == 1)
        let fired = wheel.advance(to: 100)
        #expect(fired.map(\.handle) == [handle])
        #expect(fired.map(\.deadline) == [100])
        #expect(fired.map(\.payload) == ["now"])
        #expect(wheel.isEmpty && wheel.nextDeadline == nil)
    }

    @Test("past deadlines fire at the next advance in deadline order, ties in schedule order")
    func pastDeadlines() {
        var wheel = TimingWheel<Int>(now: 1_000)
        wheel.schedule(at: 1_005, 0)  // future: after every past one
        wheel.schedule(at: 50, 1)
        wheel.schedule(at: 10, 2)
        wheel.schedule(at: 999, 3)
        wheel.schedule(at: 10, 4)
        wheel.schedule(at: 0, 5)
        #expect(wheel.nextDeadline == 0)
        #expect(wheel.advance(to: 1_000).map(\.payload) == [5, 2, 4, 1, 3])
        #expect(wheel.nextDeadline == 1_005)
        #expect(wheel.advance(to: 1_004).isEmpty)
        #expect(wheel.advance(to: 1_005).map(\.payload) == [0])
    }

    @Test("cancelling the earliest past deadline moves nextDeadline to the next one")
    func cancelPastMinimum() {
        var wheel = TimingWheel<Int>(now: 500)
        wheel.schedule(at: 40, 0)
        let earliest = wheel.schedule(at: 20, 1)
        wheel.schedule(at: 30, 2)
        #expect(wheel.nextDeadline == 20)
        #expect(wheel.cancel(earliest) == 1)
        #expect(wheel.nextDeadline == 30)
        #expect(wheel.advance(to: 500).map(\.payload) == [2, 0])
    }

    @Test("deadlines up to UInt64.max are kept, ordered and fired exactly")
    func hugeDeadlines() {
        var wheel = TimingWheel<String>(now: 7)
        wheel.schedule(at: .max, "max")
        wheel.schedule(at: .max - 1, "max-1")
        wheel.schedule(at: 1 << 63, "2^63")
        wheel.schedule(at: (1 << 40) + 3, "2^40+3")
        wheel.schedule(at: .max, "max again")
        #expect(wheel.nextDeadline == (1 << 40) + 3)
        #expect(wheel.advance(to: (1 << 40) + 2).isEmpty)
        #expect(wheel.advance(to: (1 << 40) + 3).map(\.payload) == ["2^40+3"])
        #expect(wheel.nextDeadline == 1 << 63)
        #expect(wheel.advance(to: UInt64.max - 2).map(\.payload) == ["2^63"])
        #expect(wheel.nextDeadline == UInt64.max - 1)
        #expect(wheel.advance(to: UInt64.max - 1).map(\.payload) == ["max-1"])
        #expect(wheel.nextDeadline == UInt64.max)
        #expect(wheel.advance(to: .max).map(\.payload) == ["max", "max again"])
        // At the end of time every deadline is due.
        wheel.schedule(at: .max, "late")
        wheel.schedule(at: 3, "early")
        #expect(wheel.advance(to: .max).map(\.payload) == ["early", "late"])
    }

    @Test("a wheel can start at the end of time")
    func startNearMax() {
        var wheel = TimingWheel<Int>(now: .max - 100)
        wheel.schedule(at: .max - 36, 1)
        wheel.schedule(at: .max - 99, 0)
        #expect(wheel.nextDeadline == UInt64.max - 99)
        #expect(wheel.advance(to: .max).map(\.payload) == [0, 1])
    }

    @Test("cancelling inside a fired batch: fired handles are stale, the others still cancel")
    func cancelInsideFiredBatch() {
        var wheel = TimingWheel<Int>()
        let a = wheel.schedule(at: 70, 0)
        let b = wheel.schedule(at: 70, 1)
        let c = wheel.schedule(at: 64, 2)
        let later = wheel.schedule(at: 5_000, 3)
        let fired = wheel.advance(to: 100)
        #expect(fired.map(\.handle) == [c, a, b])
        var cancelled: [Int?] = []
        for timer in fired {
            cancelled.append(wheel.cancel(timer.handle))
            if timer.payload == 0 { cancelled.append(wheel.cancel(later)) }
        }
        #expect(cancelled == [nil, nil, 3, nil])
        #expect(wheel.isEmpty && wheel.nextDeadline == nil)

        // The callback variant hands out the same handles; they are stale once it returns.
        let d = wheel.schedule(at: 200, 4)
        var handles: [TimerHandle] = []
        wheel.advance(to: 300) { handle, _, _ in handles.append(handle) }
        #expect(handles == [d])
        #expect(wheel.cancel(d) == nil)
    }

    @Test("a reused slab node does not revive stale handles")
    func staleHandleAfterReuse() {
        var wheel = TimingWheel<String>(capacity: 1)
        let first = wheel.schedule(at: 10, "first")
        #expect(wheel.cancel(first) == "first")
        #expect(wheel.cancel(first) == nil)
        let second = wheel.schedule(at: 10, "second")
        #expect(second != first)
        #expect(wheel.cancel(first) == nil)  // same node, older generation
        #expect(wheel.count == 1)
        #expect(wheel.advance(to: 10).map(\.payload) == ["second"])
        let third = wheel.schedule(at: 20, "third")
        #expect(wheel.cancel(second) == nil)  // fired, node reused by `third`
        #expect(wheel.cancel(first) == nil)
        #expect(wheel.capacity == 1)
        #expect(wheel.cancel(third) == "third")
    }

    @Test("a handle from another, smaller wheel is refused")
    func foreignHandle() {
        var big = TimingWheel<Int>()
        var handle = big.schedule(at: 1, 0)
        for i in 1 ... 10 { handle = big.schedule(at: 1, i) }
        var small = TimingWheel<Int>()
        small.schedule(at: 1, 0)
        #expect(small.cancel(handle) == nil)
        #expect(small.count == 1)
    }

    @Test("a 30-day timer at 1 ms ticks fires at exactly its tick", arguments: [0, 123_456_789, 1 << 45])
    func thirtyDays(start: UInt64) {
        var wheel = TimingWheel<String>(now: start)
        let deadline = start + 30 * day
        let handle = wheel.schedule(at: deadline, "vehicle check")
        wheel.schedule(at: start + 2 * 60 * 60 * second, "take a break")
        var now = start
        var fired: [(handle: TimerHandle, deadline: UInt64, payload: String)] = []
        // An event loop: sleep until nextDeadline, or at most an hour; never early, never late.
        while fired.count < 2 {
            let next = wheel.nextDeadline!
            now = min(next, now + 3_600 * second)
            let batch = wheel.advance(to: now)
            for timer in batch { #expect(timer.deadline == now) }
            fired += batch
        }
        #expect(fired.map(\.payload) == ["take a break", "vehicle check"])
        #expect(fired.last?.handle == handle && fired.last?.deadline == deadline)

        // Stepping tick by tick across the deadline: nothing at deadline - 1, the timer at deadline.
        var stepped = TimingWheel<String>(now: start)
        stepped.schedule(at: deadline, "vehicle check")
        #expect(stepped.advance(to: deadline - 2).isEmpty)
        #expect(stepped.nextDeadline == deadline)
        #expect(stepped.advance(to: deadline - 1).isEmpty)
        #expect(stepped.advance(to: deadline).map(\.deadline) == [deadline])

        // Jumping far past it reports the deadline it was due at.
        var jumped = TimingWheel<String>(now: start)
        jumped.schedule(at: deadline, "vehicle check")
        #expect(jumped.advance(to: deadline + 365 * day).map(\.deadline) == [deadline])
    }

    @Test("ties keep schedule order through cascades from high levels")
    func tiesThroughCascades() {
        var wheel = TimingWheel<Int>(now: 0)
        let deadline: UInt64 = 5 * day + 17
        // Scheduled at different times, so first filed on different levels.
        wheel.schedule(at: deadline, 0)
        wheel.advance(to: 4 * day)
        wheel.schedule(at: deadline, 1)
        wheel.advance(to: deadline - 1_000)
        wheel.schedule(at: deadline, 2)
        wheel.advance(to: deadline - 3)
        wheel.schedule(at: deadline, 3)
        wheel.schedule(at: deadline - 1, 4)
        #expect(wheel.advance(to: deadline).map(\.payload) == [4, 0, 1, 2, 3])
    }

    @Test("nextDeadline is exact when the earliest timer is on a high level")
    func exactNextDeadlineOnHighLevel() {
        var wheel = TimingWheel<Int>(now: 0)
        // All in one level-3 slot; the slot starts before all of them.
        wheel.schedule(at: 300_000, 0)
        let earliest = wheel.schedule(at: 290_001, 1)
        wheel.schedule(at: 400_000, 2)
        #expect(wheel.nextDeadline == 290_001)
        wheel.cancel(earliest)
        #expect(wheel.nextDeadline == 300_000)
        #expect(wheel.advance(to: 299_999).isEmpty)
        #expect(wheel.nextDeadline == 300_000)
    }

    @Test("copies are independent values")
    func copyOnWrite() {
        var original = TimingWheel<String>(now: 0)
        let handle = original.schedule(at: 10, "a")
        original.schedule(at: 20, "b")
        var copy = original
        #expect(copy.cancel(handle) == "a")
        copy.schedule(at: 5, "c")
        #expect(original.count == 2 && copy.count == 2)
        #expect(original.nextDeadline == 10 && copy.nextDeadline == 5)
        #expect(original.advance(to: 100).map(\.payload) == ["a", "b"])
        #expect(copy.advance(to: 100).map(\.payload) == ["c", "b"])
    }

    @Test("schedule and cancel do not grow the slab once it has room")
    func capacityIsKept() {
        var wheel = TimingWheel<Int>(capacity: 100)
        #expect(wheel.capacity == 100)
        var handles: [TimerHandle] = []
        for round in 0 ..< 50 {
            for i in 0 ..< 100 { handles.append(wheel.schedule(at: UInt64(i * 997 + round), i)) }
            for handle in handles { wheel.cancel(handle) }
            handles.removeAll(keepingCapacity: true)
        }
        #expect(wheel.capacity == 100)
        wheel.reserveCapacity(1_000)
        #expect(wheel.capacity >= 1_000)
    }

    @Test("payloads are released exactly once: fired, cancelled, copied, grown or dropped")
    func payloadLifetimes() {
        final class Census { var alive = 0 }
        final class Token {
            let census: Census
            init(_ census: Census) { self.census = census; census.alive += 1 }
            deinit { census.alive -= 1 }
        }
        let census = Census()
        do {
            var wheel = TimingWheel<Token>()
            var handles: [TimerHandle] = []
            for i in 0 ..< 1_000 { handles.append(wheel.schedule(at: UInt64(i * 37 % 5_000), Token(census))) }
            #expect(census.alive == 1_000)
            for handle in handles.prefix(300) { _ = wheel.cancel(handle) }
            #expect(census.alive == 700)
            var copy = wheel
            copy.advance(to: 2_000) { _, _, _ in }
            #expect(census.alive == 700)  // the original still holds every token
            wheel.advance(to: 2_500) { _, _, _ in }
            #expect(census.alive == copy.count)  // the wheel holds a subset of the copy's tokens
            copy = TimingWheel()
            #expect(census.alive == wheel.count)
        }
        #expect(census.alive == 0)
    }

    @Test("the array and callback forms of advance agree")
    func callbackMatchesArray() {
        var a = TimingWheel<Int>(now: 0)
        for i in 0 ..< 1_000 { a.schedule(at: UInt64((i * 7_919) % 100_000), i) }
        var b = a
        var viaCallback: [Int] = []
        b.advance(to: 60_000) { _, _, payload in viaCallback.append(payload) }
        #expect(a.advance(to: 60_000).map(\.payload) == viaCallback)
        #expect(a.count == b.count && a.nextDeadline == b.nextDeadline)
    }

    @Test("advancing backwards is a precondition failure")
    func backwardsIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var wheel = TimingWheel<Int>(now: 10)
            _ = wheel.advance(to: 9)
        }
    }

    @Test("invariant checks are compiled into debug builds")
    func invariantChecksInDebug() {
        #if DEBUG
        #expect(TimingWheel<Int>._invariantChecksEnabled)
        #endif
    }
}
