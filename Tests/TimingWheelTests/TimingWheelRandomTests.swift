import Testing
import TimingWheel
import SeededRandom

/// The wheel against `ReferenceTimers` over seeded random operations: schedules near, far, past,
/// tied and huge deadlines, cancels of live and stale handles, advances by small and large steps.
/// Every fired batch, every cancel result, `nextDeadline` and `count` are compared after every
/// operation; debug builds also check the wheel's invariants after every mutation.
@Suite("TimingWheel random operations")
struct TimingWheelRandomTests {
    static let chunks = 8
    static let seedsPerChunk = 25
    static let operationsPerSeed = 5_000  // 8 × 25 × 5,000 = 1,000,000 operations

    @Test("matches a sorted reference queue, 1,000,000 operations", arguments: 0 ..< chunks)
    func matchesReference(chunk: Int) {
        let first = UInt64(chunk * Self.seedsPerChunk)
        for seed in first ..< first + UInt64(Self.seedsPerChunk) {
            if !Self.run(seed: seed, operations: Self.operationsPerSeed) { return }
        }
    }

    /// Runs one seed; records an issue naming the seed and returns false at the first difference.
    static func run(seed: UInt64, operations: Int) -> Bool {
        var random = SplitMix64(seed: seed)
        let start: UInt64
        switch random.below(4) {
        case 0: start = 0
        case 1: start = random.below(1 << 32)
        case 2: start = (1 << 62) + random.below(1 << 40)
        default: start = UInt64.max - (1 << 24)
        }
        var wheel = TimingWheel<Int>(now: start, capacity: Int(random.below(3)) * 64)
        var reference = ReferenceTimers()
        var stale: [TimerHandle] = []
        var nextPayload = 0
        // Seeds differ in how much they schedule and how often time jumps far ahead, so standing
        // populations range from none to several hundred timers.
        let schedulePercent = 35 + random.below(30)
        let farJumpPerMille = 2 + random.below(60)

        func fail(_ operation: Int, _ message: String) -> Bool {
            Issue.record("seed \(seed), operation \(operation), now \(wheel.now): \(message)")
            return false
        }

        for operation in 0 ..< operations {
            let now = wheel.now
            let roll = random.below(100)
            if roll < schedulePercent {
                let deadline = randomDeadline(now: now, reference: reference, random: &random)
                let handle = wheel.schedule(at: deadline, nextPayload)
                if reference.isPending(handle) { return fail(operation, "handle \(handle) reused while pending") }
                reference.schedule(handle, at: deadline, payload: nextPayload)
                nextPayload += 1
            } else if roll < schedulePercent + 20 {
                guard let entry = reference.entries.randomElement(using: &random) else { continue }
                let expected = reference.cancel(entry.handle)
                let got = wheel.cancel(entry.handle)
                if got != expected { return fail(operation, "cancel \(entry.handle): \(String(describing: got)), expected \(String(describing: expected))") }
                remember(entry.handle, in: &stale, random: &random)
            } else if roll < schedulePercent + 25 {
                guard let handle = stale.randomElement(using: &random) else { continue }
                if let got = wheel.cancel(handle) { return fail(operation, "stale \(handle) cancelled \(got)") }
            } else {
                let target = randomTarget(now: now, wheel: wheel, farJumpPerMille: farJumpPerMille, random: &random)
                var fired: [(handle: TimerHandle, deadline: UInt64, payload: Int)] = []
                if random.percent(30) {
                    // Bounded: at most `limit` fire, the rest stay due for the next advance.
                    let limit = Int(random.below(random.percent(20) ? 2 : 40))
                    let more: Bool
                    if random.percent(50) {
                        (fired, more) = wheel.advance(to: target, limit: limit)
                    } else {
                        more = wheel.advance(to: target, limit: limit) { fired.append(($0, $1, $2)) }
                    }
                    let expected = reference.advance(to: target, limit: limit)
                    if fired.count != expected.fired.count || more != expected.more {
                        return fail(operation, "advance to \(target) limit \(limit) fired \(fired.count) (more: \(more)), expected \(expected.fired.count) (more: \(expected.more))")
                    }
                    for (got, want) in zip(fired, expected.fired)
                    where got.handle != want.handle || got.deadline != want.deadline || got.payload != want.payload {
                        return fail(operation, "advance to \(target) limit \(limit): fired \(got), expected \(want)")
                    }
                    for entry in fired { remember(entry.handle, in: &stale, random: &random) }
                    if more ? wheel.now > target : wheel.now != target {
                        return fail(operation, "now \(wheel.now) after advance to \(target) limit \(limit) (more: \(more))")
                    }
                    if more, let next = wheel.nextDeadline, next > target {
                        return fail(operation, "more due after advance to \(target), but the next deadline is \(next)")
                    }
                } else {
                    if random.percent(50) {
                        fired = wheel.advance(to: target)
                    } else {
                        wheel.advance(to: target) { fired.append(($0, $1, $2)) }
                    }
                    let expected = reference.advance(to: target)
                    if fired.count != expected.count {
                        return fail(operation, "advance to \(target) fired \(fired.count), expected \(expected.count)")
                    }
                    for (got, want) in zip(fired, expected)
                    where got.handle != want.handle || got.deadline != want.deadline || got.payload != want.payload {
                        return fail(operation, "advance to \(target): fired \(got), expected \(want)")
                    }
                    for entry in fired { remember(entry.handle, in: &stale, random: &random) }
                    if wheel.now != target { return fail(operation, "now \(wheel.now) after advance to \(target)") }
                }
            }
            if wheel.nextDeadline != reference.nextDeadline {
                return fail(operation, "nextDeadline \(String(describing: wheel.nextDeadline)), expected \(String(describing: reference.nextDeadline))")
            }
            if wheel.count != reference.count || wheel.isEmpty != (reference.count == 0) {
                return fail(operation, "count \(wheel.count), expected \(reference.count)")
            }
        }
        return true
    }

