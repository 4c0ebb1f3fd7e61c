import CivilTime

/// A brute-force reference for `CalendarMatch.nextDate(after:in:policy:repeatedTime:weekRules:)`,
/// written from `Sources/CivilTime/Matching/SEMANTICS.md` alone.
///
/// It shares nothing with the implementation under test except the value types and the zone's
/// offset function `offsetAt` (seconds east of UTC at an instant). All civil arithmetic is done
/// here, naively: walk civil days one at a time, compute each day's components from scratch
/// (week numbers by counting from January 1), collect each period's days, take the period's
/// candidate, and map it onto instants by looking at the offsets around it. Slow on purpose.
///
/// Assumptions (documented, checked nowhere else):
/// - The zone never changes its offset and changes it back within 24 hours (transitions are found
///   by bisecting day-long stretches whose two ends have different offsets).
/// - Offsets are within ±26 hours.
///
/// Horizon: the walk gives up (nil) after ``horizonYears`` (500) civil years from where it
/// starts. With `year` (or `yearForWeekOfYear`) specified, the walk starts at January 1 of the
/// year before it (no period before that can hold a day of that year) and stops after the year
/// after it (no later period can). The Gregorian calendar repeats every 400 years (146,097 days,
/// a whole number of weeks, so week numbers repeat too), so a day-level match that does not occur
/// within 500 years never does.
struct BruteForceNextDate {
    /// Seconds east of UTC at an instant (seconds since the Unix epoch).
    let offsetAt: (Int64) -> Int
    var horizonYears: Int64 = 500

    init(offsetAt: @escaping (Int64) -> Int) { self.offsetAt = offsetAt }

    init(zone: ZoneRules) {
        self.offsetAt = { zone.utcOffset(atSecondsSinceEpoch: $0) }
    }

    // MARK: - Civil calendar, naively

