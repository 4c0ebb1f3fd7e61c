// Size: one algorithm (the search described below) over one compiled rule: the periods,
// the filters and BYSETPOS read the same masks.
/// A compiled RFC 5545 recurrence set: a rule (RRULE) from a DTSTART, with EXDATE exclusions and
/// RDATE additions, answering "when does it fire next?" (SEMANTICS.md §6).
///
/// How it works. Every BYxxx part, whether the RFC calls it "expand" or "limit" for the rule's
/// FREQ, is a filter on civil date-times once the parts left out are taken from DTSTART (§3.3.10);
/// the frequency only decides the periods (for INTERVAL and BYSETPOS) and whether a BYDAY ordinal
/// counts in the month or the year. So the filters compile to bit masks: months (12 bits), hours
/// (24), minutes and seconds (60 each), and per month a 31-bit mask of matching days computed from
/// the weekday pattern, the ordinals, BYMONTHDAY, BYYEARDAY and BYWEEKNO with a few shifts. The
/// first civil instance at or after a civil time is found by skipping whole months with an empty
/// mask, then taking the lowest set bit of the day mask and of the time masks; a match in a period
/// that INTERVAL excludes moves the search to the start of the next aligned period. BYSETPOS
/// counts the period's instances (matching days × times per day) and selects by index.
///
/// Civil times become instants with the zone per §3.3.5: a time in a gap takes the offset before
/// the gap, a repeated time its first occurrence. COUNT is turned into the civil time of the
/// COUNT-th instance when the schedule is made (instances counted from DTSTART, before EXDATE
/// removes any), so a next fire needs no memory of past fires and survives restarts unchanged.
///
/// Pure: no clock, no I/O; `nextDate` allocates nothing.
///
/// Stored properties: the rule compiled, one field per filter mask or bound, read directly by
/// the search on every next fire (the masks are the design above, listed where they are declared).
public struct RecurrenceSchedule: Hashable, Sendable {
    public let rule: RecurrenceRule
    /// DTSTART as a civil time in the schedule's zone.
    public let start: CivilDateTime
    /// EXDATE (and a holiday calendar's dates): instances at these times, days or instants are skipped.
    public let exclusions: RecurrenceDates
    /// RDATE: instants added to the rule's.
    public let additions: RecurrenceDates

    let interval: Int64
    let startLocal: Int64
    var startPeriod: Int64
    /// The last civil time an instance of the rule may have (UNTIL, COUNT, year 9999).
    var endLocal: Int64
    /// UNTIL as a UTC instant (`…Z`), else Int64.max.
    let untilInstant: Int64
    let months: UInt16
    let hours: UInt32
    let minutes: UInt64
    let seconds: UInt64
    /// Plain BYDAY weekdays, bit k = weekday k+1 (Sunday = bit 0).
    let weekdays: UInt8
    let ordinals: [RecurrenceWeekday]
    let hasWeekdayPart: Bool
    /// Only a weekday pattern filters days (the common "every weekday").
    let weekdaysOnly: Bool
    let noDayFilter: Bool
    let monthDaysPositive: UInt32
    /// BYMONTHDAY −k as bit 31−k, so that a shift by (31 − month length) puts it on its day.
    let monthDaysNegative: UInt32
    let hasMonthDays: Bool
    /// BYYEARDAY as bit sets of the day of year (0-based): words 0…5 for a common year, 6…11 for a leap one.
    let yearDays: [UInt64]
    let weekNumbersPositive: UInt64
    let weekNumbersNegative: UInt64
    let hasWeekNumbers: Bool
    let weekNumbering: WeekRules
    let ordinalsInYear: Bool
    let setPositions: [Int]
    /// When every day filter looks only inside the month (no BYYEARDAY, no BYWEEKNO, no BYDAY
    /// ordinal counted in the year), the day mask of a month BYMONTH lets through depends only on
    /// its shape, its length (28…31) and the weekday of its first day
    /// (``CivilMonthIndex/shape(length:firstWeekday:)``): the 4 × 7 masks (112 bytes); else empty and ``dayMask`` computes each month's.
    var monthMasks: [UInt32]
    /// INTERVAL=1, no BYSETPOS, no EXDATE, no RDATE: the rule's first match after a civil time
    /// is the set's next instance.
    let matchesAreInstances: Bool
    /// No BYMONTH: every month passes.
    let everyMonth: Bool
    /// Every match an instance and each month's days from ``monthMasks``: the shortest next fire.
    var usesMonthTable: Bool
    /// Days are filtered month by month (not only by weekday, and not every day passes).
    let searchesByMonth: Bool
    /// The first and the last time of day in the hour, minute and second masks (seconds after midnight).
    let firstTimeOfDay: Int64
    let lastTimeOfDay: Int64

    /// The end of the searchable calendar: 9999-12-31T23:59:59 (civil).
    static let lastLocal: Int64 = 253_402_300_799
    /// A rule with no instance within one Gregorian cycle (400 years) after DTSTART is refused.
    static let horizonSeconds: Int64 = 146_097 * 86_400

