import CivilTime
import FencepostLinux
import Testing

/// Hand-checked cases of the calendar semantics (SEMANTICS.md). Expected instants were worked out by
/// hand and, where Foundation agrees, confirmed with Foundation on this machine; the two places where
/// the documented semantics differ from Foundation say so.
@Suite struct CalendarScheduleTests {
    static let zones = SystemZones()

    func zone(_ name: String) throws -> ZoneRules { try Self.zones.rules(named: name) }

    func next(
        _ match: CalendarMatch, _ tz: String, after iso: String,
        _ policy: MatchingPolicy = .nextTime, _ repeated: RepeatedTimePolicy = .first,
        weekRules: WeekRules = .gregorianDefault
    ) throws -> String? {
        let after = try #require(ISO8601.parse(iso))
        return match.nextDate(after: after, in: try zone(tz), policy: policy, repeatedTime: repeated,
                              weekRules: weekRules)?.description
    }

    @Test func springForwardGapUnderEachPolicy() throws {
        let m = CalendarMatch(hour: 2, minute: 30)
        let a = "2026-03-08T05:00:00Z"
        #expect(try next(m, "America/New_York", after: a, .nextTime) == "2026-03-08T07:00:00Z")           // 03:00 EDT
        #expect(try next(m, "America/New_York", after: a, .nextTimePreservingSmallerComponents) == "2026-03-08T07:30:00Z")
        #expect(try next(m, "America/New_York", after: a, .previousTimePreservingSmallerComponents) == "2026-03-08T06:30:00Z")
        #expect(try next(m, "America/New_York", after: a, .strict) == "2026-03-09T06:30:00Z")
    }

    @Test func fallBackRepeatedHour() throws {
        let ny = "America/New_York"
        #expect(try next(CalendarMatch(hour: 1, minute: 30), ny, after: "2026-11-01T05:00:00Z", .nextTime, .last) == "2026-11-01T06:30:00Z")
        #expect(try next(CalendarMatch(hour: 1, minute: 30), ny, after: "2026-11-01T05:00:00Z", .nextTime, .first) == "2026-11-01T05:30:00Z")
        // After lies between the two occurrences: the first already passed, so no second fire that day
        // (Foundation returns 06:50Z: a listed disagreement).
        #expect(try next(CalendarMatch(hour: 1, minute: 50), ny, after: "2026-11-01T06:45:00Z") == "2026-11-02T06:50:00Z")
        // Hourly: each real hour is a period, so both 01:30s fire.
        #expect(try next(CalendarMatch(minute: 30), ny, after: "2026-11-01T04:00:00Z") == "2026-11-01T04:30:00Z")
        #expect(try next(CalendarMatch(minute: 30), ny, after: "2026-11-01T05:40:00Z") == "2026-11-01T06:30:00Z")
    }

    @Test func missingDaysOfMonth() throws {
        let ny = "America/New_York"
        #expect(try next(CalendarMatch(month: 2, day: 29), ny, after: "2026-01-15T10:17:23Z") == "2026-03-01T05:00:00Z")
        #expect(try next(CalendarMatch(month: 2, day: 29), ny, after: "2026-01-15T10:17:23Z", .strict) == "2028-02-29T05:00:00Z")
        #expect(try next(CalendarMatch(month: 2, day: 30), ny, after: "2026-01-15T10:17:23Z", .strict) == nil)
        #expect(try next(CalendarMatch(day: 31, hour: 9), ny, after: "2026-09-15T10:17:23Z") == "2026-10-01T04:00:00Z")
        #expect(try next(CalendarMatch(day: 31, hour: 9), ny, after: "2026-09-15T10:17:23Z", .nextTimePreservingSmallerComponents) == "2026-10-01T13:00:00Z")
        // Foundation answers 13:17:23Z here (it copies minute and second from the start): listed.
        #expect(try next(CalendarMatch(day: 31, hour: 9), ny, after: "2026-09-15T10:17:23Z", .previousTimePreservingSmallerComponents) == "2026-09-30T13:00:00Z")
        // The substitute of the previous period can come after `after`.
        #expect(try next(CalendarMatch(day: 31, hour: 9), ny, after: "2026-10-01T08:00:00Z", .nextTimePreservingSmallerComponents) == "2026-10-01T13:00:00Z")
    }

