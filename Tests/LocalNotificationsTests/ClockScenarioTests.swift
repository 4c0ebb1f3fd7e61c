import CivilTime
import LocalNotifications
import Position
import Testing

/// The wall clock steps, loses trust, and the device zone changes: in virtual time.
@Suite struct ClockScenarioTests {
    static let start = instant("2026-05-04T00:00:00Z")

    @Test func zoneChangeMidSchedule() throws {
        let ny = TestZones.rules("America/New_York"), berlin = TestZones.rules("Europe/Berlin")
        var sim = Simulation(engine: makeEngine(zone: "America/New_York"), start: Self.start)
        try sim.add(daily("floating", hour: 7, minute: 0, tz: nil))
        try sim.add(daily("fixed", hour: 7, minute: 0, tz: "America/New_York"))
        sim.run(until: instant("2026-05-07T00:00:00Z"))                  // 3 days in New York
        sim.setDeviceZone(berlin)                                        // 20:00 Berlin
        sim.run(until: instant("2026-05-10T12:00:00Z"))
        #expect(sim.noDuplicateDeliveries)
        let floating = sim.deliveries("floating").map { $0.date! }
        let fixed = sim.deliveries("fixed").map { $0.date! }
        #expect(floating.count == 7, "\(floating)")
        for t in floating where t < instant("2026-05-07T00:00:00Z") { #expect(local(t, ny).hour == 7) }
        for t in floating where t > instant("2026-05-07T00:00:00Z") { #expect(local(t, berlin).hour == 7 && local(t, berlin).minute == 0) }
        // The fixed-zone trigger does not move.
        #expect(fixed.count == 7)
        for t in fixed { #expect(local(t, ny).hour == 7) }
    }

    @Test func wallClockStepsForwardAndBackADay() throws {
        var sim = Simulation(engine: makeEngine(), start: Self.start)
        try sim.add(daily("coalesce", hour: 9, minute: 0, tz: "UTC", missed: .coalesce))
        try sim.add(daily("skip", hour: 9, minute: 0, tz: "UTC", missed: .skip))
        try sim.add(interval("tick", seconds: 3600))
        sim.run(until: instant("2026-05-04T12:00:00Z"))
        #expect(sim.deliveries("coalesce").count == 1)
        sim.stepWallClock(by: 86_400)        // the wall says 2026-05-05T12:00: the 09:00 of the 5th was stepped over
        #expect(sim.deliveries("coalesce").count == 2)
        #expect(sim.deliveries("coalesce").last?.outcome == .late)
        #expect(sim.outcomes("skip", .missed).map(\.count) == [1])
        sim.run(until: instant("2026-05-05T12:00:00Z"))     // wall 2026-05-06T12:00
        sim.stepWallClock(by: -86_400)       // corrected: wall 2026-05-05T12:00 again
        sim.run(until: instant("2026-05-07T12:00:00Z"))     // wall 2026-05-07T12:00
        #expect(sim.noDuplicateDeliveries)
        // Fires by scheduled instant: the 4th, 5th (late), 6th (while ahead), then after the clock
        // went back the 6th again (its real fire) and the 7th; the repeat is recorded.
        let scheduled = sim.deliveries("coalesce").map { $0.scheduled!.description }
        #expect(scheduled == ["2026-05-04T09:00:00Z", "2026-05-05T09:00:00Z", "2026-05-06T09:00:00Z",
                              "2026-05-06T09:00:00Z", "2026-05-07T09:00:00Z"])
        let repeated = sim.outcomes("coalesce", .repeated)
        #expect(repeated.map(\.count) == [1] && repeated.first?.firstFire == instant("2026-05-06T09:00:00Z"), "\(repeated)")
        // The interval trigger runs on monotonic time: one fire per true hour, steps or not.
        let ticks = sim.events.filter { $0.requestIdentifier == "tick" && $0.delivery != nil }.map(\.time)
        #expect(ticks.count == 84)
        for (a, b) in zip(ticks, ticks.dropFirst()) { #expect(b - a == 3600) }
    }

    /// A tester sets the clock to tomorrow 07:30 and resets it: the daily 07:00 reminder fires
    /// (coalesced) while the clock is ahead, and after the reset still fires today, tomorrow and
    /// the day after at 07:00 real time; the two fires handled ahead are recorded as repeated.
    @Test func clockSetAheadAndResetDoesNotSkipTheNextRealFires() throws {
        for policy in [MissedFirePolicy.coalesce, .skip, .deliverLate(graceSeconds: 3600)] {
            var sim = Simulation(engine: makeEngine(), start: Self.start)          // 2026-05-04T00:00
            try sim.add(daily("check", hour: 7, minute: 0, tz: "UTC", missed: policy))
            sim.run(until: instant("2026-05-04T06:00:00Z"))
            let ahead: Int64 = 86_400 + 5400
            sim.stepWallClock(by: ahead)                                            // wall: the 5th, 07:30
            sim.run(until: instant("2026-05-04T06:10:00Z"))
            sim.stepWallClock(by: -ahead)                                           // wall: the 4th, 06:10 again
            let reset = sim.events.count
            sim.run(until: instant("2026-05-06T08:00:00Z"))
            let after = sim.events[reset...].compactMap { $0.requestIdentifier == "check" ? $0.delivery : nil }
            #expect(after.map { $0.scheduled!.description } == ["2026-05-04T07:00:00Z", "2026-05-05T07:00:00Z", "2026-05-06T07:00:00Z"],
                    "\(policy): \(after)")
            for d in after { #expect(d.outcome == .onTime && d.date == d.scheduled, "\(policy): \(d)") }
            let repeated = sim.outcomes("check", .repeated)
            #expect(repeated.count == 1, "\(policy): \(repeated)")
            #expect(repeated.first?.count == 2 && repeated.first?.firstFire == instant("2026-05-04T07:00:00Z")
                    && repeated.first?.lastFire == instant("2026-05-05T07:00:00Z"), "\(policy): \(repeated)")
            #expect(sim.noDuplicateDeliveries)
        }
    }

    @Test func clockStepsTo1970AndBack() throws {
        var sim = Simulation(engine: makeEngine(), start: Self.start)
        try sim.add(daily("late", hour: 9, minute: 0, tz: "UTC", missed: .deliverLate(graceSeconds: 6 * 3600)))
        try sim.add(daily("coalesce", hour: 9, minute: 0, tz: "UTC", missed: .coalesce))
        try sim.add(interval("tick", seconds: 1800))
        sim.run(until: instant("2026-05-04T10:00:00Z"))
        let offset = -sim.clock.wall.secondsSinceEpoch + 3600   // the RTC lost power: 1970-01-01T01:00
        sim.stepWallClock(by: offset)
        #expect(sim.engine.wallTrusted == false)
        let before = sim.deliveries("coalesce").count
        sim.run(until: instant("2026-05-06T10:00:00Z"))      // two days on a 1970 clock: calendar held
        #expect(sim.deliveries("coalesce").count == before)
        #expect(sim.engine.pending(clock: sim.clock).first { $0.request.identifier == "coalesce" }?.waitingFor != nil)
        // Intervals go on: 48 h / 30 min.
        #expect(sim.deliveries("tick").count == 20 + 96)
        // Nothing was delivered with a 1970 date, and nothing early.
        for d in sim.deliveries("tick") { if let date = d.date { #expect(date >= instant("2026-01-01T00:00:00Z")) } }
        sim.stepWallClock(by: -offset)                        // NTP is back: wall = true time
        // The 09:00 fires of the 5th and 6th were held: coalesced into one; "late" delivers the 6th
        // (1 h late, within 6 h) and records the 5th as missed.
        let c = sim.deliveries("coalesce").last!
        #expect(c.outcome == .coalesced(count: 2))
        #expect(sim.deliveries("late").last?.outcome == .late)
        #expect(sim.deliveries("late").last?.scheduled == instant("2026-05-06T09:00:00Z"))
        #expect(sim.outcomes("late", .missed).first?.count == 1)
        sim.run(until: instant("2026-05-08T10:00:00Z"))
        #expect(sim.deliveries("coalesce").count == before + 3)
        #expect(sim.noDuplicateDeliveries)
    }

    @Test func untrustedAtStartThenGNSSTimeEstablishesTrust() throws {
        var sim = Simulation(engine: makeEngine(), start: Self.start)
        sim.wallTrusted = false                                 // no NTP in the vehicle
        try sim.add(daily("seven", hour: 7, minute: 0, tz: "UTC"))
        sim.run(until: instant("2026-05-04T08:00:00Z"))
        #expect(sim.deliveries("seven").isEmpty)
        // A fix whose time agrees with the wall clock.
        var fix = Fix(mode: .threeD, isValid: true)
        fix.time = instant("2026-05-04T08:00:01Z")
        fix.coordinate = Coordinate(latitude: 48.1, longitude: 11.5)
        sim.feed(fix, atNanoseconds: instant("2026-05-04T08:00:01Z").secondsSinceEpoch * 1_000_000_000)
        #expect(sim.engine.wallTrusted)
        sim.run(until: instant("2026-05-06T08:00:00Z"))
        // Added while untrusted: counted from the moment of trust, so today's 07:00 is not "missed".
        #expect(sim.deliveries("seven").map { $0.scheduled!.description } == ["2026-05-05T07:00:00Z", "2026-05-06T07:00:00Z"])
    }
}
