import CivilTime
import FencepostLinux
import Foundation
import Testing
import SeededRandom

/// The brute-force reference checked on its own: the worked examples of SEMANTICS.md by hand, and
/// its week numbering against Foundation's `Calendar.dateComponents` (which, unlike Foundation's
/// `nextDate`, we trust).
@Suite struct CalendarOracleBruteForceTests {
    static let zones = SystemZones()

    func next(_ m: CalendarMatch, _ zone: String, after iso: String, _ policy: MatchingPolicy = .nextTime,
              _ repeated: RepeatedTimePolicy = .first, _ w: WeekRules = .gregorianDefault) throws -> String {
        let z = try Self.zones.rules(named: zone)
        let after = try #require(CalendarOracleISO.parse(iso))
        let r = BruteForceNextDate(zone: z).nextDate(after: after, matching: m, policy: policy, repeatedTime: repeated,
                                                     weekRules: w)
        return OracleFormat.local(r) { z.utcOffset(atSecondsSinceEpoch: $0) }
    }

    @Test func springForwardGapUnderEachPolicy() throws {
        let m = CalendarMatch(hour: 2, minute: 30)
        let a = "2026-03-08T05:00:00Z"
        #expect(try next(m, "America/New_York", after: a, .nextTime) == "2026-03-08T03:00:00-04:00")
        #expect(try next(m, "America/New_York", after: a, .nextTimePreservingSmallerComponents) == "2026-03-08T03:30:00-04:00")
        #expect(try next(m, "America/New_York", after: a, .previousTimePreservingSmallerComponents) == "2026-03-08T01:30:00-05:00")
        #expect(try next(m, "America/New_York", after: a, .strict) == "2026-03-09T02:30:00-04:00")
    }

    @Test func fallBackRepeatedHour() throws {
        let ny = "America/New_York"
        #expect(try next(CalendarMatch(hour: 1, minute: 30), ny, after: "2026-11-01T05:00:00Z", .strict, .first) == "2026-11-01T01:30:00-04:00")
        #expect(try next(CalendarMatch(hour: 1, minute: 30), ny, after: "2026-11-01T05:00:00Z", .strict, .last) == "2026-11-01T01:30:00-05:00")
        // Between the two: the first passed, no second fire that day.
        #expect(try next(CalendarMatch(hour: 1, minute: 50), ny, after: "2026-11-01T06:45:00Z") == "2026-11-02T01:50:00-05:00")
        #expect(try next(CalendarMatch(hour: 1, minute: 50), ny, after: "2026-11-01T06:45:00Z", .nextTime, .last) == "2026-11-01T01:50:00-05:00")
        // Hourly: both 01:30s.
        #expect(try next(CalendarMatch(minute: 30), ny, after: "2026-11-01T05:40:00Z") == "2026-11-01T01:30:00-05:00")
        // Per second (minute periods): the repeated minute fires twice.
        #expect(try next(CalendarMatch(second: 0), ny, after: "2026-11-01T05:59:30Z") == "2026-11-01T01:00:00-05:00")
    }

    @Test func missingDaysOfMonth() throws {
        let ny = "America/New_York"
        let a = "2026-09-15T10:17:23Z"
        let m = CalendarMatch(day: 31, hour: 9)
        #expect(try next(m, ny, after: a, .strict) == "2026-10-31T09:00:00-04:00")
        #expect(try next(m, ny, after: a, .nextTime) == "2026-10-01T00:00:00-04:00")
        #expect(try next(m, ny, after: a, .nextTimePreservingSmallerComponents) == "2026-10-01T09:00:00-04:00")
        #expect(try next(m, ny, after: a, .previousTimePreservingSmallerComponents) == "2026-09-30T09:00:00-04:00")
        #expect(try next(CalendarMatch(month: 2, day: 29), ny, after: "2026-01-15T10:17:23Z", .strict) == "2028-02-29T00:00:00-05:00")
        #expect(try next(CalendarMatch(month: 2, day: 29), ny, after: "2026-01-15T10:17:23Z") == "2026-03-01T00:00:00-05:00")
        #expect(try next(CalendarMatch(month: 2, day: 30), ny, after: "2026-01-15T10:17:23Z", .strict) == "nil")
        #expect(try next(CalendarMatch(year: 2027, month: 2, day: 30), ny, after: "2026-01-15T10:17:23Z", .previousTimePreservingSmallerComponents) == "2027-02-28T00:00:00-05:00")
        // Weekday combinations are not "missing days": nothing in that period.
        #expect(try next(CalendarMatch(day: 13, weekday: 6), ny, after: "2026-01-01T00:00:00Z", .nextTime) == "2026-02-13T00:00:00-05:00")
    }

    @Test func gapsThatAreNotWholeHours() throws {
        // Lord Howe: 02:00 → 02:30 on the first Sunday of October 2026 (Oct 4).
        let lh = "Australia/Lord_Howe"
        #expect(try next(CalendarMatch(hour: 2), lh, after: "2026-10-03T12:00:00Z", .strict) == "2026-10-04T02:30:00+11:00")
        #expect(try next(CalendarMatch(hour: 2, minute: 15), lh, after: "2026-10-03T12:00:00Z", .nextTimePreservingSmallerComponents) == "2026-10-04T03:15:00+11:00")
        #expect(try next(CalendarMatch(hour: 2, minute: 15), lh, after: "2026-10-03T12:00:00Z", .previousTimePreservingSmallerComponents) == "2026-10-04T01:15:00+10:30")
        #expect(try next(CalendarMatch(hour: 2, minute: 15), lh, after: "2026-10-03T12:00:00Z", .strict) == "2026-10-05T02:15:00+11:00")
        // Hourly across the gap: hour 2 holds 02:30–02:59 only.
        #expect(try next(CalendarMatch(minute: 15), lh, after: "2026-10-03T15:20:00Z") == "2026-10-04T03:15:00+11:00")
        #expect(try next(CalendarMatch(minute: 45), lh, after: "2026-10-03T15:20:00Z") == "2026-10-04T02:45:00+11:00")
    }

