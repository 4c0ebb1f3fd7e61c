/// The date components a calendar trigger matches, Gregorian calendar (Foundation's
/// `DateComponents` as used by `Calendar.nextDate(after:matching:…)`).
///
/// A `nil` component is unspecified. Components below the smallest specified one take their
/// lowest value (design §2): `{hour: 7}` means 07:00:00.
public struct CalendarMatch: Hashable, Sendable {
    public var year: Int?
    public var month: Int?
    public var day: Int?
    public var hour: Int?
    public var minute: Int?
    public var second: Int?
    /// 1 = Sunday … 7 = Saturday.
    public var weekday: Int?
    /// The n-th such weekday of the month (1 = first).
    public var weekdayOrdinal: Int?
    public var weekOfMonth: Int?
    public var weekOfYear: Int?
    public var yearForWeekOfYear: Int?
    public var dayOfYear: Int?

    public init(
        year: Int? = nil, month: Int? = nil, day: Int? = nil,
        hour: Int? = nil, minute: Int? = nil, second: Int? = nil,
        weekday: Int? = nil, weekdayOrdinal: Int? = nil, weekOfMonth: Int? = nil,
        weekOfYear: Int? = nil, yearForWeekOfYear: Int? = nil, dayOfYear: Int? = nil
    ) {
        self.year = year; self.month = month; self.day = day
        self.hour = hour; self.minute = minute; self.second = second
        self.weekday = weekday; self.weekdayOrdinal = weekdayOrdinal; self.weekOfMonth = weekOfMonth
        self.weekOfYear = weekOfYear; self.yearForWeekOfYear = yearForWeekOfYear; self.dayOfYear = dayOfYear
    }
}

/// What to do when the matched civil time does not exist (Feb 30, a DST gap). Foundation's
/// `Calendar.MatchingPolicy`.
public enum MatchingPolicy: String, Sendable, CaseIterable {
    /// Skip: only times that exist match.
    case strict
    /// The first instant after the missing time (the start of the next larger unit, or the end of
    /// the DST gap).
    case nextTime
    /// The next existing date with the smaller components kept (02:30 in a gap → 03:30).
    case nextTimePreservingSmallerComponents
    /// The previous existing date with the smaller components kept.
    case previousTimePreservingSmallerComponents
}

/// Which of two instants a repeated civil time (DST fall-back) resolves to.
/// Foundation's `Calendar.RepeatedTimePolicy`.
public enum RepeatedTimePolicy: String, Sendable, CaseIterable {
    case first
    case last
}

/// Week rules of the calendar (Foundation's `Calendar.firstWeekday`, `minimumDaysInFirstWeek`).
public struct WeekRules: Hashable, Sendable {
    /// 1 = Sunday … 7 = Saturday.
    public var firstWeekday: Int
    /// 1 … 7.
    public var minimumDaysInFirstWeek: Int

    public init(firstWeekday: Int = 1, minimumDaysInFirstWeek: Int = 1) {
        self.firstWeekday = firstWeekday
        self.minimumDaysInFirstWeek = minimumDaysInFirstWeek
    }

    /// Foundation's Gregorian default for `en_US`: weeks start on Sunday, week 1 holds Jan 1.
    public static let gregorianDefault = WeekRules()
    /// ISO 8601 weeks: Monday first, week 1 holds the first Thursday.
    public static let iso8601 = WeekRules(firstWeekday: 2, minimumDaysInFirstWeek: 4)
}
