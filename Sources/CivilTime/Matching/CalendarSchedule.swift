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
        var search = Search(schedule: self, zone: zone, after: after.secondsSinceEpoch,
                            policy: policy, repeatedTime: repeatedTime)
        return search.run().map(WallInstant.init(secondsSinceEpoch:))
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

/// One search: the schedule, the zone, the start and the policies.
@usableFromInline
struct Search {
    let s: CalendarSchedule
    let zone: ZoneRules
    let after: Int64
    let policy: MatchingPolicy
    let pickLast: Bool

    init(schedule: CalendarSchedule, zone: ZoneRules, after: Int64, policy: MatchingPolicy,
         repeatedTime: RepeatedTimePolicy) {
        s = schedule
        self.zone = zone
        self.after = after
        self.policy = policy
        // Foundation applies the repeated-time policy only when the hour is specified.
        pickLast = repeatedTime == .last && schedule.match.hour != nil
    }

    static let horizonDays: Int64 = 146_097 + 366

    mutating func run() -> Int64? {
        s.unit.isSubDay ? runSubDay() : runDays()
    }

    // MARK: Periods of a day or longer

    private func periodStart(_ d: Int64) -> Int64 {
        switch s.unit {
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
            return max(d - s.weekRules.daysIntoWeek(d), d - Int64(dd - 1))
        case .yearForWeekOfYear:
            let (y, _, _) = CivilDays.date(dayNumber: d)
            let (wy, _) = s.weekRules.weekOfYear(day: d, year: y)
            return s.weekRules.startOfWeekOne(year: wy)
        case .hour, .minute:
            preconditionFailure("sub-day periods are walked by runSubDay")
        }
    }

    private func periodEnd(_ start: Int64) -> Int64 {
        switch s.unit {
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
            return min(start - s.weekRules.daysIntoWeek(start) + 7, DateFilter.firstOfNextMonth(y, m))
        case .yearForWeekOfYear:
            let (y, _, _) = CivilDays.date(dayNumber: start)
            let (wy, _) = s.weekRules.weekOfYear(day: start, year: y)
            return s.weekRules.startOfWeekOne(year: wy + 1)
        case .hour, .minute:
            preconditionFailure("sub-day periods are walked by runSubDay")
        }
    }

    private func runDays() -> Int64? {
        let localAfter = after + Int64(zone.utcOffset(atSecondsSinceEpoch: after))
        let dayAfter = floorDiv(localAfter, 86400)
        let horizon = dayAfter + Self.horizonDays
        // Start one period early: a substitute for a missing time of the previous period (nextTime
        // after a gap, the 1st of the month for a missing 31st) can fall after `after`.
        var start = periodStart(periodStart(dayAfter) - 1)
        while start <= horizon {
            let end = periodEnd(start)
            let candidateDay: Int64
            if s.isPlainDate {
                let (py, pm, _) = CivilDays.date(dayNumber: start)
                if let wanted = s.filter.year, py != wanted {
                    if py > wanted { return nil }
                    start = CivilDays.dayNumber(year: wanted, month: 1, day: 1)
                    continue
                }
                let month = s.filter.month ?? (s.unit == .month ? pm : 1)
                let day = s.filter.day ?? 1
                if day > CivilDays.daysInMonth(year: py, month: month) {
                    if let r = missingDay(year: py, month: month), r > after { return r }
                    start = end
                    continue
                }
                candidateDay = CivilDays.dayNumber(year: py, month: month, day: day)
            } else {
                guard let d = s.filter.nextMatchingDay(from: start, through: horizon) else { return nil }
                if d >= end {
                    start = periodStart(d)
                    continue
                }
                candidateDay = d
            }
            if let r = candidate(candidateDay * 86400 + s.timeOfDay, periodEndDay: end), r > after {
                return r
            }
            start = end
        }
        return nil
    }

