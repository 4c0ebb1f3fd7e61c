import CivilTime
import LocalNotifications
import SeededRandom
import Testing

@Suite struct ResponseAndCapTests {
    static let start = instant("2026-07-01T00:00:00Z")

    @Test func snoozeSchedulesTheContentAgain() throws {
        var sim = Simulation(engine: makeEngine(), start: Self.start)
        try sim.take(sim.engine.setCategories([NotificationCategory(identifier: "REMINDER", actions: [
            NotificationAction(identifier: "snooze", title: "Later", snoozeSeconds: 600),
            NotificationAction(identifier: "done", title: "Done"),
        ])]))
        var r = daily("check", hour: 7, minute: 0, tz: "UTC")
        r.content.categoryIdentifier = "REMINDER"
        try sim.add(r)
        sim.run(until: instant("2026-07-01T07:00:30Z"))
        let d = try #require(sim.deliveries("check").first)
        #expect(sim.engine.badgeCount == 1)
        try sim.respond(to: d.identifier, action: "snooze")
        #expect(sim.engine.badgeCount == 0)
        #expect(sim.engine.delivered.first?.response == "snooze")
        let snoozeID = NotificationEngine.snoozeIdentifier(of: "check")
        #expect(sim.engine.pending(snoozeID, clock: sim.clock) != nil)
        sim.run(until: instant("2026-07-01T07:20:00Z"))
        let again = sim.deliveries(snoozeID)
        #expect(again.count == 1)
        #expect(again.first?.content == r.content)
        #expect(sim.events.first { $0.requestIdentifier == snoozeID }?.time == instant("2026-07-01T07:10:30Z").secondsSinceEpoch)
        #expect(sim.engine.pending(snoozeID, clock: sim.clock) == nil)       // one-shot
        // Answering twice, unknown actions and unknown deliveries are errors that say so.
        #expect(throws: RequestError.self) { try sim.respond(to: d.identifier, action: "done") }
        do { try sim.respond(to: again[0].identifier, action: "launch") } catch {
            #expect(error.rule == .unknownAction)
            #expect(error.message.contains("done"))
        }
        do { try sim.respond(to: "nope/1/1", action: "default") } catch { #expect(error.rule == .unknownDelivery) }
        try sim.respond(to: again[0].identifier, action: "done")
        #expect(sim.engine.badgeCount == 0)
    }

    @Test func snoozingASnoozeKeepsOneSuffix() throws {
        var sim = Simulation(engine: makeEngine(), start: Self.start)
        try sim.add(interval("x", seconds: 60, repeats: false))
        sim.run(until: instant("2026-07-01T00:01:00Z"))
        try sim.respond(to: try #require(sim.deliveries("x").first).identifier, action: "snooze")
        sim.run(until: instant("2026-07-01T00:10:30Z"))
        let first = try #require(sim.deliveries("x~snooze").first)
        try sim.respond(to: first.identifier, action: "snooze")
        #expect(sim.engine.pending("x~snooze", clock: sim.clock) != nil)
        #expect(sim.engine.pending("x~snooze~snooze", clock: sim.clock) == nil)
        sim.run(until: instant("2026-07-01T00:20:00Z"))
        #expect(sim.deliveries("x~snooze").count == 2)
    }

    @Test func defaultSnoozeIsNineMinutes() throws {
        var sim = Simulation(engine: makeEngine(), start: Self.start)
        try sim.add(interval("x", seconds: 60, repeats: false))
        sim.run(until: instant("2026-07-01T00:01:00Z"))
        let d = try #require(sim.deliveries("x").first)
        try sim.respond(to: d.identifier, action: "snooze")
        sim.run(until: instant("2026-07-01T00:20:00Z"))
        #expect(sim.events.last { $0.delivery != nil }?.time == instant("2026-07-01T00:10:00Z").secondsSinceEpoch)
    }

    @Test func capEvictsTheLatestFiringAndSaysSo() throws {
        var sim = Simulation(engine: makeEngine { $0.pendingCap = 3 }, start: Self.start)
        try sim.add(interval("in-4h", seconds: 4 * 3600))
        try sim.add(interval("in-1h", seconds: 3600))
        try sim.add(daily("at-02", hour: 2, minute: 0, tz: "UTC"))
        try sim.add(interval("in-3h", seconds: 3 * 3600))       // 4 pending: the one firing last goes
        #expect(sim.engine.pendingCount == 3)
        #expect(sim.engine.pending("in-4h", clock: sim.clock) == nil)
        let evicted = sim.outcomes("in-4h", .evicted)
        #expect(evicted.count == 1)
        #expect(evicted.first?.detail.contains("pending cap of 3") == true)
        try sim.add(interval("in-5h", seconds: 5 * 3600))       // fires last itself: evicted at once, reported
        #expect(sim.outcomes("in-5h", .evicted).count == 1)
        #expect(sim.engine.pending("in-5h", clock: sim.clock) == nil)
        // Location requests do not count against the time-based cap.
        try sim.add(NotificationRequest(identifier: "depot", content: NotificationContent(title: "depot"),
                                        trigger: .location(LocationTrigger(shape: .circle(try .init(center: .init(latitude: 52, longitude: 13), radius: 100)), repeats: true))))
        #expect(sim.engine.pendingCount == 4)
        // A repeating request counts once, whatever its number of future fires.
        sim.run(until: instant("2026-07-02T03:00:00Z"))
        #expect(sim.deliveries("at-02").count == 2)
    }

    /// A cap lowered by a reload evicts every request over it at once, the latest-firing first, each
    /// with its outcome (the many-evictions path: one pass over the pending requests).
    @Test func aLoweredCapEvictsTheLatestFiringAtOnce() throws {
        var sim = Simulation(engine: makeEngine { $0.pendingCap = 2_000 }, start: Self.start)
        var seconds = Array(Int64(1) ... 1_000)
        var rng = SplitMix64(seed: 0xCA9_2026)
        seconds.shuffle(using: &rng)
        for s in seconds { try sim.add(interval("r\(s)", seconds: s * 60, repeats: false)) }
        #expect(sim.engine.pendingCount == 1_000)
        var lowered = sim.engine.configuration
        lowered.pendingCap = 100
        sim.take(sim.engine.reconfigure(lowered, clock: sim.clock))
        #expect(sim.engine.pendingCount == 100)
        #expect((1 ... 100).allSatisfy { sim.engine.pending("r\($0)", clock: sim.clock) != nil })
        #expect(sim.engine.pending("r101", clock: sim.clock) == nil)
        #expect(sim.outcomes("r1000", .evicted).count == 1)
        #expect(sim.events.filter { $0.outcome?.kind == .evicted }.count == 900)
    }

    @Test func replacingKeepsOneRequestAndANewGeneration() throws {
        var sim = Simulation(engine: makeEngine(), start: Self.start)
        try sim.add(interval("x", seconds: 60, repeats: false))
        sim.run(until: instant("2026-07-01T00:01:00Z"))
        try sim.add(interval("x", seconds: 60, repeats: false))
        try sim.add(interval("x", seconds: 120, repeats: false))   // replaces the pending one
        #expect(sim.engine.pendingCount == 1)
        sim.run(until: instant("2026-07-01T00:10:00Z"))
        let ids = sim.deliveries("x").map(\.identifier)
        #expect(ids.count == 2)
        #expect(Set(ids).count == 2)
        #expect(sim.events.last { $0.delivery != nil }?.time == instant("2026-07-01T00:03:00Z").secondsSinceEpoch)
    }

    @Test func quietHoursSilenceActiveButNotTimeSensitiveOrCritical() throws {
        var sim = Simulation(engine: makeEngine(zone: "Europe/Berlin") {
            $0.alertSettings.quietHours = QuietHours(startMinute: 22 * 60, endMinute: 6 * 60 + 30)
        }, start: Self.start)
        for level in InterruptionLevel.allCases {
            var r = daily(level.rawValue, hour: 23, minute: 0, tz: nil)
            r.content.interruptionLevel = level
            try sim.add(r)
        }
        sim.run(until: instant("2026-07-01T22:00:00Z"))
        let signals = Dictionary(uniqueKeysWithValues: InterruptionLevel.allCases.map { ($0, sim.deliveries($0.rawValue).first!.signal) })
        #expect(signals[.passive]?.pattern == nil)
        #expect(signals[.active]?.pattern == nil)
        #expect(signals[.active]?.quietReason == "quiet hours")
        #expect(signals[.active]?.led == true)
        #expect(signals[.timeSensitive]?.pattern == "default")
        #expect(signals[.critical]?.pattern == "alarm")
        #expect(signals[.critical]?.untilAcknowledged == true)
    }
}
