import CivilTime

/// A case where Fencepost's answer (already checked equal to the brute-force reference) differs
/// from Foundation's, with what is needed to recognise why.
struct OracleDisagreementCase {
    var c: OracleCase
    /// Fencepost's answer (= the brute-force reference's).
    var ours: Int64?
    var foundation: Int64?
    var zone: ZoneRules
    /// Foundation's `TimeZone.secondsFromGMT(for:)` for the case's zone.
    var foundationOffsetAt: (Int64) -> Int

    var m: CalendarMatch { c.match }
    func offset(_ t: Int64) -> Int { zone.utcOffset(atSecondsSinceEpoch: t) }
    func local(_ t: Int64) -> CivilDateTime { CivilDateTime(localSeconds: t + Int64(offset(t))) }
    func day(_ t: Int64) -> BruteForceNextDate.Day {
        BruteForceNextDate.makeDay(BruteForceNextDate.floorDiv(t + Int64(offset(t)), 86_400), c.weekRules)
    }

    /// Whether the wall clock at `t` shows every specified component.
    func matchesAll(_ t: Int64) -> Bool {
        let l = local(t)
        return BruteForceNextDate.dateMatches(m, day(t))
            && (m.hour.map { $0 == l.hour } ?? true) && (m.minute.map { $0 == l.minute } ?? true)
            && (m.second.map { $0 == l.second } ?? true)
    }

    /// Offset changes of the zone in `lo...hi`: (instant, offset before, offset after).
    func transitions(_ lo: Int64, _ hi: Int64) -> [(at: Int64, before: Int, after: Int)] {
        var result: [(Int64, Int, Int)] = []
        var t = lo - 1
        while let x = zone.nextTransition(after: t), x <= hi {
            let b = offset(x - 1), a = offset(x)
            if a != b { result.append((x, b, a)) }
            t = x
        }
        return result
    }

    /// Transitions within `days` days of the start, ours or Foundation's result.
    func transitionsNearResults(days: Int64 = 1) -> [(at: Int64, before: Int, after: Int)] {
        var result: [(at: Int64, before: Int, after: Int)] = []
        for t in [c.after, ours, foundation].compactMap({ $0 }) {
            for x in transitions(t - days * 86_400, t + days * 86_400) where !result.contains(where: { $0.at == x.at }) {
                result.append(x)
            }
        }
        return result
    }

    var hasWeekComponents: Bool {
        m.weekday != nil || m.weekdayOrdinal != nil || m.weekOfMonth != nil || m.weekOfYear != nil
            || m.yearForWeekOfYear != nil
    }
}

/// The named, explained classes of cases where Foundation's `Calendar.nextDate` differs from
/// Fencepost's (documented) semantics. A disagreement is accepted only when Fencepost equals the
/// brute-force reference *and* the case falls into one of these classes; the first class whose
/// predicate recognises the case is reported.
enum KnownFoundationDisagreement: String, CaseIterable, Sendable {
    case tzdataDifference
    case subMinuteUTCOffset
    case weekOfMonthZeroNeverReturns
    case unspecifiedComponentsFilledFromStart
    case previousTimeLeapFebruary
    case afterBetweenRepeatedOccurrences
    case wholeDayGap
    case lordHoweHalfHourGap
    case halfHourRepeatLast
    case transitionOffTheHour
    case missingDayCarriedIntoNextMonth
    case yearIsAFilter
    case dayOfYearKeepsStartTime
    case specifiedMonthWithWeekComponentSkipsYear
    case gapAtMidnight
    case gapAdjustedResultPassedOver
    case missingDayFromTheMonthBefore
    case nextTimeGapKeepsSeconds
    case missingDayOntoTransitionDay
    case yearForWeekOfYearWithoutWeek
    case inexactApproximation
    case skipsMatchOfCombinedWeekComponents
    case givesUpOnRareMatch

