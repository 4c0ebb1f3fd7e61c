/// A validated ``CalendarMatch`` ready to answer "when does this fire next?" many times.
///
/// The semantics are Foundation's `Calendar.nextDate(after:matching:matchingPolicy:repeatedTimePolicy:)`
/// for the Gregorian calendar, written down in `SEMANTICS.md` beside this file, with the two places
/// where Foundation contradicts its own documentation fixed (a gap that is not a whole number of hours,
/// and a second fire inside a repeated hour).
///
/// How it works: the match has one *period* unit (the unit above its highest component: a day for
/// `{hour: 7}`, a month for `{day: 31}`), and each period has at most one candidate civil time. The
/// search walks periods forward from the one before `after`, jumping over periods whose days cannot
/// match (``DateFilter``), turns each candidate into an instant with the zone (handling repeated and
/// skipped civil times by policy), and returns the first instant after `after`. Daily, weekly, hourly
/// matches touch two or three periods; monthly and yearly ones the same plus a jump.
///
/// Pure: no clock, no I/O, no allocation.
public struct CalendarSchedule: Hashable, Sendable {
    /// The match as given.
    public let match: CalendarMatch
    /// The week rules used for week numbers.
    public let weekRules: WeekRules

    @usableFromInline let filter: DateFilter
    @usableFromInline let unit: PeriodUnit
    /// Seconds after midnight of the candidate when the period is a day or longer.
    @usableFromInline let timeOfDay: Int64
    /// Date components are among year, month, day only (a missing day of month is then handled by policy).
    @usableFromInline let isPlainDate: Bool

    /// Validates and prepares a match.
    /// - Throws: ``CalendarMatchError`` naming an out-of-range component or week rule.
    public init(_ match: CalendarMatch, weekRules: WeekRules = .gregorianDefault) throws(CalendarMatchError) {
        try match.validate()
        try weekRules.validate()
        self.match = match
        self.weekRules = weekRules
        filter = DateFilter(match, rules: weekRules)
        unit = PeriodUnit(highestUnitOf: match)
        timeOfDay = Int64((match.hour ?? 0) * 3600 + (match.minute ?? 0) * 60 + (match.second ?? 0))
        isPlainDate = (unit == .year || unit == .month)
            && match.weekday == nil && match.weekdayOrdinal == nil && match.weekOfMonth == nil
            && match.weekOfYear == nil && match.yearForWeekOfYear == nil && match.dayOfYear == nil
    }

    public static func == (a: CalendarSchedule, b: CalendarSchedule) -> Bool {
        a.match == b.match && a.weekRules == b.weekRules
    }

    public func hash(into h: inout Hasher) {
        h.combine(match)
        h.combine(weekRules)
    }

    /// The first instant strictly after `after` that the match fires at in `zone`, or nil when there
    /// is none (an impossible date, or a year already past).
    ///
    /// - Parameters:
    ///   - policy: what a civil time that does not exist (Feb 30, a DST gap) becomes.
    ///   - repeatedTime: which occurrence a civil time that happens twice (DST fall-back) fires at.
    /// - Complexity: O(1) for the common shapes (daily, weekly, monthly, yearly, hourly); otherwise
    ///   proportional to the periods that cannot be skipped by a jump, bounded by a 400-year horizon
    ///   (the Gregorian cycle, after which any match would have repeated).
    public func nextDate(
        after: WallInstant, in zone: ZoneRules,
        policy: MatchingPolicy = .nextTime, repeatedTime: RepeatedTimePolicy = .first
    ) -> WallInstant? {
        // Foundation applies the repeated-time policy only when the hour is specified.
        let search = SearchParameters(
            after: after.secondsSinceEpoch, policy: policy,
            pickLast: repeatedTime == .last && match.hour != nil)
        // The zone is passed down as a borrowed argument, never stored: storing it would retain its
        // arrays on every call.
        let r = unit.isSubDay ? runSubDay(zone, search) : runDays(zone, search)
        return r.map(WallInstant.init(secondsSinceEpoch:))
    }
}

extension CalendarMatch {
    /// The first instant strictly after `after` that this match fires at, or nil when there is none
    /// or the match is invalid (call ``validate()`` to learn why). See ``CalendarSchedule``.
    public func nextDate(
        after: WallInstant, in zone: ZoneRules,
        policy: MatchingPolicy = .nextTime, repeatedTime: RepeatedTimePolicy = .first,
        weekRules: WeekRules = .gregorianDefault
    ) -> WallInstant? {
        guard let schedule = try? CalendarSchedule(self, weekRules: weekRules) else { return nil }
        return schedule.nextDate(after: after, in: zone, policy: policy, repeatedTime: repeatedTime)
    }
}

