@testable import CivilTime
import Testing

/// ``CivilMonthIndex`` against ``CivilDays``' arithmetic on every day of its span and the days
/// just outside it.
@Suite struct CivilMonthIndexTests {
    @Test func everyDayIsInTheMonthTheCalendarSays() {
        let index = CivilMonthIndex.shared
        var failures: [String] = []
        for d in Int64(0) ..< CivilMonthIndex.endDay {
            let (y, m, dd) = CivilDays.date(dayNumber: d)
            guard let i = index.month(containing: d) else { failures.append("day \(d) (\(y)-\(m)-\(dd)): no month"); continue }
            let (first, shape, month) = index.month(i)
            let expectedFirst = d - Int64(dd - 1)
            let length = CivilDays.daysInMonth(year: y, month: m)
            let expectedShape = CivilMonthIndex.shape(length: length, firstWeekday: CivilDays.weekday(dayNumber: expectedFirst) - 1)
            if first != expectedFirst || month != m || shape != expectedShape || i != Int((y - 1970) * 12) + m - 1 {
                failures.append("day \(d) (\(y)-\(m)-\(dd)): month \(i) first \(first) shape \(shape) number \(month); expected \(expectedFirst), \(expectedShape), \(m)")
            }
            if failures.count > 10 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        #expect(index.months.count == 130 * 12)
        #expect(index.month(containing: -1) == nil)
        #expect(index.month(containing: CivilMonthIndex.endDay) == nil)
        #expect(index.month(containing: CivilMonthIndex.endDay - 1) == 130 * 12 - 1)
        #expect(index.month(containing: .min) == nil && index.month(containing: .max) == nil)
    }

    @Test func theShapeOfAMonthIsItsLengthAndFirstWeekday() {
        var seen = Set<Int>()
        for length in 28 ... 31 {
            for weekday in 0 ... 6 { seen.insert(CivilMonthIndex.shape(length: length, firstWeekday: weekday)) }
        }
        #expect(seen == Set(0 ..< 28))
    }
}