    var reason: String {
        switch self {
        case .tzdataDifference:
            return "Foundation's zone data gives another UTC offset than ours at the start or at one of the results"
        case .subMinuteUTCOffset:
            return "the offset is not a whole number of minutes (local mean time before ~1920: Dublin −0:25:21, St Johns −3:30:52, Kathmandu +5:41:16 …); Foundation's Calendar computes with the offset floored to whole minutes, so its results are off by the offset's seconds or skip ahead to the end of that era"
        case .weekOfMonthZeroNeverReturns:
            return "not asked: Foundation's nextDate does not return (spins) for weekOfMonth 0 when minimumDaysInFirstWeek > 1; checked against the brute-force reference only"
        case .unspecifiedComponentsFilledFromStart:
            return "a missing day (Feb 30, Sep 31) under a *Preserving policy: Foundation copies the search start's hour/minute/second into the unspecified components instead of 0"
        case .previousTimeLeapFebruary:
            return "{month: 2, day: 30/31} under previousTimePreservingSmallerComponents in a leap year: Foundation returns Feb 28, not the month's last day Feb 29"
        case .afterBetweenRepeatedOccurrences:
            return "the start lies between the two occurrences of a repeated wall time (fall-back): with .first Foundation returns the last occurrence (a second fire that day; documented: nothing that day), with .last it passes over the last occurrence to the next period"
        case .wholeDayGap:
            return "a whole civil day is skipped (Pacific/Apia 2011-12-30): Foundation moves to another day or time than the documented gap rule"
        case .lordHoweHalfHourGap:
            return "a DST gap that is not a whole number of hours (Lord Howe 30 min, Kathmandu 1986 15 min): Foundation skips the whole day instead of applying the gap rule"
        case .halfHourRepeatLast:
            return "a fall-back that is not a whole number of hours (Lord Howe 30 min): with repeatedTimePolicy .last Foundation returns the first occurrence, or skips the day for the non-repeated half of that hour"
        case .transitionOffTheHour:
            return "a transition not at a whole local hour (Chatham 02:45 → 03:45): Foundation treats the whole hour around it as skipped or repeated"
        case .missingDayCarriedIntoNextMonth:
            return "the previous month's missing day (Sep 31 under nextTime*) resolves to the 1st of the start's month, after the start: Foundation only looks at periods from the start's on"
        case .yearIsAFilter:
            return "year specified and the start inside that year: Foundation matches the smaller components onward from the start (so {year, hour} fires daily within the year); the documented semantics take the year's first candidate (one per period)"
        case .dayOfYearKeepsStartTime:
            return "dayOfYear specified without hour and the start on that day: Foundation keeps the start's hour and matches minute/second from there (hourly that day); documented: the day's first candidate (hour 0)"
        case .specifiedMonthWithWeekComponentSkipsYear:
            return "month specified with a week-based component (weekday, weekdayOrdinal, weekOfMonth, weekOfYear) and the start inside that month: Foundation passes over the rest of the month and returns next year's match"
        case .gapAtMidnight:
            return "a DST gap at local midnight (Sao Paulo, Tehran …): Foundation's day arithmetic around it goes wrong: it returns the gap's end on the wrong day, or (previousTime*) rejects the documented result on the day before and moves to the next period"
        case .gapAdjustedResultPassedOver:
            return "the documented result is a DST-gap adjustment (02:41:57 in a 02:00→03:00 gap → 03:41:57 or 01:41:57) and Foundation passes over it to a later exact match: seen when the start lies just after the gap, and for previousTime* in weekly searches"
        case .missingDayFromTheMonthBefore:
            return "a missing day (Feb 29/30) searched from the month before, after that month's day (Jan 31): under *Preserving policies Foundation's substitute takes the start's whole wall-clock time, even the specified hour and minute (nextTime*), or is the start of the 1st of the next month (previousTime*)"
        case .nextTimeGapKeepsSeconds:
            return "the candidate falls in a DST gap under nextTime with second given and minute left open (00:00:22 in a 00:00–01:00 gap): Foundation keeps the seconds (01:00:22); documented: the end of the gap (01:00:00)"
        case .missingDayOntoTransitionDay:
            return "a missing day (Sep 31) whose substitute (Oct 1) is a DST transition day: Foundation passes over the substitute and returns the next exact match"
        case .yearForWeekOfYearWithoutWeek:
            return "yearForWeekOfYear without weekOfYear: Foundation jumps to the start's week of the year in that week-year (or gives up) instead of taking the week-year's first candidate"
        case .inexactApproximation:
            return "week-based or year-bound components that do not match in the current month or year (weekOfMonth 6 on a weekday it lacks, the first Friday already passed, a passed date in the specified year …): under nextTime* Foundation returns an approximation that does not match: the start of a day (mostly the 1st of the next month) or a day at the start's wall-clock time; documented: only a day of month the month lacks is approximated, other combinations wait for their next exact match"
        case .skipsMatchOfCombinedWeekComponents:
            return "a week-based component combined with another date component (month, day, another week component), or non-default week rules: Foundation's step-wise search passes over an exact match and returns a later one"
        case .givesUpOnRareMatch:
            return "a match more than two months ahead, or one combining a week-based component with other date components (weekOfYear 53, {year, day, weekday}, {month, weekOfYear} …): Foundation gives up after its bounded number of search steps and returns nil"
        }
    }