/// The unit of the periods in which a match has at most one candidate (SEMANTICS.md §1).
@usableFromInline
enum PeriodUnit: Sendable {
    case year, month, weekOfMonth, yearForWeekOfYear, day, hour, minute

    init(highestUnitOf m: CalendarMatch) {
        // Foundation's order of "highest set unit": time units come before the week units.
        if m.year != nil || m.dayOfYear != nil || m.month != nil { self = .year }
        else if m.day != nil { self = .month }
        else if m.hour != nil { self = .day }
        else if m.minute != nil { self = .hour }
        else if m.second != nil { self = .minute }
        else if m.weekday != nil { self = .weekOfMonth }
        else if m.weekdayOrdinal != nil || m.weekOfMonth != nil { self = .month }
        else { self = .yearForWeekOfYear }
    }

    /// Periods that are real hours or minutes rather than civil days or longer.
    @inlinable var isSubDay: Bool { self == .hour || self == .minute }
}

/// The scalar inputs of one search.
@usableFromInline
struct SearchParameters {
    let after: Int64
    let policy: MatchingPolicy
    let pickLast: Bool
}

extension CalendarSchedule {
    /// Beyond one Gregorian cycle (400 years) after the start, a match that has not happened never will.
    static let horizonDays: Int64 = 146_097 + 366

    // MARK: Periods of a day or longer

    private func periodStart(_ d: Int64) -> Int64 {
        switch unit {
        case .year:
            let (y, _, _) = CivilDays.date(dayNumber: d)
            return CivilDays.dayNumber(year: y, month: 1, day: 1)
        case .month:
            let (_, _, dd) = CivilDays.date(dayNumber: d)
            return d - Int64(dd - 1)
        case .day:
            return d
        case .weekOfMonth:
            let (_, _, dd) = CivilDays.date(dayNumber: d)
            return max(d - weekRules.daysIntoWeek(d), d - Int64(dd - 1))
        case .yearForWeekOfYear:
            let (y, _, _) = CivilDays.date(dayNumber: d)
            let (wy, _) = weekRules.weekOfYear(day: d, year: y)
            return weekRules.startOfWeekOne(year: wy)
        case .hour, .minute:
            preconditionFailure("sub-day periods are walked by runSubDay")
        }
    }

    private func periodEnd(_ start: Int64) -> Int64 {
        switch unit {
        case .year:
            let (y, _, _) = CivilDays.date(dayNumber: start)
            return CivilDays.dayNumber(year: y + 1, month: 1, day: 1)
        case .month:
            let (y, m, _) = CivilDays.date(dayNumber: start)
            return DateFilter.firstOfNextMonth(y, m)
        case .day:
            return start + 1
        case .weekOfMonth:
            let (y, m, _) = CivilDays.date(dayNumber: start)
            return min(start - weekRules.daysIntoWeek(start) + 7, DateFilter.firstOfNextMonth(y, m))
        case .yearForWeekOfYear:
            let (y, _, _) = CivilDays.date(dayNumber: start)
            let (wy, _) = weekRules.weekOfYear(day: start, year: y)
            return weekRules.startOfWeekOne(year: wy + 1)
        case .hour, .minute:
            preconditionFailure("sub-day periods are walked by runSubDay")
        }
    }

    private func runDays(_ zone: ZoneRules, _ p: SearchParameters) -> Int64? {
        let localAfter = p.after + Int64(zone.utcOffset(atSecondsSinceEpoch: p.after))
        let dayAfter = floorDiv(localAfter, 86400)
        if isPlainDate { return runPlainDate(zone, p, dayAfter: dayAfter) }
        let horizon = dayAfter + Self.horizonDays
        // Start one period early: a substitute for a missing time of the previous period (nextTime
        // after a gap) can fall after `after`.
        var start = periodStart(periodStart(dayAfter) - 1)
        while start <= horizon {
            guard let d = filter.nextMatchingDay(from: start, through: horizon) else { return nil }
            let end = periodEnd(start)
            if d >= end {
                start = periodStart(d)
                continue
            }
            if let r = candidate(d * 86400 + timeOfDay, periodEndDay: end, zone, p), r > p.after {
                return r
            }
            start = end
        }
        return nil
    }