    /// Compiles a rule from a DTSTART.
    /// - Throws: ``RecurrenceError`` when UNTIL is before DTSTART, or the rule has no instance in
    ///   the 400 years after DTSTART (nor before UNTIL/COUNT ends it).
    /// - Complexity: O(COUNT) steps of the search when COUNT is given, else a few.
    public init(_ rule: RecurrenceRule, start: CivilDateTime,
                exclusions: RecurrenceDates = RecurrenceDates(), additions: RecurrenceDates = RecurrenceDates()) throws(RecurrenceError) {
        try rule.validate()
        guard start.year >= 1 && start.year <= 9999 else { throw RecurrenceError("DTSTART", "year must be 1…9999, got \(start.year)") }
        self.rule = rule
        self.start = start
        self.exclusions = exclusions
        self.additions = additions
        interval = Int64(rule.interval)
        startLocal = start.localSeconds
        let freq = rule.frequency
        weekNumbering = WeekRules(firstWeekday: rule.weekStart, minimumDaysInFirstWeek: 4)

        func bits64(_ v: [Int]) -> UInt64 { v.reduce(0) { $0 | (1 << UInt64($1)) } }
        seconds = rule.bySecond.isEmpty ? 1 << UInt64(start.second) : bits64(rule.bySecond)
        minutes = !rule.byMinute.isEmpty ? bits64(rule.byMinute) : freq == .minutely ? (1 << 60) - 1 : 1 << UInt64(start.minute)
        hours = !rule.byHour.isEmpty ? UInt32(truncatingIfNeeded: bits64(rule.byHour))
            : freq <= .hourly ? (1 << 24) - 1 : 1 << UInt32(start.hour)

        var byMonth = rule.byMonth, byMonthDay = rule.byMonthDay, byDay = rule.byDay
        if rule.byWeekNo.isEmpty && rule.byYearDay.isEmpty && rule.byMonthDay.isEmpty && rule.byDay.isEmpty {
            let startDay = CivilDays.dayNumber(year: start.year, month: start.month, day: start.day)
            switch freq {
            case .yearly:
                if byMonth.isEmpty { byMonth = [start.month] }
                byMonthDay = [start.day]
            case .monthly:
                byMonthDay = [start.day]
            case .weekly:
                byDay = [RecurrenceWeekday(weekday: CivilDays.weekday(dayNumber: startDay))]
            default:
                break
            }
        }
        months = byMonth.isEmpty ? 0xFFF : UInt16(truncatingIfNeeded: bits64(byMonth.map { $0 - 1 }))
        weekdays = UInt8(truncatingIfNeeded: bits64(byDay.filter { $0.ordinal == 0 }.map { $0.weekday - 1 }))
        ordinals = byDay.filter { $0.ordinal != 0 }
        hasWeekdayPart = !byDay.isEmpty
        ordinalsInYear = freq == .yearly && byMonth.isEmpty
        monthDaysPositive = UInt32(truncatingIfNeeded: bits64(byMonthDay.filter { $0 > 0 }.map { $0 - 1 }))
        monthDaysNegative = UInt32(truncatingIfNeeded: bits64(byMonthDay.filter { $0 < 0 }.map { 31 + $0 }))
        hasMonthDays = !byMonthDay.isEmpty
        var table = [UInt64](repeating: 0, count: 12)
        for (base, length) in [(0, 365), (6, 366)] {
            for n in rule.byYearDay {
                let i = n > 0 ? n - 1 : length + n
                if i >= 0 && i < length { table[base + i / 64] |= 1 << UInt64(i % 64) }
            }
        }
        yearDays = rule.byYearDay.isEmpty ? [] : table
        weekNumbersPositive = bits64(rule.byWeekNo.filter { $0 > 0 })
        weekNumbersNegative = bits64(rule.byWeekNo.filter { $0 < 0 }.map { -$0 })
        hasWeekNumbers = !rule.byWeekNo.isEmpty
        weekdaysOnly = hasWeekdayPart && ordinals.isEmpty && months == 0xFFF && !hasMonthDays && yearDays.isEmpty && !hasWeekNumbers
        noDayFilter = !hasWeekdayPart && months == 0xFFF && !hasMonthDays && yearDays.isEmpty && !hasWeekNumbers
        searchesByMonth = !noDayFilter && !weekdaysOnly
        everyMonth = months == 0xFFF
        setPositions = rule.bySetPos
        matchesAreInstances = rule.interval == 1 && rule.bySetPos.isEmpty && exclusions.isEmpty && additions.isEmpty
        monthMasks = []
        usesMonthTable = false
        firstTimeOfDay = Int64(hours.trailingZeroBitCount * 3600 + minutes.trailingZeroBitCount * 60 + seconds.trailingZeroBitCount)
        lastTimeOfDay = Int64((31 - hours.leadingZeroBitCount) * 3600 + (63 - minutes.leadingZeroBitCount) * 60 + 63 - seconds.leadingZeroBitCount)
        var end = Self.lastLocal
        var until = Int64.max
        switch rule.until {
        case .local(let c)?:
            guard c.localSeconds >= startLocal else {
                throw RecurrenceError("UNTIL", "\(c.iso8601) is before DTSTART \(start.iso8601)")
            }
            end = min(end, c.localSeconds)
        case .instant(let t)?:
            // Compared with the local DTSTART allowing any UTC offset (±26 h).
            guard t.secondsSinceEpoch + 93_600 >= startLocal else {
                throw RecurrenceError("UNTIL", "\(t) is before DTSTART \(start.iso8601)")
            }
            until = t.secondsSinceEpoch
            end = min(end, t.secondsSinceEpoch + 93_600)
        case nil:
            break
        }
        untilInstant = until
        endLocal = end
        startPeriod = 0
        startPeriod = periodIndex(startLocal)
        if !noDayFilter && !weekdaysOnly && yearDays.isEmpty && !hasWeekNumbers && !(hasWeekdayPart && ordinalsInYear) {
            // 2000…2027: each month starts on every weekday in a leap and in a common year.
            var masks = [UInt32](repeating: 0, count: 28)
            for y in Int64(2000) ... 2027 {
                for m in 1 ... 12 where months & (1 << UInt16(m - 1)) != 0 {
                    let first = CivilDays.dayNumber(year: y, month: m, day: 1)
                    masks[Self.monthMaskIndex(length: CivilDays.daysInMonth(year: y, month: m), first: first)] = dayMask(year: y, month: m, first: first)
                }
            }
            monthMasks = masks
        }
        usesMonthTable = matchesAreInstances && searchesByMonth && !monthMasks.isEmpty

        // BYSETPOS beyond the fixed number of instances of every minute or hour selects nothing.
        if !setPositions.isEmpty && freq <= .hourly {
            let n = freq == .minutely ? seconds.nonzeroBitCount : minutes.nonzeroBitCount * seconds.nonzeroBitCount
            if setPositions.allSatisfy({ abs($0) > n }) {
                throw RecurrenceError("BYSETPOS", "selects nothing: every \(freq == .minutely ? "minute" : "hour") of the rule has \(n) instance\(n == 1 ? "" : "s")")
            }
        }
        try checkAlignment()
        // The first instance within 400 years, or the rule is refused.
        let saved = endLocal
        endLocal = min(endLocal, startLocal + Self.horizonSeconds)
        guard let first = nextLocal(atOrAfter: startLocal) else {
            if saved < Self.lastLocal && rule.until != nil {
                throw RecurrenceError("UNTIL", "the rule has no instance between DTSTART \(start.iso8601) and UNTIL")
            }
            throw RecurrenceError("RRULE", "\(rule.text) has no instance in the 400 years after DTSTART \(start.iso8601)")
        }
        endLocal = saved
        if let count = rule.count {
            var last = first
            var n = 1
            while n < count, let c = nextLocal(atOrAfter: last + 1) { last = c; n += 1 }
            endLocal = last
        }
    }

