/// Week numbers of the Gregorian calendar under given ``WeekRules`` (ICU's and Foundation's
/// definitions, SEMANTICS.md §4). All functions are O(1) and work on day numbers
/// (days since 1970-01-01, ``CivilDays``).
extension WeekRules {
    /// Days from the start of the week containing `day` to `day` (0…6).
    @inlinable
    func daysIntoWeek(_ day: Int64) -> Int64 {
        Int64((CivilDays.weekday(dayNumber: day) - firstWeekday + 7) % 7)
    }

    /// The first day of week 1 of week-year `year`.
    @inlinable
    func startOfWeekOne(year: Int64) -> Int64 {
        let jan1 = CivilDays.dayNumber(year: year, month: 1, day: 1)
        let s = daysIntoWeek(jan1)
        let weekStart = jan1 - s
        return 7 - s >= Int64(minimumDaysInFirstWeek) ? weekStart : weekStart + 7
    }

    /// The week-year (`yearForWeekOfYear`) and week of year of `day`, given its calendar year.
    @inlinable
    func weekOfYear(day: Int64, year: Int64) -> (yearForWeekOfYear: Int64, week: Int) {
        var y = year
        var start = startOfWeekOne(year: y)
        if day < start {
            y -= 1
            start = startOfWeekOne(year: y)
        } else {
            let next = startOfWeekOne(year: y + 1)
            if day >= next { y += 1; start = next }
        }
        return (y, Int((day - start) / 7) + 1)
    }

    /// The week of month of a day (0 for a short first week when `minimumDaysInFirstWeek` > its days).
    @inlinable
    func weekOfMonth(dayOfMonth: Int, firstOfMonth: Int64) -> Int {
        let s = Int(daysIntoWeek(firstOfMonth))
        return (dayOfMonth + s - 1) / 7 + (7 - s >= minimumDaysInFirstWeek ? 1 : 0)
    }
}
