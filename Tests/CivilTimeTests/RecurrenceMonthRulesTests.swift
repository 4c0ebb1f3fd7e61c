import CivilTime
import Testing

/// Rules whose days are picked inside each month (last weekday, last day, an ordinal weekday, a
/// day number, Friday the 13th) over a whole Gregorian cycle of 400 years: every month of every
/// kind (each month length, leap or not, starting on each weekday) gives the instance its
/// definition gives, found day by day; with BYMONTH too.
@Suite
struct RecurrenceMonthRulesTests {
    /// Day-by-day reference: the days of a month with `pick(day, weekday 1 = Sunday, length, month)`.
    static func reference(_ pick: (Int, Int, Int, Int) -> Bool) -> [CivilDateTime] {
        var out: [CivilDateTime] = []
        for y in Int64(1600) ..< 2000 {
            for m in 1 ... 12 {
                let length = CivilDays.daysInMonth(year: y, month: m)
                let first = CivilDays.dayNumber(year: y, month: m, day: 1)
                for d in 1 ... length where pick(d, CivilDays.weekday(dayNumber: first + Int64(d - 1)), length, m) {
                    out.append(CivilDateTime(year: y, month: m, day: d, hour: 9))
                }
            }
        }
        return out
    }

    static let cases: [(String, @Sendable (Int, Int, Int, Int) -> Bool)] = [
        ("FREQ=MONTHLY;BYDAY=-1FR", { d, w, n, _ in w == 6 && d + 7 > n }),
        ("FREQ=MONTHLY;BYMONTHDAY=-1", { d, _, n, _ in d == n }),
        ("FREQ=MONTHLY;BYMONTHDAY=29", { d, _, _, _ in d == 29 }),
        ("FREQ=MONTHLY;BYDAY=2MO", { d, w, _, _ in w == 2 && (8 ... 14).contains(d) }),
        ("FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13", { d, w, _, _ in w == 6 && d == 13 }),
        ("FREQ=MONTHLY;BYDAY=MO,SA;BYMONTHDAY=-3,-2,1", { d, w, n, _ in (w == 2 || w == 7) && (d == 1 || d == n - 2 || d == n - 1) }),
        ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-1", { d, _, n, m in m == 2 && d == n }),
        ("FREQ=YEARLY;BYMONTH=2,11;BYDAY=-1FR", { d, w, n, m in (m == 2 || m == 11) && w == 6 && d + 7 > n }),
    ]

    @Test(arguments: 0 ..< cases.count)
    func everyMonthOfFourHundredYearsGivesTheDefinedDay(_ index: Int) throws {
        let (text, pick) = Self.cases[index]
        let expected = Self.reference(pick)
        let start = CivilDateTime(year: 1600, month: 1, day: 1, hour: 9)
        let schedule = try RecurrenceSchedule(try RecurrenceRule(parsing: text), start: start)
        let got = schedule.localInstances(from: start, limit: expected.count + 1).filter { $0.year < 2000 }
        #expect(got.count == expected.count, "\(text): \(got.count) instances in 1600…1999, expected \(expected.count)")
        if let k = zip(got, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            Issue.record("\(text): instance \(k) is \(got[k].iso8601), expected \(expected[k].iso8601)")
        }
    }
}