    /// Refuses a rule whose INTERVAL can never meet its time-of-day and weekday filters (the
    /// search would step through every misaligned period for 400 years before finding nothing).
    /// The filters of a MINUTELY, HOURLY or DAILY rule repeat every day, or every week when only
    /// weekdays filter days; a period p is aligned when p ≡ startPeriod (mod INTERVAL), so within
    /// one repeat of L periods the aligned ones are those ≡ startPeriod (mod gcd(INTERVAL, L)).
    /// Some such residue must pass the filters.
    /// - Complexity: O(L / gcd(INTERVAL, L)), at most 10,080 checks (minutes of a week).
    func checkAlignment() throws(RecurrenceError) {
        let freq = rule.frequency
        guard interval > 1, freq <= .daily else { return }
        let weekly = weekdaysOnly || noDayFilter
        if freq == .daily && !weekly { return }
        let perDay: Int64 = freq == .minutely ? 1440 : freq == .hourly ? 24 : 1
        let length = weekly ? perDay * 7 : perDay
        var a = interval, b = length
        while b != 0 { (a, b) = (b, a % b) }
        var x = floorMod(startPeriod, a)
        while x < length {
            let ofDay = x % perDay
            let (hour, minute) = freq == .minutely ? (ofDay / 60, ofDay % 60) : freq == .hourly ? (ofDay, -1) : (-1, -1)
            let weekdayPasses = !weekly || noDayFilter || weekdays & (1 << UInt8(CivilDays.weekday(dayNumber: x / perDay) - 1)) != 0
            if weekdayPasses && (hour < 0 || hours & (1 << UInt32(hour)) != 0) && (minute < 0 || minutes & (1 << UInt64(minute)) != 0) {
                return
            }
            x += a
        }
        let unit = freq == .minutely ? "minutes" : freq == .hourly ? "hours" : "days"
        let parts = (freq == .minutely ? ["BYHOUR", "BYMINUTE"] : freq == .hourly ? ["BYHOUR"] : []) + (noDayFilter ? [] : ["BYDAY"])
        throw RecurrenceError("INTERVAL", "\(interval) never meets \(parts.joined(separator: "/")): counting every \(interval) \(unit) from DTSTART \(start.iso8601), none passes them, so the rule has no instance")
    }

    /// The first instant strictly after `after` at which the set has an instance in `zone`, or nil.
    /// - Complexity: O(1) for the common shapes: a few month masks and bit scans; a period excluded
    ///   by INTERVAL costs one more step, a fall-back overlap one step per instance in it. No allocation.
    public func nextDate(after: WallInstant, in zone: ZoneRules) -> WallInstant? {
        let a = after.secondsSinceEpoch
        // Every match an instance, no EXDATE or RDATE, and the answer in the stretch of constant
        // offset holding `a`: one zone lookup, one search (what the general path does then).
        // `a` at least the zone's offset range after the stretch's start: the earliest civil time
        // to search from is `a`'s own plus a second (no gap just before `a` can map past it).
        if matchesAreInstances, let z = zone.settledStretch(containing: a) {
            let aLocal = a &+ z.offset
            let l = max(aLocal &+ 1, startLocal)
            // l > aLocal, and every match found is at or after l.
            let c = l > endLocal ? Int64.max : usesMonthTable ? firstInMonthTable(atOrAfter: l, zone._months) : firstMatch(atOrAfter: l) ?? .max
            if c > endLocal { return nil }
            if c >= z.lower && c < z.upper {
                let i = c &- z.offset
                return i > untilInstant ? nil : WallInstant(secondsSinceEpoch: i)
            }
        }
        return nextDate(after: a, zone, resolvingEvery: false)
    }

