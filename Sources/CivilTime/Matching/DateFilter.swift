/// The date-level part of a ``CalendarMatch``: which civil days match, and how to jump to the next one.
///
/// `nextMatchingDay(from:through:)` never steps day by day over a mismatch it can jump: a wrong year,
/// month, day, day of year, weekday ordinal or week number moves straight to the first day that can
/// satisfy that component. Each jump moves forward, so the loop ends; a match that never happens ends at
/// the horizon given by the caller.
@usableFromInline
struct DateFilter: Sendable {
    @usableFromInline let year: Int64?
    @usableFromInline let month: Int?
    @usableFromInline let day: Int?
    @usableFromInline let weekday: Int?
    @usableFromInline let weekdayOrdinal: Int?
    @usableFromInline let weekOfMonth: Int?
    @usableFromInline let weekOfYear: Int?
    @usableFromInline let yearForWeekOfYear: Int64?
    @usableFromInline let dayOfYear: Int?
    @usableFromInline let rules: WeekRules
    /// No date component at all: every day matches.
    @usableFromInline let isEmpty: Bool
    /// Some component needs the year, month and day of a day number (all but weekday do).
    @usableFromInline let needsCivilDate: Bool

    init(_ m: CalendarMatch, rules: WeekRules) {
        year = m.year.map(Int64.init); month = m.month; day = m.day
        weekday = m.weekday; weekdayOrdinal = m.weekdayOrdinal; weekOfMonth = m.weekOfMonth
        weekOfYear = m.weekOfYear; yearForWeekOfYear = m.yearForWeekOfYear.map(Int64.init)
        dayOfYear = m.dayOfYear
        self.rules = rules
        isEmpty = year == nil && month == nil && day == nil && weekday == nil && weekdayOrdinal == nil
            && weekOfMonth == nil && weekOfYear == nil && yearForWeekOfYear == nil && dayOfYear == nil
        needsCivilDate = !isEmpty && !(weekday != nil && year == nil && month == nil && day == nil
            && weekdayOrdinal == nil && weekOfMonth == nil && weekOfYear == nil && yearForWeekOfYear == nil
            && dayOfYear == nil)
    }

    /// Whether `d` matches every date component.
    @inlinable
    func matches(_ d: Int64) -> Bool {
        isEmpty || nextMatchingDay(from: d, through: d) == d
    }

    /// The first day ≥ `from` and ≤ `through` that matches every date component, or nil.
    /// - Complexity: O(number of mismatching periods skipped); a few steps for the common shapes.
    @inlinable
    func nextMatchingDay(from: Int64, through limit: Int64) -> Int64? {
        if isEmpty { return from <= limit ? from : nil }
        var d = from
        if !needsCivilDate, let wanted = weekday {
            // Weekday alone: pure arithmetic.
            d += Int64((wanted - CivilDays.weekday(dayNumber: d) + 7) % 7)
            return d <= limit ? d : nil
        }
        while d <= limit {
            let (y, m, dd) = CivilDays.date(dayNumber: d)
            if let wanted = year {
                if y < wanted { d = CivilDays.dayNumber(year: wanted, month: 1, day: 1); continue }
                if y > wanted { return nil }
            }
            if let wanted = month, m != wanted {
                d = CivilDays.dayNumber(year: m < wanted ? y : y + 1, month: wanted, day: 1)
                continue
            }
            if let wanted = day, dd != wanted {
                if dd < wanted && wanted <= CivilDays.daysInMonth(year: y, month: m) {
                    d += Int64(wanted - dd)
                } else {
                    d = Self.firstOfNextMonth(y, m)
                }
                continue
            }
            if let wanted = dayOfYear {
                let jan1 = CivilDays.dayNumber(year: y, month: 1, day: 1)
                let current = Int(d - jan1) + 1
                if current != wanted {
                    if current < wanted && wanted <= CivilDays.daysInYear(y) {
                        d = jan1 + Int64(wanted - 1)
                    } else {
                        d = CivilDays.dayNumber(year: y + 1, month: 1, day: 1)
                    }
                    continue
                }
            }
            if let wanted = weekdayOrdinal {
                let current = (dd - 1) / 7 + 1
                if current != wanted {
                    let firstDay = (wanted - 1) * 7 + 1
                    if current < wanted && firstDay <= CivilDays.daysInMonth(year: y, month: m) {
                        d += Int64(firstDay - dd)
                    } else {
                        d = Self.firstOfNextMonth(y, m)
                    }
                    continue
                }
            }
            if let wanted = weekday {
                let current = CivilDays.weekday(dayNumber: d)
                if current != wanted { d += Int64((wanted - current + 7) % 7); continue }
            }
            if let wanted = weekOfMonth {
                let first = d - Int64(dd - 1)
                let current = rules.weekOfMonth(dayOfMonth: dd, firstOfMonth: first)
                if current != wanted {
                    if current < wanted {
                        d += 7 - rules.daysIntoWeek(d)   // start of the next week
                        if d >= first + Int64(CivilDays.daysInMonth(year: y, month: m)) {
                            d = first + Int64(CivilDays.daysInMonth(year: y, month: m))
                        }
                    } else {
                        d = Self.firstOfNextMonth(y, m)
                    }
                    continue
                }
            }
            if weekOfYear != nil || yearForWeekOfYear != nil {
                let (wy, w) = rules.weekOfYear(day: d, year: y)
                if let wantedYear = yearForWeekOfYear {
                    if wy < wantedYear { d = rules.startOfWeekOne(year: wantedYear); continue }
                    if wy > wantedYear { return nil }
                }
                if let wanted = weekOfYear, w != wanted {
                    let start = rules.startOfWeekOne(year: wy)
                    let next = rules.startOfWeekOne(year: wy + 1)
                    let target = start + Int64(wanted - 1) * 7
                    if w < wanted && target < next {
                        d = target
                    } else {
                        d = next
                    }
                    continue
                }
            }
            return d
        }
        return nil
    }

    @inlinable
    static func firstOfNextMonth(_ y: Int64, _ m: Int) -> Int64 {
        m == 12 ? CivilDays.dayNumber(year: y + 1, month: 1, day: 1) : CivilDays.dayNumber(year: y, month: m + 1, day: 1)
    }
}