    /// Year and month periods of a match whose date components are among year, month and day:
    /// the candidate of each period is computed directly, and a missing day is seen (SEMANTICS.md §3).
    private func runPlainDate(_ zone: ZoneRules, _ p: SearchParameters, dayAfter: Int64) -> Int64? {
        var (y, m, _) = CivilDays.date(dayNumber: dayAfter)
        let yearly = unit == .year
        // Start one period early (see runDays).
        if yearly { y -= 1 } else if m == 1 { y -= 1; m = 12 } else { m -= 1 }
        if let wanted = filter.year {
            if y > wanted { return nil }
            if y < wanted { y = wanted; m = 1 }
        }
        let lastYear = y + 401
        let day = filter.day ?? 1
        while y <= lastYear {
            let month = filter.month ?? (yearly ? 1 : m)
            if day > CivilDays.daysInMonth(year: y, month: month) {
                if let r = missingDay(year: y, month: month, zone, p), r > p.after { return r }
            } else {
                let d = CivilDays.dayNumber(year: y, month: month, day: day)
                let end = yearly ? CivilDays.dayNumber(year: y + 1, month: 1, day: 1) : DateFilter.firstOfNextMonth(y, m)
                if let r = candidate(d * 86400 + timeOfDay, periodEndDay: end, zone, p), r > p.after { return r }
            }
            if yearly || m == 12 { y += 1; m = 1 } else { m += 1 }
            if let wanted = filter.year, y > wanted { return nil }
        }
        return nil
    }

    /// The instant of a period's candidate civil time, by the repeated-time and matching policies.
    private func candidate(_ civil: Int64, periodEndDay: Int64, _ zone: ZoneRules, _ p: SearchParameters) -> Int64? {
        switch zone.resolve(localSeconds: civil) {
        case let .unique(u):
            return u
        case let .repeated(first, last):
            return p.pickLast ? last : first
        case let .skipped(transition, _):
            let civilT = transition + Int64(zone.utcOffset(atSecondsSinceEpoch: transition))
            if unit == .day && civilT >= periodEndDay * 86400 {
                // The whole day may be missing (Pacific/Apia, 2011-12-30): then it is no period at all.
                if case .skipped = zone.resolve(localSeconds: (periodEndDay - 1) * 86400) { return nil }
            }
            if matchesAll(civil: civilT) { return transition }
            if match.hour == nil, let u = laterSameDay(civil: civil, civilTransition: civilT, zone) { return u }
            return gap(civil: civil, transition: transition, civilTransition: civilT, zone, p)
        }
    }

    /// With the hour unspecified, a candidate in a gap (`{day: 5, minute: 40}` at 00:40 when the
    /// clocks jump from 00:00 to 01:00) still has an exact match later that day: the first time
    /// after the gap with the specified minute and second (01:40), as in Foundation.
    private func laterSameDay(civil: Int64, civilTransition civilT: Int64, _ zone: ZoneRules) -> Int64? {
        guard match.minute != nil || match.second != nil else { return nil }
        let day = floorDiv(civil, 86400)
        guard floorDiv(civilT, 86400) == day else { return nil }
        let step: Int64 = match.minute != nil ? 3600 : 60
        let phase = floorMod(civil, step)
        var x = floorDiv(civilT, step) * step + phase
        if x < civilT { x += step }
        guard floorDiv(x, 86400) == day, case let .unique(u) = zone.resolve(localSeconds: x) else { return nil }
        return u
    }

    /// A candidate inside a gap that no instant of the gap's end matches: SEMANTICS.md §3, "time gap".
    private func gap(civil: Int64, transition: Int64, civilTransition civilT: Int64,
                     _ zone: ZoneRules, _ p: SearchParameters) -> Int64? {
        let minuteAndSecond = floorMod(civil, 3600)
        switch p.policy {
        case .strict:
            return nil
        case .nextTime:
            return transition
        case .nextTimePreservingSmallerComponents:
            var x = floorDiv(civilT, 3600) * 3600 + minuteAndSecond
            if x < civilT { x += 3600 }
            return instant(ofCivil: x, zone)
        case .previousTimePreservingSmallerComponents:
            let before = transition - 1
            let offsetBefore = Int64(zone.utcOffset(atSecondsSinceEpoch: before))
            let civilBefore = before + offsetBefore
            var x = floorDiv(civilBefore, 3600) * 3600 + minuteAndSecond
            if x > civilBefore { x -= 3600 }
            return x - offsetBefore
        }
    }