    /// ``nextDate(after:in:)`` by the general path: every civil time tried is resolved in the
    /// zone when `resolvingEvery`, else the zone shortcut of ``nextOfRule(after:_:)`` applies.
    func nextDate(after a: Int64, _ zone: ZoneRules, resolvingEvery: Bool) -> WallInstant? {
        var best = resolvingEvery ? nextOfRuleResolving(after: a, zone) : nextOfRule(after: a, zone)
        if !additions.isEmpty, let r = nextAddition(after: a, zone), r < (best ?? .max) { best = r }
        return best.map(WallInstant.init(secondsSinceEpoch:))
    }

    /// The civil times of the rule's first `limit` instances at or after `from` (no EXDATE, RDATE
    /// or zone): what the oracle compares.
    public func localInstances(from: CivilDateTime, limit: Int) -> [CivilDateTime] {
        var out: [CivilDateTime] = []
        var l = from.localSeconds
        while out.count < limit, let c = nextLocal(atOrAfter: l) { out.append(CivilDateTime(localSeconds: c)); l = c + 1 }
        return out
    }

    // MARK: Civil time to instant (RFC 5545 §3.3.5)

    /// The instant of a civil time, and the gap's length when it falls in one (else 0).
    @inline(__always)
    func instant(_ c: Int64, _ zone: ZoneRules) -> (Int64, Int64) {
        switch zone.resolve(localSeconds: c) {
        case let .unique(u): return (u, 0)
        case let .repeated(first, _): return (first, 0)
        case let .skipped(t, gap): return (c - Int64(zone.utcOffset(atSecondsSinceEpoch: t - 1)), max(gap, 1))
        }
    }

    /// ``nextOfRuleResolving(after:_:)`` with one zone lookup when the answer lies in the
    /// stretch of constant offset that holds `a` (the usual case: offsets change twice a year):
    /// the offset at `a`, the transition before it and the offset before that come from one
    /// table lookup, and the rule's next civil time, shown once in that stretch, is its instant
    /// without a second lookup. Anything else (another stretch, a gap, an overlap, EXDATE) takes
    /// the general path from the start.
    @inline(__always)
    func nextOfRule(after a: Int64, _ zone: ZoneRules) -> Int64? {
        guard let s = zone.offsetStretch(containing: a) else { return nextOfRuleResolving(after: a, zone) }
        let offset = s.offsetBefore < s.offset && a &- s.start < s.offset &- s.offsetBefore ? s.offsetBefore : s.offset
        guard let c = nextLocal(atOrAfter: a + offset + 1) else { return nil }
        let i = c &- s.offset
        if zone.showsOnce(c, in: s) && i > a && exclusions.isEmpty { return i > untilInstant ? nil : i }
        return nextOfRuleResolving(after: a, zone)
    }

    /// The rule's first instant after `a`, resolving every civil time it tries in the zone.
    func nextOfRuleResolving(after a: Int64, _ zone: ZoneRules) -> Int64? {
        // The earliest civil time whose instant can be after `a`: with the offset at `a`, or the
        // smaller one before a transition whose gap still maps past `a`.
        var offset = Int64(zone.utcOffset(atSecondsSinceEpoch: a))
        if let t = zone.previousTransition(before: a &+ 1) {
            let before = Int64(zone.utcOffset(atSecondsSinceEpoch: t - 1))
            if before < offset && a - t < offset - before { offset = before }
        }
        var l = a + offset + 1
        while let c = nextLocal(atOrAfter: l) {
            let (i, gap) = instant(c, zone)
            if i > a && !isExcluded(c, i) {
                if i > untilInstant { return nil }
                var best = i
                if gap > 0 {
                    // Civil times within `gap` after one in a gap can map before it.
                    var l2 = c + 1
                    while let c2 = nextLocal(atOrAfter: l2), c2 < c + gap {
                        let (i2, _) = instant(c2, zone)
                        if i2 > a && i2 < best && !isExcluded(c2, i2) { best = i2 }
                        l2 = c2 + 1
                    }
                }
                return best
            }
            l = c + 1
        }
        return nil
    }

    func nextAddition(after a: Int64, _ zone: ZoneRules) -> Int64? {
        var best: Int64? = nil
        for c in additions.local {
            let (i, _) = instant(c, zone)
            if i > a && i < (best ?? .max) && !isExcluded(c, i) { best = i }
        }
        var k = RecurrenceDates.lowerBound(additions.instants, a + 1)
        while k < additions.instants.count {
            let i = additions.instants[k]
            let c = i + Int64(zone.utcOffset(atSecondsSinceEpoch: i))
            if !isExcluded(c, i) { if i < (best ?? .max) { best = i }; break }
            k += 1
        }
        return best
    }

    @inline(__always)
    func isExcluded(_ c: Int64, _ i: Int64) -> Bool {
        if exclusions.isEmpty { return false }
        return exclusions.contains(local: c, instant: i)
    }

    // MARK: Periods (FREQ, INTERVAL)

    /// The period holding civil time `c`, numbered from an arbitrary origin.
    func periodIndex(_ c: Int64) -> Int64 {
        switch rule.frequency {
        case .minutely: return floorDiv(c, 60)
        case .hourly: return floorDiv(c, 3600)
        case .daily: return floorDiv(c, 86_400)
        case .weekly: return floorDiv(floorDiv(c, 86_400) - weekAnchor, 7)
        case .monthly:
            let (y, m, _) = CivilDays.date(dayNumber: floorDiv(c, 86_400))
            return y * 12 + Int64(m - 1)
        case .yearly: return CivilDays.date(dayNumber: floorDiv(c, 86_400)).year
        }
    }