    static func remember(_ handle: TimerHandle, in stale: inout [TimerHandle], random: inout SplitMix64) {
        if stale.count < 1_000 {
            stale.append(handle)
        } else {
            stale[Int(random.below(1_000))] = handle
        }
    }

    static func adding(_ now: UInt64, _ delta: UInt64) -> UInt64 {
        let (sum, overflow) = now.addingReportingOverflow(delta)
        return overflow ? .max : sum
    }

    static func randomDeadline(now: UInt64, reference: ReferenceTimers, random: inout SplitMix64) -> UInt64 {
        switch random.below(11) {
        case 0: return now
        case 1: return adding(now, random.below(64))
        case 2: return adding(now, random.below(5_000))
        case 3: return adding(now, random.below(1 << 20))
        case 4: return adding(now, random.below(1 << 36))
        case 5: return now - random.below(min(now, 5_000) + 1)  // past
        case 6: return (1 << 40) + random.below(UInt64.max - (1 << 40))  // > 2^40, past or future
        case 7: return UInt64.max - random.below(3)
        case 8: return reference.entries.randomElement(using: &random)?.deadline ?? now  // a tie
        case 9:
            // On or next to a slot or level boundary: the next multiple of 64^k, ± 1.
            let shift = UInt64(6 * random.below(11))
            let unit: UInt64 = 1 << shift
            let boundary = adding(now | (unit - 1), 1)
            return boundary &+ random.below(3) &- 1
        default: return adding(now, random.below(1 << 12))
        }
    }

    static func randomTarget(
        now: UInt64, wheel: TimingWheel<Int>, farJumpPerMille: UInt64, random: inout SplitMix64
    ) -> UInt64 {
        if random.below(1_000) < farJumpPerMille {
            switch random.below(4) {
            case 0: return adding(now, random.below(1 << 24))
            case 1: return adding(now, random.below(1 << 40))
            case 2: return adding(now, 1 << random.below(64))
            default:
                // Rarely anywhere up to the end of time; the seed then goes on near UInt64.max.
                return random.percent(10) && now < .max ? now + random.below(UInt64.max - now) : now
            }
        }
        switch random.below(8) {
        case 0 ... 3: return adding(now, random.below(8))
        case 4, 5: return adding(now, random.below(5_000))
        case 6: return max(now, wheel.nextDeadline ?? now)
        default: return max(now, (wheel.nextDeadline ?? now) &- 1)
        }
    }
}
