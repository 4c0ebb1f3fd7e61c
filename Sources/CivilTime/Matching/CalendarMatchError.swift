/// Why a ``CalendarMatch`` (or its ``WeekRules``) cannot be used.
public enum CalendarMatchError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A component outside its range, e.g. month 13 or hour 24.
    case outOfRange(component: String, value: Int, range: ClosedRange<Int>)
    /// No component at all: such a match would fire at every instant.
    case empty

    public var description: String {
        switch self {
        case let .outOfRange(component, value, range):
            return "\(component) \(value) is out of range: it must be \(range.lowerBound)…\(range.upperBound)"
        case .empty:
            return "the match specifies no component: give at least one of year, month, day, hour, minute, second, "
                + "weekday, weekdayOrdinal, weekOfMonth, weekOfYear, yearForWeekOfYear, dayOfYear"
        }
    }
}

extension CalendarMatch {
    /// Checks every component against its range (SEMANTICS.md §5).
    /// - Throws: ``CalendarMatchError`` naming the first offending component.
    /// - Complexity: O(1), no allocation.
    public func validate() throws(CalendarMatchError) {
        func check(_ name: String, _ value: Int?, _ range: ClosedRange<Int>) throws(CalendarMatchError) {
            if let v = value, !range.contains(v) { throw .outOfRange(component: name, value: v, range: range) }
        }
        try check("year", year, 1...9999)
        try check("month", month, 1...12)
        try check("day", day, 1...31)
        try check("hour", hour, 0...23)
        try check("minute", minute, 0...59)
        try check("second", second, 0...59)
        try check("weekday", weekday, 1...7)
        try check("weekdayOrdinal", weekdayOrdinal, 1...5)
        try check("weekOfMonth", weekOfMonth, 0...6)
        try check("weekOfYear", weekOfYear, 1...53)
        try check("yearForWeekOfYear", yearForWeekOfYear, 1...9999)
        try check("dayOfYear", dayOfYear, 1...366)
        if year == nil && month == nil && day == nil && hour == nil && minute == nil && second == nil
            && weekday == nil && weekdayOrdinal == nil && weekOfMonth == nil && weekOfYear == nil
            && yearForWeekOfYear == nil && dayOfYear == nil {
            throw .empty
        }
    }
}

extension WeekRules {
    /// Checks `firstWeekday` (1…7) and `minimumDaysInFirstWeek` (1…7).
    public func validate() throws(CalendarMatchError) {
        if !(1...7).contains(firstWeekday) {
            throw .outOfRange(component: "firstWeekday", value: firstWeekday, range: 1...7)
        }
        if !(1...7).contains(minimumDaysInFirstWeek) {
            throw .outOfRange(component: "minimumDaysInFirstWeek", value: minimumDaysInFirstWeek, range: 1...7)
        }
    }
}