    /// The civil time at which period `p` starts.
    func periodStart(_ p: Int64) -> Int64 {
        switch rule.frequency {
        case .minutely: return p * 60
        case .hourly: return p * 3600
        case .daily: return p * 86_400
        case .weekly: return (weekAnchor + p * 7) * 86_400
        case .monthly:
            let y = floorDiv(p, 12)
            return CivilDays.dayNumber(year: y, month: Int(p - y * 12) + 1, day: 1) * 86_400
        case .yearly: return CivilDays.dayNumber(year: p, month: 1, day: 1) * 86_400
        }
    }

    /// A day on which a week starts (1970-01-04 was a Sunday).
    var weekAnchor: Int64 { 3 + Int64(rule.weekStart - 1) }

    /// The rule's first civil instance at or after `from`, not after `endLocal`.
    func nextLocal(atOrAfter from: Int64) -> Int64? {
        var l = max(from, startLocal)
        // Every period is aligned and every match an instance: the first match is the answer.
        if interval == 1 && setPositions.isEmpty { return l <= endLocal ? firstMatch(atOrAfter: l) : nil }
        var steps = 0
        while l <= endLocal {
            guard let c = firstMatch(atOrAfter: l) else { return nil }
            var p = periodIndex(c)
            let r = floorMod(p - startPeriod, interval)
            if r != 0 {
                p += interval - r
                l = periodStart(p)
            } else if setPositions.isEmpty {
                return c
            } else {
                if let s = selected(inPeriod: p, atOrAfter: l) { return s <= endLocal ? s : nil }
                l = periodStart(p + 1)
            }
            steps += 1
            if steps > 5_000_000 { return nil }   // a search that long finds nothing in 400 years
        }
        return nil
    }

    // MARK: Filters

    /// The first civil time ≥ `from` (≤ `endLocal`) whose day and time pass every filter.
    /// `from` is at most `endLocal` (year 9999) and at or after the start of DTSTART's period
    /// (DTSTART is in year 1 or later; its week may start in year 0).
    @inline(__always)
    func firstMatch(atOrAfter from: Int64) -> Int64? {
        var (d, timeOfDay) = Self.dayAndTime(from)
        if searchesByMonth { return firstMatchByMonth(day: d, timeOfDay: timeOfDay) }
        let lastDay = floorDiv(endLocal, 86_400)
        while d <= lastDay {
            if weekdaysOnly {
                let w = CivilDays.weekday(dayNumber: d) - 1
                let ahead = UInt16(weekdays) | UInt16(weekdays) << 7
                let skip = (ahead >> UInt16(w)).trailingZeroBitCount
                if skip > 0 { d += Int64(skip); timeOfDay = 0 }
            }
            if let t = time(atOrAfter: timeOfDay) {
                let c = d * 86_400 + t
                return c <= endLocal ? c : nil
            }
            d += 1
            timeOfDay = 0
        }
        return nil
    }

    /// The day number and the time of day of a civil time at or after 0000-03-01 (719,468 days
    /// before 1970-01-01): counted from then it is non-negative, so the split is unsigned.
    @inline(__always)
    static func dayAndTime(_ c: Int64) -> (day: Int64, timeOfDay: Int64) {
        let shifted = UInt64(bitPattern: c &+ 719_468 &* 86_400)
        let days = shifted / 86_400
        return (Int64(days) &- 719_468, Int64(shifted &- days &* 86_400))
    }

    /// ``firstMatch`` when days are filtered month by month: one civil-from-days for day `d`,
    /// then each next month's first day, length and first weekday by addition. Bit k of `mask`
    /// is day `base + k`; day `d` is cleared when its times are all before `timeOfDay`, so every
    /// later day starts at `firstTimeOfDay`.
    /// - Complexity: O(1) per month skipped (one mask lookup and a bit scan).
    @inline(__always)
    func firstMatchByMonth(day d: Int64, timeOfDay: Int64) -> Int64? {
        var (y, m, dd) = CivilDays.date(dayNumber: d)
        var first = d &- Int64(dd &- 1)
        var length = Self.monthLength(year: y, month: m)
        var firstWeekday = Self.weekday0(first)
        // dd − 1 ∈ 0…30: a plain shift.
        var mask = monthMask(year: y, month: m, first: first, length: length, firstWeekday: firstWeekday) &>> UInt32(truncatingIfNeeded: dd &- 1)
        if mask & 1 != 0 {
            if let t = time(atOrAfter: timeOfDay) {
                let c = d &* 86_400 &+ t
                return c <= endLocal ? c : nil
            }
            mask &= ~1
        }
        var base = d
        while mask == 0 {
            first &+= Int64(length)
            // first ≤ endLocal's day; days of years 1…10000 times 86,400 do not overflow.
            guard first &* 86_400 <= endLocal else { return nil }
            // length − 28 ∈ 0…3, so the sum is below 14.
            firstWeekday &+= length &- 28
            if firstWeekday >= 7 { firstWeekday &-= 7 }
            if m == 12 { m = 1; y &+= 1 } else { m &+= 1 }
            length = Self.monthLength(year: y, month: m)
            base = first
            mask = monthMask(year: y, month: m, first: first, length: length, firstWeekday: firstWeekday)
        }
        // base ≤ lastDay ≤ 9999-12-31: no overflow.
        let c = (base &+ Int64(mask.trailingZeroBitCount)) &* 86_400 &+ firstTimeOfDay
        return c <= endLocal ? c : nil
    }