    /// A day of month the month lacks (Sep 31): SEMANTICS.md §3, "missing day".
    private func missingDay(year: Int64, month: Int, _ zone: ZoneRules, _ p: SearchParameters) -> Int64? {
        let nextMonth = DateFilter.firstOfNextMonth(year, month)
        switch p.policy {
        case .strict:
            return nil
        case .nextTime:
            return instant(ofCivil: nextMonth * 86400, zone)
        case .nextTimePreservingSmallerComponents:
            return timeOnSubstituteDay(nextMonth * 86400 + timeOfDay, zone, p)
        case .previousTimePreservingSmallerComponents:
            return timeOnSubstituteDay((nextMonth - 1) * 86400 + timeOfDay, zone, p)
        }
    }

    private func timeOnSubstituteDay(_ civil: Int64, _ zone: ZoneRules, _ p: SearchParameters) -> Int64? {
        switch zone.resolve(localSeconds: civil) {
        case let .unique(u): return u
        case let .repeated(first, last): return p.pickLast ? last : first
        case let .skipped(transition, _):
            let civilT = transition + Int64(zone.utcOffset(atSecondsSinceEpoch: transition))
            return gap(civil: civil, transition: transition, civilTransition: civilT, zone, p)
        }
    }

    /// The instant of a civil time: its first occurrence, or the end of the gap it falls in.
    private func instant(ofCivil civil: Int64, _ zone: ZoneRules) -> Int64 {
        switch zone.resolve(localSeconds: civil) {
        case let .unique(u): return u
        case let .repeated(first, _): return first
        case let .skipped(transition, _): return transition
        }
    }

    /// Whether a civil time has every specified component.
    private func matchesAll(civil: Int64) -> Bool {
        let day = floorDiv(civil, 86400)
        let sod = Int(civil - day * 86400)
        if let h = match.hour, h != sod / 3600 { return false }
        if let m = match.minute, m != (sod / 60) % 60 { return false }
        if let sec = match.second, sec != sod % 60 { return false }
        return filter.matches(day)
    }

    // MARK: Hour and minute periods

    /// `{minute: 15}` (hourly) and `{second: 30}` (every minute), possibly on matching days only.
    /// Periods are real hours/minutes: a repeated hour gives two results, a skipped one none.
    private func runSubDay(_ zone: ZoneRules, _ p: SearchParameters) -> Int64? {
        let step: Int64 = unit == .hour ? 3600 : 60
        let offset: Int64 = unit == .hour
            ? Int64((match.minute ?? 0) * 60 + (match.second ?? 0))
            : Int64(match.second ?? 0)
        // Civil times are walked in civil order, which is not instant order inside a fall-back
        // overlap (01:30:32 EDT comes before 01:00:32 EST): keep the earliest instant found and stop
        // once no later civil time can map before it (u = c − offset ≥ c − the largest offset).
        let offsetNow = Int64(zone.utcOffset(atSecondsSinceEpoch: p.after))
        let offsetSoon = Int64(zone.utcOffset(atSecondsSinceEpoch: p.after + 2 * 86400))
        let largestOffset = max(offsetNow, offsetSoon)
        var start = floorDiv(p.after + min(offsetNow, offsetSoon), step) * step
        let horizon = floorDiv(start, 86400) + Self.horizonDays
        var best: Int64? = nil
        while true {
            if let b = best, start + offset - largestOffset >= b { return b }
            let day = floorDiv(start, 86400)
            if !filter.isEmpty && !filter.matches(day) {
                if best != nil { return best }
                guard let next = filter.nextMatchingDay(from: day + 1, through: horizon) else { return nil }
                start = next * 86400
                continue
            }
            let civil = start + offset
            var found: Int64? = nil
            switch zone.resolve(localSeconds: civil) {
            case let .unique(u):
                if u > p.after { found = u }
            case let .repeated(first, last):
                if first > p.after { found = first } else if last > p.after { found = last }
            case let .skipped(transition, _):
                let civilT = transition + Int64(zone.utcOffset(atSecondsSinceEpoch: transition))
                if transition > p.after && matchesAll(civil: civilT) { found = transition }
            }
            if let f = found, f < (best ?? .max) { best = f }
            start += step
        }
    }
}