    func recognises(_ d: OracleDisagreementCase) -> Bool {
        let m = d.m
        switch self {
        case .tzdataDifference:
            return [d.c.after, d.ours, d.foundation].compactMap { $0 }.contains { d.offset($0) != d.foundationOffsetAt($0) }

        case .subMinuteUTCOffset:
            return [d.c.after, d.ours, d.foundation].compactMap { $0 }.contains { d.offset($0) % 60 != 0 }

        case .weekOfMonthZeroNeverReturns:
            return m.weekOfMonth == 0 && d.c.weekRules.minimumDaysInFirstWeek > 1

        case .unspecifiedComponentsFilledFromStart:
            // Foundation's result = our date at the start's wall-clock time in the unspecified
            // time components.
            guard d.c.policy == .nextTimePreservingSmallerComponents
                    || d.c.policy == .previousTimePreservingSmallerComponents,
                  let ours = d.ours, let f = d.foundation, m.day != nil,
                  m.hour == nil || m.minute == nil || m.second == nil else { return false }
            let a = d.local(d.c.after), o = d.local(ours), lf = d.local(f)
            return !d.matchesAll(ours) && lf.year == o.year && lf.month == o.month && lf.day == o.day
                && lf.hour == (m.hour ?? a.hour) && lf.minute == (m.minute ?? a.minute)
                && lf.second == (m.second ?? a.second)

        case .previousTimeLeapFebruary:
            guard d.c.policy == .previousTimePreservingSmallerComponents, let ours = d.ours, let f = d.foundation,
                  let day = m.day, day >= 30, m.month == nil || m.month == 2 else { return false }
            let o = d.local(ours), lf = d.local(f)
            return o.month == 2 && o.day == 29 && lf.year == o.year && lf.month == 2 && lf.day == 28

        case .afterBetweenRepeatedOccurrences:
            guard m.hour != nil else { return false }
            return [d.ours, d.foundation].compactMap { $0 }.contains { t in
                let occ = d.zone.oracleOccurrences(ofLocal: d.local(t).localSeconds)
                return occ.count >= 2 && occ.first! <= d.c.after && d.c.after < occ.last!
            }

        case .wholeDayGap:
            return d.transitionsNearResults(days: 2).contains { $0.after - $0.before >= 86_400 - 7200 }

        case .lordHoweHalfHourGap:
            return d.transitionsNearResults().contains { $0.after > $0.before && ($0.after - $0.before) % 3600 != 0 }

        case .halfHourRepeatLast:
            return d.c.repeated == .last
                && d.transitionsNearResults().contains { $0.after < $0.before && ($0.before - $0.after) % 3600 != 0 }

        case .transitionOffTheHour:
            return d.transitionsNearResults().contains { (Int64($0.at) + Int64($0.before)) % 3600 != 0 }

        case .missingDayCarriedIntoNextMonth:
            guard d.c.policy == .nextTime || d.c.policy == .nextTimePreservingSmallerComponents,
                  let ours = d.ours, m.day != nil, !d.matchesAll(ours) else { return false }
            let o = d.local(ours), a = d.local(d.c.after)
            return o.day == 1 && o.year == a.year && o.month == a.month && (d.foundation.map { $0 > ours } ?? true)

        case .yearIsAFilter:
            guard let y = m.year, let f = d.foundation, Int64(y) == d.local(d.c.after).year else { return false }
            return d.matchesAll(f) && (d.ours.map { f < $0 } ?? true)

        case .dayOfYearKeepsStartTime:
            guard m.dayOfYear != nil, m.hour == nil, let f = d.foundation, d.matchesAll(f) else { return false }
            let a = d.local(d.c.after), lf = d.local(f)
            return lf.year == a.year && lf.month == a.month && lf.day == a.day && (d.ours.map { f < $0 } ?? true)

        case .specifiedMonthWithWeekComponentSkipsYear:
            guard let mo = m.month, d.hasWeekComponents, let ours = d.ours,
                  let f = d.foundation, f > ours, d.matchesAll(f) else { return false }
            let a = d.local(d.c.after), o = d.local(ours)
            return a.month == mo && o.month == mo && o.year == a.year

        case .gapAtMidnight:
            let f = d.foundation
            guard f == nil || !d.matchesAll(f!) || (d.ours.map { f! > $0 } ?? false) else { return false }
            var near: [(at: Int64, before: Int, after: Int)] = []
            for t in [d.ours, f].compactMap({ $0 }) { near += d.transitions(t - 86_400, t + 86_400) }
            return near.contains { $0.after > $0.before && (Int64($0.at) + Int64($0.before)) % 86_400 == 0 }

        case .gapAdjustedResultPassedOver:
            guard d.c.policy != .strict, let ours = d.ours, !d.matchesAll(ours), d.foundation.map({ $0 > ours }) ?? true
            else { return false }
            return d.transitions(ours - 3 * 3600, ours + 3 * 3600).contains { $0.after > $0.before }

        case .missingDayFromTheMonthBefore:
            guard d.c.policy == .nextTimePreservingSmallerComponents || d.c.policy == .previousTimePreservingSmallerComponents,
                  m.day != nil, let ours = d.ours, let f = d.foundation, !d.matchesAll(ours) else { return false }
            let o = d.local(ours), lf = d.local(f), a = d.local(d.c.after)
            let days = BruteForceNextDate.floorDiv(lf.localSeconds, 86_400) - BruteForceNextDate.floorDiv(o.localSeconds, 86_400)
            let sameOrNextDay = days == 0 || days == 1
            let time = [lf.hour, lf.minute, lf.second]
            return sameOrNextDay && (time == [a.hour, a.minute, a.second] || time == [0, 0, 0])
                && (a.year * 12 + Int64(a.month)) + 1 == o.year * 12 + Int64(o.month) + (o.day == 1 ? -1 : 0)

        case .nextTimeGapKeepsSeconds:
            guard d.c.policy == .nextTime, let s = m.second, s > 0, m.minute == nil, let ours = d.ours,
                  let f = d.foundation, f == ours + Int64(s) else { return false }
            return d.offset(ours - 1) != d.offset(ours)

        case .missingDayOntoTransitionDay:
            guard m.day != nil, let ours = d.ours, !d.matchesAll(ours), d.foundation.map({ $0 > ours }) ?? true
            else { return false }
            return !d.transitions(ours - 86_400, ours + 86_400).isEmpty

        case .yearForWeekOfYearWithoutWeek:
            return m.yearForWeekOfYear != nil && m.weekOfYear == nil

        case .inexactApproximation:
            guard d.c.policy != .strict, let f = d.foundation, !d.matchesAll(f), d.hasWeekComponents || m.year != nil
            else { return false }
            // Foundation's approximations: the start of a day, or a day at the start's wall-clock time
            // (in the unspecified components, or in all of them).
            let lf = d.local(f), a = d.local(d.c.after)
            let time = [lf.hour, lf.minute, lf.second]
            return time == [0, 0, 0] || time == [a.hour, a.minute, a.second]
                || time == [m.hour ?? a.hour, m.minute ?? a.minute, m.second ?? a.second]

        case .skipsMatchOfCombinedWeekComponents:
            guard let ours = d.ours, let f = d.foundation, f > ours, d.matchesAll(ours), d.matchesAll(f),
                  d.hasWeekComponents else { return false }
            let dayLevel = [m.month, m.day, m.dayOfYear, m.weekday, m.weekdayOrdinal, m.weekOfMonth, m.weekOfYear,
                            m.yearForWeekOfYear].compactMap { $0 }.count
            return dayLevel >= 2 || d.c.weekRules != .gregorianDefault

        case .givesUpOnRareMatch:
            guard let ours = d.ours, d.foundation == nil else { return false }
            let dateLevel = [m.year, m.month, m.day, m.dayOfYear, m.weekday, m.weekdayOrdinal, m.weekOfMonth, m.weekOfYear,
                             m.yearForWeekOfYear].compactMap { $0 }.count
            return ours - d.c.after > 60 * 86_400 || (d.hasWeekComponents && dateLevel >= 2)
        }
    }

    static func classify(_ d: OracleDisagreementCase) -> KnownFoundationDisagreement? {
        allCases.first { $0.recognises(d) }
    }
}

extension ZoneRules {
    /// The instants at which the wall clock shows local second `L`, ascending (test helper).
    func oracleOccurrences(ofLocal L: Int64) -> [Int64] {
        switch resolve(localSeconds: L) {
        case .unique(let t): return [t]
        case .repeated(let first, let last): return [first, last]
        case .skipped: return []
        }
    }
}