    /// ``firstMatchByMonth`` for ``usesMonthTable``: the first match at or after civil time `l`,
    /// or `Int64.max` when none is by `endLocal`. Within 1970…2099 each month's first day, shape
    /// and number come from `index` (two reads), each month's mask is one entry of
    /// ``monthMasks`` by its shape, and the next month is the next entry; elsewhere
    /// ``firstMatchByMonth(day:timeOfDay:)`` computes them.
    /// - Complexity: O(1) per month skipped. No allocation.
    @inline(__always)
    func firstInMonthTable(atOrAfter l: Int64, _ index: CivilMonthIndex) -> Int64 {
        let (d, timeOfDay) = Self.dayAndTime(l)
        guard let i0 = index.month(containing: d) else { return firstMatchByMonth(day: d, timeOfDay: timeOfDay) ?? .max }
        return monthMasks.withUnsafeBufferPointer { masks in
            index.months.withUnsafeBufferPointer { entries -> Int64 in
                // An entry's shape is 0…27, within the table's 28 masks.
                func mask(_ e: UInt32) -> UInt32 {
                    everyMonth || months & (1 &<< UInt16(truncatingIfNeeded: e &>> 21)) != 0 ? masks[Int(e &>> 16 & 31)] : 0
                }
                var i = i0
                var e = entries[i]
                // d − first ∈ 0…30: a plain shift.
                var bits = mask(e) &>> UInt32(truncatingIfNeeded: d &- Int64(e & 0xFFFF))
                if bits & 1 != 0 {
                    if let t = time(atOrAfter: timeOfDay) { return d &* 86_400 &+ t }
                    bits &= ~1
                }
                var base = d
                while bits == 0 {
                    i &+= 1
                    guard i < entries.count else { return firstMatchByMonth(day: CivilMonthIndex.endDay, timeOfDay: 0) ?? .max }
                    e = entries[i]
                    base = Int64(e & 0xFFFF)
                    guard base &* 86_400 <= endLocal else { return .max }
                    bits = mask(e)
                }
                return (base &+ Int64(bits.trailingZeroBitCount)) &* 86_400 &+ firstTimeOfDay
            }
        }
    }

    /// Days in month `m` (1…12) of year `y`: 30 or 31 from the month's parity (flipped from
    /// August on), February from the leap rule (divisible by 4, and by 16 when by 25).
    @inline(__always)
    static func monthLength(year y: Int64, month m: Int) -> Int {
        if m == 2 { return y & 3 == 0 && (y % 25 != 0 || y & 15 == 0) ? 29 : 28 }
        return 30 | ((m ^ (m &>> 3)) & 1)
    }

    /// Weekday of a day number of years 1…9999, 0 = Sunday (1970-01-01 was a Thursday).
    @inline(__always)
    static func weekday0(_ day: Int64) -> Int {
        // day ≥ −719,162 (0001-01-01), so x = day + 4 + 7 · 200,000 is positive and below 2^32;
        // x mod 7 as Lemire's fastmod: the fraction x/7 in 64 bits (x · ⌈2^64/7⌉), times 7.
        let x = UInt64(truncatingIfNeeded: day &+ 1_400_004) & 0xFFFF_FFFF
        return Int((x &* 0x2492_4924_9249_2493).multipliedFullWidth(by: 7).high)
    }

    /// The first time of day ≥ `t`: the bounds of the time masks first (one time a day, the
    /// common case, never reaches the bit search).
    @inline(__always)
    func time(atOrAfter t: Int64) -> Int64? {
        if t <= firstTimeOfDay { return firstTimeOfDay }
        if t > lastTimeOfDay { return nil }
        return firstTime(atOrAfter: t)
    }

    /// The first time of day ≥ `t` (seconds after midnight) in the hour, minute and second masks.
    func firstTime(atOrAfter t: Int64) -> Int64? {
        let h = Int(t / 3600), m = Int(t / 60 % 60), s = Int(t % 60)
        if hours & (1 << UInt32(h)) != 0 {
            if minutes & (1 << UInt64(m)) != 0, let s2 = Self.firstBit(seconds, from: s) {
                return Int64(h * 3600 + m * 60 + s2)
            }
            if let m2 = Self.firstBit(minutes, from: m + 1) {
                return Int64(h * 3600 + m2 * 60 + seconds.trailingZeroBitCount)
            }
        }
        if let h2 = Self.firstBit(UInt64(hours), from: h + 1) {
            return Int64(h2 * 3600 + minutes.trailingZeroBitCount * 60 + seconds.trailingZeroBitCount)
        }
        return nil
    }

    @inline(__always)
    static func firstBit(_ mask: UInt64, from i: Int) -> Int? {
        guard i < 64 else { return nil }
        let m = mask >> UInt64(i)
        return m == 0 ? nil : i + m.trailingZeroBitCount
    }

    @inline(__always)
    static func monthMaskIndex(length: Int, first: Int64) -> Int {
        CivilMonthIndex.shape(length: length, firstWeekday: CivilDays.weekday(dayNumber: first) - 1)
    }

    /// ``dayMask`` from the table when the schedule has one (`length` and `firstWeekday`, 0 =
    /// Sunday, are the month's).
    @inline(__always)
    func monthMask(year y: Int64, month m: Int, first: Int64, length: Int, firstWeekday: Int) -> UInt32 {
        if monthMasks.isEmpty { return dayMask(year: y, month: m, first: first) }
        guard everyMonth || months & (1 &<< UInt16(truncatingIfNeeded: m &- 1)) != 0 else { return 0 }
        // length ∈ 28…31 and firstWeekday ∈ 0…6: the index is within the table's 28 entries.
        return monthMasks.withUnsafeBufferPointer { $0[CivilMonthIndex.shape(length: length, firstWeekday: firstWeekday)] }
    }

