import CivilTime
import LocalNotifications
import Testing

/// The per-call budget of fires (``EngineConfiguration/firesPerTurn``): a wake that finds
/// thousands of fires due handles them a few per call, and the calls together give exactly what
/// one unbounded call gives at the instant of the wake: the same deliveries and missed-fire
/// outcomes, in the same order, none lost, none twice, however much later the next calls come.
@Suite struct FireBudgetTests {
    static let wall = instant("2026-06-01T00:00:00Z")
    static let boot: UInt64 = 1_000 * 1_000_000_000

    static func clock(_ seconds: Int64) -> EngineClock {
        EngineClock(wall: wall.adding(seconds: seconds), wallTrusted: true,
                    monotonic: MonotonicInstant(nanosecondsSinceBoot: boot + UInt64(seconds) * 1_000_000_000))
    }

    /// 3,000 interval requests due 40 … 80 s after they were added (one-shot and repeating, under
    /// each missed-fire policy) and 40 daily calendar triggers due at 60 s and 120 s; the loop wakes
    /// 120 s after the add, so the lateness of the fires straddles the 60 s on-time tolerance and
    /// the 30 s grace window.
    static func loaded() throws -> NotificationEngine {
        var engine = makeEngine { c in
            c.pendingCap = 10_000
            c.deliveredCap = 10_000
        }
        let policies: [MissedFirePolicy] = [.coalesce, .skip, .deliverLate(graceSeconds: 30)]
        var requests: [NotificationRequest] = []
        for i in 0 ..< 3_000 {
            // Repeating intervals are at least 60 s; none falls due in the second after the wake.
            let repeats = i % 7 == 0
            requests.append(interval("i\(i)", seconds: repeats ? 60 + Int64(i % 21) : 40 + Int64(i % 41), repeats: repeats, missed: policies[i % 3]))
        }
        for i in 0 ..< 40 {
            requests.append(daily("c\(i)", hour: 0, minute: 1 + i % 2, tz: nil, missed: policies[i % 3]))
        }
        for r in requests { _ = try engine.add(r, clock: clock(0)) }
        return engine
    }

    /// Requests a call's output handled (a fire yields a delivery, a missed outcome, or both).
    static func handled(_ out: EngineOutput) -> Set<String> {
        Set(out.deliveries.map(\.requestIdentifier) + out.outcomes.filter { $0.kind == .missed }.map(\.requestIdentifier))
    }

    @Test("a wake with 3,040 fires due: at most firesPerTurn a call, all of them, as one unbounded call", arguments: [1, 8, 100])
    func budgetedCallsGiveWhatOneUnboundedCallGives(budget: Int) throws {
        var engine = try Self.loaded()
        engine.configuration.firesPerTurn = budget
        var reference = engine
        reference.configuration.firesPerTurn = .max
        let want = reference.advance(clock: Self.clock(120))
        #expect(!reference.hasDeferredFires)
        #expect(Self.handled(want).count == 3_040, "the reference handled \(Self.handled(want).count)")

        // The next calls come a second later (a loop that served other work meanwhile, slowly;
        // no fire falls due in that second): the fires left are still judged at the wake's
        // instant, so a fire 60 s late at the wake stays on time, not 61 s late.
        var got = EngineOutput()
        var calls = 0
        repeat {
            let out = engine.advance(clock: Self.clock(calls == 0 ? 120 : 121))
            #expect(Self.handled(out).count <= budget, "call \(calls) handled \(Self.handled(out).count) requests")
            got.append(out)
            calls += 1
        } while engine.hasDeferredFires && calls < 10_000
        #expect(calls == (3_040 + budget - 1) / budget, "\(calls) calls")
        #expect(got.deliveries == want.deliveries, "deliveries differ from one unbounded call (\(got.deliveries.count) vs \(want.deliveries.count))")
        #expect(got.outcomes == want.outcomes, "outcomes differ from one unbounded call (\(got.outcomes.count) vs \(want.outcomes.count))")
        #expect(got.changes == want.changes, "state changes differ from one unbounded call")
        let ids = got.deliveries.map(\.identifier)
        #expect(Set(ids).count == ids.count, "a delivery twice")
        // The mix is what the test is for: on time, late, coalesced and missed fires all occur.
        let kinds = Set(got.deliveries.map { "\($0.outcome)".prefix(5) })
        #expect(kinds.count >= 3, "\(kinds)")
        #expect(got.outcomes.contains { $0.kind == .missed })
        // Both engines go on alike: the repeating requests' next fires.
        var later = EngineOutput()
        repeat { later.append(engine.advance(clock: Self.clock(400))) } while engine.hasDeferredFires
        let laterReference = reference.advance(clock: Self.clock(400))
        #expect(!laterReference.deliveries.isEmpty)
        #expect(later.deliveries == laterReference.deliveries && later.outcomes == laterReference.outcomes)
        #expect(engine.nextWakeup.monotonic == reference.nextWakeup.monotonic && engine.nextWakeup.wall == reference.nextWakeup.wall)
    }

    /// A wall clock step back while fires wait ends the wake's judgement: what is left is handled
    /// as of the new clock, nothing is lost or doubled.
    @Test func aClockStepWhileFiresWaitLosesNothing() throws {
        var engine = try Self.loaded()
        _ = engine.advance(clock: Self.clock(120))
        #expect(engine.hasDeferredFires)
        var stepped = Self.clock(121)
        stepped.wall = stepped.wall.adding(seconds: -3_600)
        var outs = EngineOutput()
        var calls = 0
        repeat {
            outs.append(engine.advance(clock: stepped))
            stepped.monotonic = MonotonicInstant(nanosecondsSinceBoot: stepped.monotonic.nanosecondsSinceBoot + 1_000_000)
            calls += 1
        } while engine.hasDeferredFires && calls < 10_000
        let ids = outs.deliveries.map(\.identifier)
        #expect(Set(ids).count == ids.count, "a delivery twice")
        #expect(!engine.hasDeferredFires)
    }
}