    @Test func wholeSkippedDay() throws {
        // Pacific/Apia skipped 2011-12-30.
        let apia = "Pacific/Apia"
        #expect(try next(CalendarMatch(hour: 9), apia, after: "2011-12-29T20:00:00Z", .strict) == "2011-12-31T09:00:00+14:00")
        #expect(try next(CalendarMatch(day: 30), apia, after: "2011-12-20T00:00:00Z", .nextTime) == "2011-12-31T00:00:00+14:00")
        #expect(try next(CalendarMatch(day: 30), apia, after: "2011-12-20T00:00:00Z", .strict) == "2012-01-30T00:00:00+14:00")
    }

    @Test func weekBasedComponents() throws {
        let utc = "UTC"
        // 2026-01-01 is a Thursday.
        #expect(try next(CalendarMatch(weekday: 2, weekdayOrdinal: 2), utc, after: "2026-01-01T00:00:00Z") == "2026-01-12T00:00:00+00:00")
        #expect(try next(CalendarMatch(weekday: 2, weekOfYear: 1), utc, after: "2025-12-01T00:00:00Z", .nextTime, .first, .iso8601) == "2025-12-29T00:00:00+00:00")
        #expect(try next(CalendarMatch(weekday: 2, weekOfYear: 1), utc, after: "2025-12-01T00:00:00Z") == "2025-12-29T00:00:00+00:00")
        #expect(try next(CalendarMatch(weekday: 2, weekOfYear: 2), utc, after: "2025-12-01T00:00:00Z") == "2026-01-05T00:00:00+00:00")
        #expect(try next(CalendarMatch(weekOfMonth: 0), utc, after: "2026-01-05T00:00:00Z", .nextTime, .first, .iso8601) == "2026-02-01T00:00:00+00:00")
        #expect(try next(CalendarMatch(yearForWeekOfYear: 2027), utc, after: "2026-06-01T00:00:00Z", .nextTime, .first, .iso8601) == "2027-01-04T00:00:00+00:00")
        #expect(try next(CalendarMatch(dayOfYear: 366), utc, after: "2026-06-01T00:00:00Z") == "2028-12-31T00:00:00+00:00")
    }

    @Test func yearBoundsTheSearch() throws {
        #expect(try next(CalendarMatch(year: 2020, month: 5), "UTC", after: "2024-01-01T00:00:00Z") == "nil")
        #expect(try next(CalendarMatch(year: 3000, month: 5, day: 2), "UTC", after: "2024-01-01T00:00:00Z") == "3000-05-02T00:00:00+00:00")
    }

    /// Week numbering (SEMANTICS.md §4) on random days with random week rules, against Foundation.
    @Test func weekNumberingAgreesWithFoundation() {
        var g = SplitMix64(seed: 0xC0FFEE)
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC")!
        var checked = 0
        for _ in 0..<3000 {
            let w = WeekRules(firstWeekday: g.int(1...7), minimumDaysInFirstWeek: g.int(1...7))
            cal.firstWeekday = w.firstWeekday
            cal.minimumDaysInFirstWeek = w.minimumDaysInFirstWeek
            // Days near year and month ends are the interesting ones.
            let y = Int64(g.int(1900...2200))
            let dn = BruteForceNextDate.jan1(y) + Int64(g.chance(0.5) ? g.int(-10...10) : g.int(0...365))
            let d = BruteForceNextDate.makeDay(dn, w)
            let c = cal.dateComponents([.year, .month, .day, .weekday, .weekdayOrdinal, .weekOfMonth, .weekOfYear,
                                        .yearForWeekOfYear, .dayOfYear],
                                       from: Date(timeIntervalSince1970: TimeInterval(dn * 86_400)))
            let ours = [Int(d.year), d.month, d.day, d.weekday, d.weekdayOrdinal, d.weekOfMonth, d.weekOfYear,
                        Int(d.yearForWeekOfYear), d.dayOfYear]
            let theirs = [c.year!, c.month!, c.day!, c.weekday!, c.weekdayOrdinal!, c.weekOfMonth!, c.weekOfYear!,
                          c.yearForWeekOfYear!, c.dayOfYear!]
            #expect(ours == theirs, "day \(dn) rules \(w)")
            checked += 1
        }
        #expect(checked == 3000)
    }
}

/// `2026-03-08T05:00:00Z` → seconds since the epoch (UTC only; test input).
enum CalendarOracleISO {
    static func parse(_ s: String) -> Int64? {
        let b = Array(s.utf8)
        guard b.count == 20, b[4] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"), b[19] == UInt8(ascii: "Z") else { return nil }
        func num(_ r: Range<Int>) -> Int? { Int(String(decoding: b[r], as: UTF8.self)) }
        guard let y = num(0..<4), let mo = num(5..<7), let d = num(8..<10), let h = num(11..<13),
              let mi = num(14..<16), let se = num(17..<19) else { return nil }
        return CivilDateTime(year: Int64(y), month: mo, day: d, hour: h, minute: mi, second: se).localSeconds
    }
}