    /// The days of a month that pass every day filter: bit k = day k+1.
    func dayMask(year y: Int64, month m: Int, first: Int64) -> UInt32 {
        guard months & (1 << UInt16(m - 1)) != 0 else { return 0 }
        let length = CivilDays.daysInMonth(year: y, month: m)
        var mask: UInt32 = (1 << UInt32(length)) - 1
        if hasWeekdayPart {
            var days: UInt32 = 0
            if weekdays != 0 {
                let shift = UInt8(CivilDays.weekday(dayNumber: first) - 1)
                let rotated = UInt64(((weekdays >> shift) | (weekdays << (7 - shift))) & 0x7F)
                days = UInt32(truncatingIfNeeded: rotated &* 0x1020_4081)
            }
            for o in ordinals {
                let lo: Int64, hi: Int64
                if ordinalsInYear {
                    lo = CivilDays.dayNumber(year: y, month: 1, day: 1)
                    hi = lo + Int64(CivilDays.daysInYear(y)) - 1
                } else {
                    lo = first
                    hi = first + Int64(length) - 1
                }
                let target: Int64
                if o.ordinal > 0 {
                    target = lo + Int64((o.weekday - CivilDays.weekday(dayNumber: lo) + 7) % 7) + Int64(o.ordinal - 1) * 7
                } else {
                    target = hi - Int64((CivilDays.weekday(dayNumber: hi) - o.weekday + 7) % 7) - Int64(-o.ordinal - 1) * 7
                }
                if target >= first && target < first + Int64(length) && target >= lo && target <= hi {
                    days |= 1 << UInt32(target - first)
                }
            }
            mask &= days
        }
        if hasMonthDays {
            mask &= monthDaysPositive | (monthDaysNegative >> UInt32(31 - length))
        }
        if !yearDays.isEmpty {
            let dayOfYear = Int(first - CivilDays.dayNumber(year: y, month: 1, day: 1))
            let base = CivilDays.isLeapYear(y) ? 6 : 0
            let w = dayOfYear >> 6, b = UInt64(dayOfYear & 63)
            var bits = yearDays[base + w] >> b
            if b > 0 && w + 1 < 6 { bits |= yearDays[base + w + 1] << (64 - b) }
            mask &= UInt32(truncatingIfNeeded: bits)
        }
        if hasWeekNumbers {
            var weeks: UInt32 = 0
            var d = first
            let end = first + Int64(length)
            while d < end {
                let (wy, w) = weekNumbering.weekOfYear(day: d, year: CivilDays.date(dayNumber: d).year)
                let count = Int((weekNumbering.startOfWeekOne(year: wy + 1) - weekNumbering.startOfWeekOne(year: wy)) / 7)
                let weekEnd = min(end, d + 7 - weekNumbering.daysIntoWeek(d))
                if weekNumbersPositive & (1 << UInt64(w)) != 0 || weekNumbersNegative & (1 << UInt64(count - w + 1)) != 0 {
                    for k in d ..< weekEnd { weeks |= 1 << UInt32(k - first) }
                }
                d = weekEnd
            }
            mask &= weeks
        }
        return mask
    }

    // MARK: BYSETPOS

    /// The instance BYSETPOS selects in period `p` that is first at or after `from`, or nil.
    func selected(inPeriod p: Int64, atOrAfter from: Int64) -> Int64? {
        let periodStart = periodStart(p), periodEnd = self.periodStart(p + 1)
        let nh = hours.nonzeroBitCount, nm = minutes.nonzeroBitCount, ns = seconds.nonzeroBitCount
        var best: Int64? = nil
        switch rule.frequency {
        case .minutely, .hourly:
            let d = floorDiv(periodStart, 86_400)
            guard dayMatches(d) else { return nil }
            let h = Int((periodStart - d * 86_400) / 3600)
            guard hours & (1 << UInt32(h)) != 0 else { return nil }
            let minute = Int((periodStart / 60) % 60)
            if rule.frequency == .minutely && minutes & (1 << UInt64(minute)) == 0 { return nil }
            let n = rule.frequency == .minutely ? ns : nm * ns
            for pos in setPositions {
                let k = pos > 0 ? pos - 1 : n + pos
                guard k >= 0 && k < n else { continue }
                let c: Int64
                if rule.frequency == .minutely {
                    c = periodStart + Int64(Self.nthBit(seconds, k))
                } else {
                    c = periodStart + Int64(Self.nthBit(minutes, k / ns) * 60 + Self.nthBit(seconds, k % ns))
                }
                if c >= from && c < (best ?? .max) { best = c }
            }
        default:
            let perDay = nh * nm * ns
            let firstDay = floorDiv(periodStart, 86_400), endDay = floorDiv(periodEnd, 86_400)
            let days = matchingDays(from: firstDay, to: endDay, select: nil).count
            let n = days * perDay
            for pos in setPositions {
                let k = pos > 0 ? pos - 1 : n + pos
                guard k >= 0 && k < n else { continue }
                let d = matchingDays(from: firstDay, to: endDay, select: k / perDay).day
                let t = k % perDay
                let h = Self.nthBit(UInt64(hours), t / (nm * ns))
                let m = Self.nthBit(minutes, (t / ns) % nm)
                let s = Self.nthBit(seconds, t % ns)
                let c = d * 86_400 + Int64(h * 3600 + m * 60 + s)
                if c >= from && c < (best ?? .max) { best = c }
            }
        }
        return best
    }