    @Test func shapes() throws {
        let ny = "America/New_York"
        #expect(try next(CalendarMatch(hour: 7, second: 30), ny, after: "2026-09-15T10:17:23Z") == "2026-09-15T11:00:30Z")
        #expect(try next(CalendarMatch(minute: 30, weekday: 2), ny, after: "2026-09-15T10:17:23Z") == "2026-09-21T04:30:00Z")
        #expect(try next(CalendarMatch(month: 11, hour: 7), ny, after: "2026-09-15T10:17:23Z") == "2026-11-01T12:00:00Z")
        #expect(try next(CalendarMatch(weekdayOrdinal: 2), ny, after: "2026-09-15T10:17:23Z") == "2026-10-08T04:00:00Z")
        #expect(try next(CalendarMatch(weekOfYear: 10), ny, after: "2026-09-15T10:17:23Z") == "2027-02-28T05:00:00Z")
        #expect(try next(CalendarMatch(weekday: 2, weekdayOrdinal: 5), ny, after: "2026-09-15T10:17:23Z") == "2026-11-30T05:00:00Z")
        #expect(try next(CalendarMatch(year: 2025, month: 1), ny, after: "2026-09-15T10:17:23Z") == nil)
        #expect(try next(CalendarMatch(day: 13, weekday: 6), "UTC", after: "2026-01-01T00:00:00Z") == "2026-02-13T00:00:00Z")
        // ISO weeks: week 1 of 2027 starts Monday 2027-01-04.
        #expect(try next(CalendarMatch(weekday: 2, weekOfYear: 1, yearForWeekOfYear: 2027), "UTC",
                         after: "2026-06-01T00:00:00Z", weekRules: .iso8601) == "2027-01-04T00:00:00Z")
    }

    @Test func everyMinuteInsideAnOverlapTakesTheEarliestInstant() throws {
        // Found by the Foundation oracle (seed 12345, case 62750): inside a fall-back overlap, civil
        // order is not instant order; 01:30:32 EDT comes before 01:00:32 EST.
        #expect(try next(CalendarMatch(second: 32), "America/New_York", after: "2043-11-01T05:29:59Z") == "2043-11-01T05:30:32Z")
    }

    @Test func gapWithUnspecifiedHourKeepsTheMinute() throws {
        // São Paulo jumped from 00:00 to 01:00 on 2018-11-04: {day: 4, minute: 40} finds 01:40.
        #expect(try next(CalendarMatch(day: 4, minute: 40), "America/Sao_Paulo", after: "2018-11-01T00:00:00Z", .strict) == "2018-11-04T03:40:00Z")
    }

    @Test func gapsThatAreNotWholeHours() throws {
        // Lord Howe: 02:00 → 02:30 on 2026-10-04. Foundation skips the whole day here (listed).
        let lh = "Australia/Lord_Howe"
        #expect(try next(CalendarMatch(hour: 2, minute: 15), lh, after: "2026-10-03T10:00:00Z") == "2026-10-03T15:30:00Z")
        #expect(try next(CalendarMatch(hour: 2, minute: 15), lh, after: "2026-10-03T10:00:00Z", .nextTimePreservingSmallerComponents) == "2026-10-03T16:15:00Z")
        #expect(try next(CalendarMatch(hour: 2, minute: 15), lh, after: "2026-10-03T10:00:00Z", .previousTimePreservingSmallerComponents) == "2026-10-03T14:45:00Z")
        // {hour: 2} still exists from 02:30: an exact match, as in Foundation.
        #expect(try next(CalendarMatch(hour: 2), lh, after: "2026-10-03T10:00:00Z", .strict) == "2026-10-03T15:30:00Z")
    }

    @Test func wholeDayGap() throws {
        // Samoa skipped 2011-12-30 (UTC−10 → UTC+14): a daily trigger simply has no such day.
        let apia = "Pacific/Apia"
        var t = try #require(ISO8601.parse("2011-12-28T10:00:00Z"))
        var fires: [String] = []
        for _ in 0..<3 {
            t = try #require(CalendarMatch(hour: 7).nextDate(after: t, in: try zone(apia)))
            fires.append(t.description)
        }
        #expect(fires == ["2011-12-28T17:00:00Z", "2011-12-29T17:00:00Z", "2011-12-30T17:00:00Z"])
    }

    @Test func validationNamesTheComponent() {
        #expect(throws: CalendarMatchError.outOfRange(component: "month", value: 13, range: 1...12)) {
            try CalendarMatch(month: 13).validate()
        }
        #expect(throws: CalendarMatchError.outOfRange(component: "hour", value: 24, range: 0...23)) {
            try CalendarMatch(hour: 24).validate()
        }
        #expect(throws: CalendarMatchError.outOfRange(component: "weekday", value: 8, range: 1...7)) {
            try CalendarMatch(weekday: 8).validate()
        }
        #expect(throws: CalendarMatchError.outOfRange(component: "day", value: 0, range: 1...31)) {
            try CalendarMatch(day: 0).validate()
        }
        #expect(throws: CalendarMatchError.empty) { try CalendarMatch().validate() }
        #expect("\(CalendarMatchError.outOfRange(component: "month", value: 13, range: 1...12))"
            == "month 13 is out of range: it must be 1…12")
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` only: enough for hand-written test instants.
enum ISO8601 {
    static func parse(_ s: String) -> WallInstant? {
        let b = Array(s.utf8)
        guard b.count == 20, b[4] == 45, b[7] == 45, b[10] == 84, b[13] == 58, b[16] == 58, b[19] == 90 else { return nil }
        func num(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r { guard b[i] >= 48 && b[i] <= 57 else { return nil }; v = v * 10 + Int(b[i] - 48) }
            return v
        }
        guard let y = num(0..<4), let mo = num(5..<7), let d = num(8..<10),
              let h = num(11..<13), let mi = num(14..<16), let se = num(17..<19) else { return nil }
        return WallInstant(secondsSinceEpoch: CivilDateTime(year: Int64(y), month: mo, day: d, hour: h, minute: mi, second: se).localSeconds)
    }
}