    /// The instant of a period's candidate civil time, by the repeated-time and matching policies.
    private func candidate(_ civil: Int64, periodEndDay: Int64) -> Int64? {
        switch zone.resolve(localSeconds: civil) {
        case let .unique(u):
            return u
        case let .repeated(first, last):
            return pickLast ? last : first
        case let .skipped(transition, _):
            let civilT = transition + Int64(zone.utcOffset(atSecondsSinceEpoch: transition))
            if s.unit == .day && civilT >= periodEndDay * 86400 {
                // The whole day may be missing (Pacific/Apia, 2011-12-30): then it is no period at all.
                if case .skipped = zone.resolve(localSeconds: (periodEndDay - 1) * 86400) { return nil }
            }
            if matchesAll(civil: civilT) { return transition }
            return gap(civil: civil, transition: transition, civilTransition: civilT)
        }
    }

    /// A candidate inside a gap that no instant of the gap's end matches: SEMANTICS.md §3, "time gap".
    private func gap(civil: Int64, transition: Int64, civilTransition civilT: Int64) -> Int64? {
        let minuteAndSecond = floorMod(civil, 3600)
        switch policy {
        case .strict:
            return nil
        case .nextTime:
            return transition
        case .nextTimePreservingSmallerComponents:
            var x = floorDiv(civilT, 3600) * 3600 + minuteAndSecond
            if x < civilT { x += 3600 }
            return instant(ofCivil: x)
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
    private func missingDay(year: Int64, month: Int) -> Int64? {
        let nextMonth = DateFilter.firstOfNextMonth(year, month)
        switch policy {
        case .strict:
            return nil
        case .nextTime:
            return instant(ofCivil: nextMonth * 86400)
        case .nextTimePreservingSmallerComponents:
            return timeOnSubstituteDay(nextMonth * 86400 + s.timeOfDay)
        case .previousTimePreservingSmallerComponents:
            return timeOnSubstituteDay((nextMonth - 1) * 86400 + s.timeOfDay)
        }
    }

    private func timeOnSubstituteDay(_ civil: Int64) -> Int64? {
        switch zone.resolve(localSeconds: civil) {
        case let .unique(u): return u
        case let .repeated(first, last): return pickLast ? last : first
        case let .skipped(transition, _):
            let civilT = transition + Int64(zone.utcOffset(atSecondsSinceEpoch: transition))
            return gap(civil: civil, transition: transition, civilTransition: civilT)
        }
    }

    /// The instant of a civil time: its first occurrence, or the end of the gap it falls in.
    private func instant(ofCivil civil: Int64) -> Int64 {
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
        if let h = s.match.hour, h != sod / 3600 { return false }
        if let m = s.match.minute, m != (sod / 60) % 60 { return false }
        if let sec = s.match.second, sec != sod % 60 { return false }
        return s.filter.matches(day)
    }

    // MARK: Hour and minute periods

    /// `{minute: 15}` (hourly) and `{second: 30}` (every minute), possibly on matching days only.
    /// Periods are real hours/minutes: a repeated hour gives two results, a skipped one none.
    private func runSubDay() -> Int64? {
        let step: Int64 = s.unit == .hour ? 3600 : 60
        let offset: Int64 = s.unit == .hour
            ? Int64((s.match.minute ?? 0) * 60 + (s.match.second ?? 0))
            : Int64(s.match.second ?? 0)
        // The earliest civil time any instant after `after` can show: lower when an overlap is near.
        let offsetNow = zone.utcOffset(atSecondsSinceEpoch: after)
        let offsetSoon = zone.utcOffset(atSecondsSinceEpoch: after + 2 * 86400)
        var start = floorDiv(after + Int64(min(offsetNow, offsetSoon)), step) * step
        let horizon = floorDiv(start, 86400) + Self.horizonDays
        while true {
            let day = floorDiv(start, 86400)
            if !s.filter.isEmpty && !s.filter.matches(day) {
                guard let next = s.filter.nextMatchingDay(from: day + 1, through: horizon) else { return nil }
                start = next * 86400
                continue
            }
            let civil = start + offset
            switch zone.resolve(localSeconds: civil) {
            case let .unique(u):
                if u > after { return u }
            case let .repeated(first, last):
                if first > after { return first }
                if last > after { return last }
            case let .skipped(transition, _):
                let civilT = transition + Int64(zone.utcOffset(atSecondsSinceEpoch: transition))
                if transition > after && matchesAll(civil: civilT) { return transition }
            }
            start += step
        }
    }
}