    func dayMatches(_ d: Int64) -> Bool {
        if noDayFilter { return true }
        let (y, m, dd) = CivilDays.date(dayNumber: d)
        return dayMask(year: y, month: m, first: d - Int64(dd - 1)) & (1 << UInt32(dd - 1)) != 0
    }

    /// Counts the matching days in [from, to), or (select = k) finds the k-th of them.
    func matchingDays(from: Int64, to: Int64, select: Int?) -> (count: Int, day: Int64) {
        var count = 0
        var d = from
        while d < to {
            let (y, m, dd) = CivilDays.date(dayNumber: d)
            let first = d - Int64(dd - 1)
            let length = CivilDays.daysInMonth(year: y, month: m)
            let monthEnd = first + Int64(length)
            var mask = dayMask(year: y, month: m, first: first) >> UInt32(dd - 1)
            let span = Int(min(monthEnd, to) - d)
            if span < 32 { mask &= (1 << UInt32(span)) - 1 }
            let n = mask.nonzeroBitCount
            if let k = select, k < count + n {
                return (count, d + Int64(Self.nthBit(UInt64(mask), k - count)))
            }
            count += n
            d = min(monthEnd, to)
        }
        return (count, -1)
    }

    /// The index of the k-th set bit (k from 0).
    static func nthBit(_ mask: UInt64, _ k: Int) -> Int {
        var m = mask
        for _ in 0 ..< k { m &= m - 1 }
        return m.trailingZeroBitCount
    }
}

/// Dates of EXDATE and RDATE (and of an exclusion calendar), each kind sorted for binary search.
public struct RecurrenceDates: Hashable, Sendable {
    /// Civil times (local seconds) in the schedule's zone.
    public private(set) var local: [Int64] = []
    /// Whole civil days (day numbers): every instance on such a day.
    public private(set) var days: [Int64] = []
    /// UTC instants.
    public private(set) var instants: [Int64] = []

    public init() {}

    public var isEmpty: Bool { local.isEmpty && days.isEmpty && instants.isEmpty }
    public var count: Int { local.count + days.count + instants.count }

    /// Adds `2026-12-25T07:00:00` / `20261225T070000` (a local time), `…Z` (an instant) or
    /// `2026-12-25` / `20261225` (a whole day).
    /// - Returns: false when the text is none of these.
    public mutating func add(_ text: String) -> Bool {
        guard let p = RecurrenceText.parse(text) else { return false }
        if p.isDate { Self.insert(&days, CivilDays.dayNumber(year: p.civil.year, month: p.civil.month, day: p.civil.day)) }
        else if p.utc { Self.insert(&instants, p.civil.localSeconds) }
        else { Self.insert(&local, p.civil.localSeconds) }
        return true
    }

    /// Adds every text of `texts` as ``add(_:)`` reads it, sorting once: O(n log n) for n dates in
    /// any order (one ``add(_:)`` each would move O(n) elements per date out of order).
    /// - Returns: the index of the first text that is not a date (nothing is added then), or nil.
    public mutating func add(contentsOf texts: [String]) -> Int? {
        var more = (local: [Int64](), days: [Int64](), instants: [Int64]())
        for (i, text) in texts.enumerated() {
            guard let p = RecurrenceText.parse(text) else { return i }
            if p.isDate { more.days.append(CivilDays.dayNumber(year: p.civil.year, month: p.civil.month, day: p.civil.day)) }
            else if p.utc { more.instants.append(p.civil.localSeconds) }
            else { more.local.append(p.civil.localSeconds) }
        }
        Self.merge(&local, more.local)
        Self.merge(&days, more.days)
        Self.merge(&instants, more.instants)
        return nil
    }

    public mutating func add(day: Int64) { Self.insert(&days, day) }
    public mutating func add(local c: CivilDateTime) { Self.insert(&local, c.localSeconds) }
    public mutating func add(instant t: WallInstant) { Self.insert(&instants, t.secondsSinceEpoch) }

    /// Every date, as ``add(_:)`` reads it (days as dates, instants with `Z`).
    public var texts: [String] {
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var out: [String] = []
        for d in days {
            let (y, m, dd) = CivilDays.date(dayNumber: d)
            out.append("\(y)-\(two(m))-\(two(dd))")
        }
        for c in local { out.append(CivilDateTime(localSeconds: c).iso8601) }
        for i in instants { out.append(CivilDateTime(localSeconds: i).iso8601 + "Z") }
        return out
    }

    func contains(local c: Int64, instant i: Int64) -> Bool {
        Self.has(local, c) || Self.has(days, floorDiv(c, 86_400)) || Self.has(instants, i)
    }

    /// `a` (sorted, distinct) with `more` (any order) added: sorted and distinct again.
    private static func merge(_ a: inout [Int64], _ more: [Int64]) {
        guard !more.isEmpty else { return }
        var all = a
        all.append(contentsOf: more)
        all.sort()
        var out: [Int64] = []
        out.reserveCapacity(all.count)
        for v in all where out.last != v { out.append(v) }
        a = out
    }

    private static func insert(_ a: inout [Int64], _ v: Int64) {
        let k = Self.lowerBound(a, v)
        if k == a.count || a[k] != v { a.insert(v, at: k) }
    }

    static func has(_ a: [Int64], _ v: Int64) -> Bool {
        if a.isEmpty { return false }
        let k = lowerBound(a, v)
        return k < a.count && a[k] == v
    }

    static func lowerBound(_ a: [Int64], _ v: Int64) -> Int {
        var lo = 0, hi = a.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if a[mid] < v { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