    static func isLeap(_ y: Int64) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    static func daysInMonth(_ y: Int64, _ m: Int) -> Int {
        switch m {
        case 2: return isLeap(y) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func daysInYear(_ y: Int64) -> Int64 { isLeap(y) ? 366 : 365 }

    /// Number of leap years in 1 … n (n ≥ 0).
    static func leapYearsThrough(_ n: Int64) -> Int64 { n / 4 - n / 100 + n / 400 }

    /// Days since 1970-01-01 of January 1 of `y` (y ≥ 1): 365 per year plus one per leap year.
    static func jan1(_ y: Int64) -> Int64 {
        (y - 1970) * 365 + (leapYearsThrough(y - 1) - leapYearsThrough(1969))
    }

    /// Days since 1970-01-01 of a date, by adding up the months before it.
    static func dayNumber(_ y: Int64, _ m: Int, _ d: Int) -> Int64 {
        var n = jan1(y)
        for mm in stride(from: 1, to: m, by: 1) { n += Int64(daysInMonth(y, mm)) }
        return n + Int64(d - 1)
    }

    /// 1 = Sunday … 7 = Saturday; 1970-01-01 was a Thursday.
    static func weekday(_ dn: Int64) -> Int {
        var r = (dn + 4) % 7
        if r < 0 { r += 7 }
        return Int(r) + 1
    }

    /// Floor division for local seconds before 1970.
    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    /// Everything SEMANTICS.md §4 defines about one civil day, computed from scratch.
    struct Day: Equatable {
        var dn: Int64
        var year: Int64
        var month: Int
        var day: Int
        var weekday: Int
        var dayOfYear: Int
        var weekdayOrdinal: Int
        var weekOfMonth: Int
        var weekOfYear: Int
        var yearForWeekOfYear: Int64
    }

    /// The day a day number falls on: count years from 1970, then months.
    static func civil(_ dn: Int64) -> (year: Int64, month: Int, day: Int) {
        var y: Int64 = 1970
        var rest = dn
        while rest < 0 { y -= 1; rest += daysInYear(y) }
        while rest >= daysInYear(y) { rest -= daysInYear(y); y += 1 }
        var m = 1
        while rest >= Int64(daysInMonth(y, m)) { rest -= Int64(daysInMonth(y, m)); m += 1 }
        return (y, m, Int(rest) + 1)
    }

    /// First day of week 1 of `y`: the week holding January 1 if at least `minDays` of its days
    /// are in `y`, else the week after.
    static func week1Start(_ y: Int64, _ w: WeekRules) -> Int64 {
        let j = jan1(y)
        let before = Int64((weekday(j) - w.firstWeekday + 7) % 7)   // days of that week before Jan 1
        let weekStart = j - before
        return 7 - before >= Int64(w.minimumDaysInFirstWeek) ? weekStart : weekStart + 7
    }

    static func makeDay(_ dn: Int64, year: Int64, month: Int, day: Int, _ w: WeekRules) -> Day {
        let wd = weekday(dn)
        let doy = Int(dn - jan1(year)) + 1
        let s = (weekday(dn - Int64(day - 1)) - w.firstWeekday + 7) % 7
        let wom = (day + s - 1) / 7 + (7 - s >= w.minimumDaysInFirstWeek ? 1 : 0)
        var yfw = year + 1
        var w1 = week1Start(year + 1, w)
        if dn < w1 {
            yfw = year
            w1 = week1Start(year, w)
            if dn < w1 {
                yfw = year - 1
                w1 = week1Start(year - 1, w)
            }
        }
        return Day(dn: dn, year: year, month: month, day: day, weekday: wd, dayOfYear: doy,
                   weekdayOrdinal: (day - 1) / 7 + 1, weekOfMonth: wom,
                   weekOfYear: Int((dn - w1) / 7) + 1, yearForWeekOfYear: yfw)
    }

    static func makeDay(_ dn: Int64, _ w: WeekRules) -> Day {
        let (y, m, d) = civil(dn)
        return makeDay(dn, year: y, month: m, day: d, w)
    }

    /// The following day, stepping the date by hand.
    static func nextDay(_ d: Day, _ w: WeekRules) -> Day {
        var (y, m, dd) = (d.year, d.month, d.day + 1)
        if dd > daysInMonth(y, m) {
            dd = 1; m += 1
            if m > 12 { m = 1; y += 1 }
        }
        return makeDay(d.dn + 1, year: y, month: m, day: dd, w)
    }

    static func previousDay(_ d: Day, _ w: WeekRules) -> Day {
        var (y, m, dd) = (d.year, d.month, d.day - 1)
        if dd < 1 {
            m -= 1
            if m < 1 { m = 12; y -= 1 }
            dd = daysInMonth(y, m)
        }
        return makeDay(d.dn - 1, year: y, month: m, day: dd, w)
    }

    // MARK: - The match

    static func dateMatches(_ m: CalendarMatch, _ d: Day) -> Bool {
        if let v = m.year, Int64(v) != d.year { return false }
        if let v = m.month, v != d.month { return false }
        if let v = m.day, v != d.day { return false }
        if let v = m.weekday, v != d.weekday { return false }
        if let v = m.weekdayOrdinal, v != d.weekdayOrdinal { return false }
        if let v = m.weekOfMonth, v != d.weekOfMonth { return false }
        if let v = m.weekOfYear, v != d.weekOfYear { return false }
        if let v = m.yearForWeekOfYear, Int64(v) != d.yearForWeekOfYear { return false }
        if let v = m.dayOfYear, v != d.dayOfYear { return false }
        return true
    }

    enum Unit { case year, month, day, hour, minute, second, weekday, weekdayOrdinal, weekOfMonth,
                     weekOfYear, yearForWeekOfYear, dayOfYear }

    /// Highest specified unit, in Foundation's order (SEMANTICS.md §1).
    static func highest(_ m: CalendarMatch) -> Unit? {
        if m.year != nil { return .year }
        if m.dayOfYear != nil { return .dayOfYear }
        if m.month != nil { return .month }
        if m.day != nil { return .day }
        if m.hour != nil { return .hour }
        if m.minute != nil { return .minute }
        if m.second != nil { return .second }
        if m.weekday != nil { return .weekday }
        if m.weekdayOrdinal != nil { return .weekdayOrdinal }
        if m.weekOfMonth != nil { return .weekOfMonth }
        if m.weekOfYear != nil { return .weekOfYear }
        if m.yearForWeekOfYear != nil { return .yearForWeekOfYear }
        return nil
    }

    enum Period { case year, month, day, hour, minute, weekOfMonth, weekYear }

    static func period(of h: Unit) -> Period {
        switch h {
        case .year, .dayOfYear, .month: return .year
        case .day: return .month
        case .hour: return .day
        case .minute: return .hour
        case .second: return .minute
        case .weekday: return .weekOfMonth
        case .weekdayOrdinal, .weekOfMonth: return .month
        case .weekOfYear, .yearForWeekOfYear: return .weekYear
        }
    }

    /// Key identifying the civil period a day is in (equal keys = same period).
    static func periodKey(_ p: Period, _ d: Day, _ w: WeekRules) -> Int64 {
        switch p {
        case .year: return d.year
        case .month: return d.year * 12 + Int64(d.month)
        case .day, .hour, .minute: return d.dn
        case .weekOfMonth:
            // Weeks start on firstWeekday and are cut at month boundaries: the period's first day.
            let weekStart = d.dn - Int64((d.weekday - w.firstWeekday + 7) % 7)
            let monthStart = d.dn - Int64(d.day - 1)
            return max(weekStart, monthStart)
        case .weekYear: return d.yearForWeekOfYear
        }
    }

    static func valid(_ m: CalendarMatch, _ w: WeekRules) -> Bool {
        func ok(_ v: Int?, _ r: ClosedRange<Int>) -> Bool { v.map { r.contains($0) } ?? true }
        return highest(m) != nil
            && ok(m.year, 1...9999) && ok(m.month, 1...12) && ok(m.day, 1...31)
            && ok(m.hour, 0...23) && ok(m.minute, 0...59) && ok(m.second, 0...59)
            && ok(m.weekday, 1...7) && ok(m.weekdayOrdinal, 1...5) && ok(m.weekOfMonth, 0...6)
            && ok(m.weekOfYear, 1...53) && ok(m.yearForWeekOfYear, 1...9999) && ok(m.dayOfYear, 1...366)
            && (1...7).contains(w.firstWeekday) && (1...7).contains(w.minimumDaysInFirstWeek)
    }

    // MARK: - Local time → instants

    /// The zone's offsets around some instants: the transitions in a window, found by bisection.
    struct Timeline {
        /// Transition instants (offset from this instant on differs from the one before), ascending.
        var transitions: [Int64] = []
        /// offsets[0] before transitions[0]; offsets[i + 1] from transitions[i] on.
        var offsets: [Int64] = []
        var lo: Int64
        var hi: Int64

        init(lo: Int64, hi: Int64, offsetAt: (Int64) -> Int) {
            self.lo = lo; self.hi = hi
            offsets = [Int64(offsetAt(lo))]
            func find(_ a: Int64, _ b: Int64, _ oa: Int64, _ ob: Int64) {
                if oa == ob && b - a <= 86_400 { return }
                if b - a == 1 {
                    if oa != ob { transitions.append(b); offsets.append(ob) }
                    return
                }
                let mid = a + (b - a) / 2
                let om = Int64(offsetAt(mid))
                find(a, mid, oa, om)
                find(mid, b, om, ob)
            }
            find(lo, hi, Int64(offsetAt(lo)), Int64(offsetAt(hi)))
        }

        func offset(at t: Int64) -> Int64 {
            precondition(t >= lo && t <= hi, "timeline window too small")
            var i = 0
            while i < transitions.count && transitions[i] <= t { i += 1 }
            return offsets[i]
        }

        func local(_ t: Int64) -> Int64 { t + offset(at: t) }

        /// All instants at which the wall clock shows local second `L`, ascending.
        func occurrences(_ L: Int64) -> [Int64] {
            var result: [Int64] = []
            for i in 0..<offsets.count {
                let start = i == 0 ? lo : transitions[i - 1]
                let end = i == transitions.count ? hi + 1 : transitions[i]
                let t = L - offsets[i]
                if t >= start && t < end { result.append(t) }
            }
            return result.sorted()
        }

        /// When `L` is skipped: the transition at which the clock jumps over it (the first instant
        /// after the gap).
        func gapEnd(_ L: Int64) -> Int64? {
            for i in 0..<transitions.count {
                let x = transitions[i]
                if x + offsets[i] <= L && L < x + offsets[i + 1] { return x }
            }
            return nil
        }
    }

    func timeline(aroundLocal L: Int64) -> Timeline {
        Timeline(lo: L - 3 * 86_400, hi: L + 3 * 86_400, offsetAt: offsetAt)
    }

    // MARK: - Search

    func nextDate(after a: Int64, matching m: CalendarMatch, policy: MatchingPolicy,
                  repeatedTime: RepeatedTimePolicy, weekRules w: WeekRules) -> Int64? {
        guard Self.valid(m, w), let h = Self.highest(m) else { return nil }
        let p = Self.period(of: h)
        let localA = a + Int64(offsetAt(a))
        let dayA = Self.floorDiv(localA, 86_400)

        // Where to start and stop walking (see the type's comment).
        var startDn = dayA - 4
        let years = [m.year, m.yearForWeekOfYear].compactMap { $0.map(Int64.init) }
        for y in years { startDn = max(startDn, Self.jan1(y - 1)) }
        var lastYear = Self.civil(startDn).year + horizonYears
        for y in years { lastYear = min(lastYear, y + 1) }
        var day = Self.makeDay(startDn, w)
        if day.year > lastYear { return nil }

        switch p {
        case .hour, .minute:
            return subDay(after: a, m, p, startDay: day, lastYear: lastYear, w)
        case .year, .month, .day, .weekOfMonth, .weekYear:
            // Back up to the start of the period holding the first day.
            let key = Self.periodKey(p, day, w)
            while true {
                let prev = Self.previousDay(day, w)
                if Self.periodKey(p, prev, w) != key { break }
                day = prev
            }
            while day.year <= lastYear {
                var periodDays = [day]
                var next = Self.nextDay(day, w)
                let key = Self.periodKey(p, day, w)
                while Self.periodKey(p, next, w) == key {
                    periodDays.append(next)
                    next = Self.nextDay(next, w)
                }
                if let t = candidate(of: periodDays, m, p, policy, repeatedTime, w), t > a {
                    return t
                }
                day = next
            }
            return nil
        }
    }

    /// Hour and minute periods are real hours and minutes: each (day, hour[, minute], offset) run
    /// of the clock. The candidate of a run is the civil time with the specified minute (and
    /// second, else 0), if the run holds it; both occurrences of a repeated time are runs of their
    /// own. A candidate in a gap yields nothing (SEMANTICS.md §2: U < day), and the "T still
    /// matches" rule adds nothing here: T starts its own run, whose candidate it then is.
    func subDay(after a: Int64, _ m: CalendarMatch, _ p: Period, startDay: Day, lastYear: Int64,
                _ w: WeekRules) -> Int64? {
        var day = startDay
        var found: [Int64] = []
        var extraDays = -1
        while day.year <= lastYear {
            if Self.dateMatches(m, day) {
                let base = day.dn * 86_400
                let tl = timeline(aroundLocal: base + 43_200)
                var locals: [Int64] = []
                switch p {
                case .hour:
                    for hh in 0..<24 {
                        locals.append(base + Int64(hh * 3600 + m.minute! * 60 + (m.second ?? 0)))
                    }
                default:
                    for hh in 0..<24 {
                        for mm in 0..<60 { locals.append(base + Int64(hh * 3600 + mm * 60 + m.second!)) }
                    }
                }
                for L in locals {
                    for t in tl.occurrences(L) where t > a { found.append(t) }
                }
            }
            // Local days can overlap in time after a backward jump: look two more days.
            if !found.isEmpty && extraDays < 0 { extraDays = 2 }
            if extraDays == 0 { break }
            if extraDays > 0 { extraDays -= 1 }
            day = Self.nextDay(day, w)
        }
        return found.min()
    }

    /// The instant a civil period yields (not yet compared with the search start).
    func candidate(of days: [Day], _ m: CalendarMatch, _ p: Period, _ policy: MatchingPolicy,
                   _ repeated: RepeatedTimePolicy, _ w: WeekRules) -> Int64? {
        let hh = m.hour ?? 0, mi = m.minute ?? 0, ss = m.second ?? 0
        let secondOfDay = Int64(hh * 3600 + mi * 60 + ss)
        if let d = days.first(where: { Self.dateMatches(m, $0) }) {
            return place(d.dn * 86_400 + secondOfDay, m, policy, repeated, checkExact: true, w)
        }
        // Missing day of month: the specified date components are among year, month, day, the
        // day is specified, and the period holds the year and month asked for but not that day.
        guard let wantedDay = m.day, m.weekday == nil, m.weekdayOrdinal == nil, m.weekOfMonth == nil,
              m.weekOfYear == nil, m.yearForWeekOfYear == nil, m.dayOfYear == nil,
              p == .year || p == .month else { return nil }
        let inMonth = days.filter { d in
            (m.year.map { Int64($0) == d.year } ?? true) && (m.month.map { $0 == d.month } ?? true)
        }
        guard let any = inMonth.first, wantedDay > Self.daysInMonth(any.year, any.month) else { return nil }
        let monthLength = Self.daysInMonth(any.year, any.month)
        let firstOfMonth = any.dn - Int64(any.day - 1)
        let firstOfNext = firstOfMonth + Int64(monthLength)
        let lastOfMonth = firstOfNext - 1
        switch policy {
        case .strict: return nil
        case .nextTime:
            return place(firstOfNext * 86_400, m, policy, repeated, checkExact: false, w)
        case .nextTimePreservingSmallerComponents:
            return place(firstOfNext * 86_400 + secondOfDay, m, policy, repeated, checkExact: false, w)
        case .previousTimePreservingSmallerComponents:
            return place(lastOfMonth * 86_400 + secondOfDay, m, policy, repeated, checkExact: false, w)
        }
    }

    /// SEMANTICS.md §2 for a civil candidate at local second `L`.
    func place(_ L: Int64, _ m: CalendarMatch, _ policy: MatchingPolicy, _ repeated: RepeatedTimePolicy,
               checkExact: Bool, _ w: WeekRules) -> Int64? {
        let tl = timeline(aroundLocal: L)
        let occ = tl.occurrences(L)
        if occ.count == 1 { return occ[0] }
        if occ.count >= 2 {
            if m.hour != nil && repeated == .last { return occ.last! }
            return occ.first!
        }
        guard let t = tl.gapEnd(L) else { preconditionFailure("local time neither occurs nor is skipped") }
        if checkExact {
            let lt = tl.local(t)
            let sod = Int(lt - Self.floorDiv(lt, 86_400) * 86_400)
            let d = Self.makeDay(Self.floorDiv(lt, 86_400), w)
            if Self.dateMatches(m, d) && (m.hour.map { $0 == sod / 3600 } ?? true)
                && (m.minute.map { $0 == (sod / 60) % 60 } ?? true) && (m.second.map { $0 == sod % 60 } ?? true) {
                return t
            }
        }
        if checkExact && m.hour == nil && (m.minute != nil || m.second != nil) {
            // Hour unspecified: the first instant after the gap, on the candidate's day, with the
            // specified minute and second (second 0 when only the minute is given).
            let day = Self.floorDiv(L, 86_400)
            var u = t
            while Self.floorDiv(tl.local(u), 86_400) == day {
                let lt = tl.local(u)
                let sod = Int(lt - day * 86_400)
                if (m.minute.map { $0 == (sod / 60) % 60 } ?? true) && sod % 60 == (m.second ?? 0) { return u }
                u += 1
            }
        }
        let wantedMinuteSecond = ((L % 3600) + 3600) % 3600
        func minuteSecond(_ u: Int64) -> Int64 { ((tl.local(u) % 3600) + 3600) % 3600 }
        switch policy {
        case .strict: return nil
        case .nextTime: return t
        case .nextTimePreservingSmallerComponents:
            var u = t
            while minuteSecond(u) != wantedMinuteSecond { u += 1 }
            return u
        case .previousTimePreservingSmallerComponents:
            var u = t - 1
            while minuteSecond(u) != wantedMinuteSecond { u -= 1 }
            return u
        }
    }
}
