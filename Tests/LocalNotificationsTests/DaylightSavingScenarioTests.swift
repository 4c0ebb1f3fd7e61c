import CivilTime
import LocalNotifications
import Testing

/// Daily triggers across spring-forward and fall-back, in three zones, in virtual time: one
/// delivery per local day, at the matching local time (the gap's time moved forward by the
/// policy to the gap's end), never two, never none — unless the matching policy is strict, which skips only the
/// day whose time does not exist.
@Suite struct DaylightSavingScenarioTests {
    static let zones = ["America/New_York", "Europe/Berlin", "Australia/Sydney"]

    @Test(arguments: zones)
    func dailyTriggersAcrossAYearOfTransitions(zoneName: String) throws {
        let zone = TestZones.rules(zoneName)
        var sim = Simulation(engine: makeEngine(zone: zoneName) { $0.deliveredCap = 10_000 }, start: instant("2026-01-01T12:00:00Z"))
        // 07:00 exists every day; 02:30 is in the spring gap (NY, Berlin: 02:00–03:00; Sydney:
        // 02:00–03:00 in October) and repeated at fall-back.
        try sim.add(daily("seven", hour: 7, minute: 0, tz: zoneName))
        try sim.add(daily("twothirty", hour: 2, minute: 30, tz: zoneName))
        try sim.add(daily("twothirty-last", hour: 2, minute: 30, tz: nil))   // floating, device zone = the same zone
        try sim.add(daily("strict", hour: 2, minute: 30, tz: zoneName, policy: .strict))
        sim.run(until: instant("2027-01-01T12:00:00Z"))
        #expect(sim.noDuplicateDeliveries)

        // Local days fully inside the run.
        let firstDay = local(instant("2026-01-02T12:00:00Z"), zone)
        let lastDay = local(instant("2026-12-31T00:00:00Z"), zone)
        let firstN = CivilDays.dayNumber(year: firstDay.year, month: firstDay.month, day: firstDay.day)
        let lastN = CivilDays.dayNumber(year: lastDay.year, month: lastDay.month, day: lastDay.day)

        func perDay(_ id: String) -> [Int64: [CivilDateTime]] {
            var map: [Int64: [CivilDateTime]] = [:]
            for d in sim.deliveries(id) {
                let l = local(d.date!, zone)
                map[CivilDays.dayNumber(year: l.year, month: l.month, day: l.day), default: []].append(l)
                #expect(d.outcome == .onTime, "\(id) \(d.identifier) \(d.outcome)")
                #expect(d.date == d.scheduled, "\(id) delivered at \(d.date!) for \(d.scheduled!)")
            }
            return map
        }
        let seven = perDay("seven"), twoThirty = perDay("twothirty"), floating = perDay("twothirty-last"), strict = perDay("strict")
        var gapDays = 0
        for n in firstN ... lastN {
            #expect(seven[n]?.count == 1, "\(zoneName) day \(CivilDays.date(dayNumber: n)): 07:00 fired \(seven[n]?.count ?? 0) times")
            #expect(seven[n]?.first.map { $0.hour == 7 && $0.minute == 0 } == true)
            #expect(twoThirty[n]?.count == 1, "\(zoneName) day \(CivilDays.date(dayNumber: n)): 02:30 fired \(twoThirty[n]?.count ?? 0) times")
            #expect(floating[n]?.count == 1)
            guard let t = twoThirty[n]?.first else { continue }
            if t.hour == 3 && t.minute == 0 {
                gapDays += 1   // nextTime (Foundation's): the missing 02:30 becomes the gap's end, 03:00
                #expect(strict[n] == nil, "strict must skip the gap day")
            } else {
                #expect(t.hour == 2 && t.minute == 30, "\(zoneName) \(t.iso8601)")
                #expect(strict[n]?.count == 1)
            }
        }
        #expect(gapDays == 1, "\(zoneName): exactly one spring-forward day in the year, saw \(gapDays)")
        for e in sim.events where e.outcome != nil { Issue.record("unexpected outcome \(e.outcome!)") }
    }
}
