import CivilTime
import LocalNotifications
import Testing

/// Three days with the agent down, then a restart from the durable state, under each missed-fire
/// policy; and a restart that must not repeat a fire.
@Suite struct DowntimeScenarioTests {
    static let start = instant("2026-06-01T00:00:00Z")

    func run(_ policy: MissedFirePolicy, reboot: Bool) throws -> Simulation {
        var sim = Simulation(engine: makeEngine(), start: Self.start)
        try sim.add(daily("daily", hour: 8, minute: 0, tz: "Europe/Berlin", missed: policy))   // 06:00Z
        try sim.add(interval("hourly", seconds: 3600, missed: policy))
        sim.run(until: instant("2026-06-01T12:00:00Z"))
        #expect(sim.deliveries("daily").count == 1)
        #expect(sim.deliveries("hourly").count == 12)
        // Down from 12:00 on the 1st until 08:30 on the 4th (3 days less a bit): 06:00Z fires of
        // the 2nd, 3rd and 4th were missed, the last 2.5 h before the restart.
        sim.restart(at: instant("2026-06-04T08:30:00Z"), reboot: reboot, fresh: makeEngine())
        return sim
    }

    @Test(arguments: [false, true])
    func coalesce(reboot: Bool) throws {
        var sim = try run(.coalesce, reboot: reboot)
        let d = sim.deliveries("daily")
        #expect(d.count == 2)
        #expect(d.last?.outcome == .coalesced(count: 3))
        #expect(d.last?.scheduled == instant("2026-06-04T06:00:00Z"))
        let h = sim.deliveries("hourly")
        #expect(h.last?.outcome == .coalesced(count: 68))       // 13:00 on the 1st … 08:00 on the 4th
        sim.run(until: instant("2026-06-05T12:00:00Z"))
        #expect(sim.deliveries("daily").count == 3)
        #expect(sim.noDuplicateDeliveries)
        // Hourly fires continue on the original grid (anchor + k·interval), from the wall-clock start.
        let times = sim.events.filter { $0.requestIdentifier == "hourly" && $0.delivery != nil }.map(\.time).suffix(5)
        for t in times.dropFirst() { #expect(t % 3600 == 0, "hourly fire at \(t) is off the grid") }
    }

    @Test func deliverLateWithinGrace() throws {
        let sim = try run(.deliverLate(graceSeconds: 3 * 3600), reboot: true)
        let d = sim.deliveries("daily")
        #expect(d.count == 2)
        #expect(d.last?.outcome == .late)
        #expect(d.last?.scheduled == instant("2026-06-04T06:00:00Z"))
        #expect(sim.outcomes("daily", .missed).map(\.count) == [2])
        #expect(sim.outcomes("daily", .missed).first?.firstFire == instant("2026-06-02T06:00:00Z"))
        #expect(sim.outcomes("daily", .missed).first?.lastFire == instant("2026-06-03T06:00:00Z"))
        // The hourly's last missed fire (08:00) is 30 min old: delivered late, 67 missed.
        #expect(sim.deliveries("hourly").last?.outcome == .late)
        #expect(sim.outcomes("hourly", .missed).map(\.count) == [67])
    }

    @Test func deliverLateBeyondGrace() throws {
        let sim = try run(.deliverLate(graceSeconds: 3600), reboot: false)
        #expect(sim.deliveries("daily").count == 1)
        #expect(sim.outcomes("daily", .missed).map(\.count) == [3])
    }

    @Test func skip() throws {
        var sim = try run(.skip, reboot: true)
        #expect(sim.deliveries("daily").count == 1)
        #expect(sim.deliveries("hourly").count == 12)
        #expect(sim.outcomes("daily", .missed).map(\.count) == [3])
        #expect(sim.outcomes("hourly", .missed).map(\.count) == [68])
        sim.run(until: instant("2026-06-05T07:00:00Z"))
        #expect(sim.deliveries("daily").count == 2)                 // the 5th, on time
        #expect(sim.deliveries("daily").last?.outcome == .onTime)
    }

    @Test func restartWithoutDowntimeRepeatsNothingAndKeepsDelivered() throws {
        var sim = Simulation(engine: makeEngine(), start: Self.start)
        try sim.add(daily("daily", hour: 6, minute: 0, tz: "UTC"))
        try sim.add(interval("once", seconds: 7 * 3600, repeats: false))
        sim.run(until: instant("2026-06-01T06:00:00Z"))
        #expect(sim.deliveries("daily").count == 1)
        sim.restart(at: instant("2026-06-01T06:00:00Z"), reboot: false, fresh: makeEngine())
        #expect(sim.engine.delivered.count == 1)
        #expect(sim.engine.pendingCount == 2)
        sim.run(until: instant("2026-06-02T06:30:00Z"))
        #expect(sim.deliveries("daily").count == 2)
        #expect(sim.deliveries("once").count == 1)
        #expect(sim.deliveries("once").first?.outcome == .onTime)
        #expect(sim.engine.pendingCount == 1)
        #expect(sim.noDuplicateDeliveries)
    }
}
