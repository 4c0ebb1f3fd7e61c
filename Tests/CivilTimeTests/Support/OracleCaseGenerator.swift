import CivilTime
import SeededRandom

/// One random calendar-oracle case: a match, a zone, a search start and the policies.
struct OracleCase: Sendable, CustomStringConvertible {
    var index: Int
    var zone: String
    /// Whole seconds since the Unix epoch.
    var after: Int64
    var match: CalendarMatch
    var policy: MatchingPolicy
    var repeated: RepeatedTimePolicy
    var weekRules: WeekRules
    /// Which shape of components it was drawn from (for the summary and dumps).
    var shape: String
    /// The transition the start was placed near, if any.
    var nearTransition: Int64?

    var description: String {
        "case #\(index) [\(shape)] zone=\(zone) after=\(OracleFormat.utc(after)) (\(after))"
            + " match=\(OracleFormat.match(match)) policy=\(policy) repeated=\(repeated)"
            + " firstWeekday=\(weekRules.firstWeekday) minDays=\(weekRules.minimumDaysInFirstWeek)"
            + (nearTransition.map { " nearTransition=\(OracleFormat.utc($0))" } ?? "")
    }
}

enum OracleFormat {
    static func utc(_ t: Int64?) -> String {
        guard let t else { return "nil" }
        return WallInstant(secondsSinceEpoch: t).description
    }

    /// `2024-03-31T03:00:00+02:00`, in the zone of `offsetAt`.
    static func local(_ t: Int64?, _ offsetAt: (Int64) -> Int) -> String {
        guard let t else { return "nil" }
        let o = offsetAt(t)
        let sign = o < 0 ? "-" : "+"
        let a = abs(o)
        let hh = a / 3600, mm = (a / 60) % 60, ss = a % 60
        func p(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return CivilDateTime(localSeconds: t + Int64(o)).iso8601 + sign + p(hh) + ":" + p(mm) + (ss != 0 ? ":" + p(ss) : "")
    }

    static func match(_ m: CalendarMatch) -> String {
        var parts: [String] = []
        if let v = m.year { parts.append("year: \(v)") }
        if let v = m.month { parts.append("month: \(v)") }
        if let v = m.day { parts.append("day: \(v)") }
        if let v = m.hour { parts.append("hour: \(v)") }
        if let v = m.minute { parts.append("minute: \(v)") }
        if let v = m.second { parts.append("second: \(v)") }
        if let v = m.weekday { parts.append("weekday: \(v)") }
        if let v = m.weekdayOrdinal { parts.append("weekdayOrdinal: \(v)") }
        if let v = m.weekOfMonth { parts.append("weekOfMonth: \(v)") }
        if let v = m.weekOfYear { parts.append("weekOfYear: \(v)") }
        if let v = m.yearForWeekOfYear { parts.append("yearForWeekOfYear: \(v)") }
        if let v = m.dayOfYear { parts.append("dayOfYear: \(v)") }
        return "{" + parts.joined(separator: ", ") + "}"
    }
}

/// What the generator needs to know about a zone.
struct OracleZoneInfo: Sendable {
    var name: String
    /// Instants in 1900…2200 at which the UTC offset changes.
    var transitions: [Int64]
    var offsetAt: @Sendable (Int64) -> Int
}

/// Draws cases from realistic shapes of components with values biased toward the edges
/// (day 29–31, hour 0–3, February, week 52/53 …), starts uniform in 1900…2200 or (30 %) within
/// ±3 days of one of the zone's offset transitions, all four matching policies and both repeated-time
/// policies, and non-default week rules on a quarter of the cases.
struct OracleCaseGenerator {
    static let start1900: Int64 = -2_208_988_800   // 1900-01-01T00:00:00Z
    static let end2200: Int64 = 7_258_118_400      // 2200-01-01T00:00:00Z

    static let shapes: [(name: String, weight: Int)] = [
        ("daily{h,m}", 10), ("daily{h,m,s}", 5), ("weekly{wd,h,m}", 8), ("monthly{d,h,m}", 8),
        ("yearly{mo,d,h,m}", 8), ("hourly{m}", 5), ("{s}", 3), ("{wd,wdo}", 4), ("{woy,wd}", 4),
        ("{wom,wd}", 4), ("{doy}", 3), ("{yfw,woy,wd}", 4), ("{y,mo,d}", 4), ("{wdo,wd,h,m}", 4),
        ("{h}", 3), ("{mo,d}", 3), ("single", 8), ("subset", 13),
    ]

    var zones: [OracleZoneInfo]

    func makeCase(index: Int, rng g: inout SplitMix64) -> OracleCase {
        let zone = g.pick(zones)
        var near: Int64? = nil
        var after: Int64
        if g.chance(0.3), !zone.transitions.isEmpty {
            let x = g.pick(zone.transitions)
            near = x
            after = x + Int64(g.int(-3 * 86_400...3 * 86_400))
        } else {
            after = Int64.random(in: Self.start1900..<Self.end2200, using: &g)
        }
        let startYear = Int(CivilDateTime(localSeconds: after + Int64(zone.offsetAt(after))).year)

        let total = Self.shapes.reduce(0) { $0 + $1.weight }
        var r = g.int(0...total - 1)
        var shape = Self.shapes[0].name
        for s in Self.shapes {
            if r < s.weight { shape = s.name; break }
            r -= s.weight
        }

        let v = OracleValueDrawer(startYear: startYear)
        var m = CalendarMatch()
        var w = WeekRules.gregorianDefault
        if g.chance(0.25) {
            w = WeekRules(firstWeekday: g.int(1...7), minimumDaysInFirstWeek: g.int(1...7))
        }
        // Week-based and random combinations are mostly taken from a real day (so that they occur
        // at all), a day within a few years of the start.
        let target = BruteForceNextDate.makeDay(
            BruteForceNextDate.floorDiv(after + Int64(zone.offsetAt(after)), 86_400) + Int64(g.int(1...1500)), w)
        let fromTarget = g.chance(shape == "subset" ? 0.9 : 0.75)
        switch shape {
        case "daily{h,m}": m.hour = v.hour(&g); m.minute = v.minute(&g)
        case "daily{h,m,s}": m.hour = v.hour(&g); m.minute = v.minute(&g); m.second = v.second(&g)
        case "weekly{wd,h,m}": m.weekday = v.weekday(&g); m.hour = v.hour(&g); m.minute = v.minute(&g)
        case "monthly{d,h,m}": m.day = v.day(&g); m.hour = v.hour(&g); m.minute = v.minute(&g)
        case "yearly{mo,d,h,m}":
            m.month = v.month(&g); m.day = v.day(&g); m.hour = v.hour(&g); m.minute = v.minute(&g)
        case "hourly{m}": m.minute = v.minute(&g)
        case "{s}": m.second = v.second(&g)
        case "{wd,wdo}" where fromTarget: m.weekday = target.weekday; m.weekdayOrdinal = target.weekdayOrdinal
        case "{wd,wdo}": m.weekday = v.weekday(&g); m.weekdayOrdinal = v.weekdayOrdinal(&g)
        case "{woy,wd}" where fromTarget: m.weekOfYear = target.weekOfYear; m.weekday = target.weekday
        case "{woy,wd}": m.weekOfYear = v.weekOfYear(&g); m.weekday = v.weekday(&g)
        case "{wom,wd}" where fromTarget: m.weekOfMonth = target.weekOfMonth; m.weekday = target.weekday
        case "{wom,wd}": m.weekOfMonth = v.weekOfMonth(&g); m.weekday = v.weekday(&g)
        case "{doy}": m.dayOfYear = v.dayOfYear(&g)
        case "{yfw,woy,wd}" where fromTarget:
            m.yearForWeekOfYear = Int(target.yearForWeekOfYear); m.weekOfYear = target.weekOfYear
            m.weekday = target.weekday
        case "{yfw,woy,wd}":
            m.yearForWeekOfYear = v.year(&g); m.weekOfYear = v.weekOfYear(&g); m.weekday = v.weekday(&g)
        case "{y,mo,d}": m.year = v.year(&g); m.month = v.month(&g); m.day = v.day(&g)
        case "{wdo,wd,h,m}":
            m.weekdayOrdinal = v.weekdayOrdinal(&g); m.weekday = v.weekday(&g); m.hour = v.hour(&g)
            m.minute = v.minute(&g)
        case "{h}": m.hour = v.hour(&g)
        case "{mo,d}": m.month = v.month(&g); m.day = v.day(&g)
        case "single":
            v.set(&m, component: g.int(0...11), &g)
        default: // subset
            if fromTarget {
                let hh = v.hour(&g), mi = v.minute(&g), ss = v.second(&g)
                repeat {
                    if g.chance(0.2) { m.year = Int(target.year) }
                    if g.chance(0.25) { m.month = target.month }
                    if g.chance(0.25) { m.day = target.day }
                    if g.chance(0.3) { m.hour = hh }
                    if g.chance(0.3) { m.minute = mi }
                    if g.chance(0.2) { m.second = ss }
                    if g.chance(0.25) { m.weekday = target.weekday }
                    if g.chance(0.2) { m.weekdayOrdinal = target.weekdayOrdinal }
                    if g.chance(0.2) { m.weekOfMonth = target.weekOfMonth }
                    if g.chance(0.2) { m.weekOfYear = target.weekOfYear }
                    if g.chance(0.15) { m.yearForWeekOfYear = Int(target.yearForWeekOfYear) }
                    if g.chance(0.15) { m.dayOfYear = target.dayOfYear }
                } while m == CalendarMatch()
                break
            }
            repeat {
                for c in 0..<12 where g.chance(0.25) { v.set(&m, component: c, &g) }
            } while m == CalendarMatch()
        }

        // Near a transition, often ask for the very day and hour the clocks change.
        if let x = near, g.chance(0.5) {
            let beforeJump = CivilDateTime(localSeconds: x - 1 + Int64(zone.offsetAt(x - 1)))
            let afterJump = CivilDateTime(localSeconds: x + Int64(zone.offsetAt(x)))
            let c = g.chance(0.5) ? beforeJump : afterJump
            if m.hour != nil { m.hour = c.hour }
            if m.minute != nil && g.chance(0.5) { m.minute = g.pick([c.minute, (c.minute + 30) % 60, (c.minute + 15) % 60]) }
            if m.day != nil { m.day = c.day }
            if m.month != nil { m.month = c.month }
            if m.weekday != nil {
                m.weekday = CivilDays.weekday(dayNumber: CivilDays.dayNumber(year: c.year, month: c.month, day: c.day))
            }
        }

        return OracleCase(
            index: index, zone: zone.name, after: after, match: m,
            policy: g.pick(MatchingPolicy.allCases), repeated: g.pick(RepeatedTimePolicy.allCases),
            weekRules: w, shape: shape, nearTransition: near)
    }
}

/// Component values in range, biased toward the edges.
struct OracleValueDrawer {
    var startYear: Int

    func year(_ g: inout SplitMix64) -> Int {
        // Mostly the start's year or a few after it; now and then any year (mostly in the past:
        // nothing matches, which is expensive for Foundation, so keep it rare).
        if g.chance(0.95) { return max(1, min(9999, startYear + g.int(0...4))) }
        return g.int(1890...2300)
    }
    func month(_ g: inout SplitMix64) -> Int { g.chance(0.3) ? 2 : g.int(1...12) }
    func day(_ g: inout SplitMix64) -> Int { g.chance(0.4) ? g.int(29...31) : g.int(1...31) }
    func hour(_ g: inout SplitMix64) -> Int { g.chance(0.4) ? g.int(0...3) : g.int(0...23) }
    func minute(_ g: inout SplitMix64) -> Int { g.chance(0.4) ? g.pick([0, 15, 30, 45, 59]) : g.int(0...59) }
    func second(_ g: inout SplitMix64) -> Int { g.chance(0.4) ? g.pick([0, 59]) : g.int(0...59) }
    func weekday(_ g: inout SplitMix64) -> Int { g.int(1...7) }
    func weekdayOrdinal(_ g: inout SplitMix64) -> Int { g.chance(0.3) ? 5 : g.int(1...5) }
    func weekOfMonth(_ g: inout SplitMix64) -> Int { g.chance(0.3) ? g.pick([0, 5, 6]) : g.int(0...6) }
    func weekOfYear(_ g: inout SplitMix64) -> Int { g.chance(0.4) ? g.pick([1, 52, 53]) : g.int(1...53) }
    func dayOfYear(_ g: inout SplitMix64) -> Int { g.chance(0.4) ? g.pick([1, 59, 60, 365, 366]) : g.int(1...366) }

    /// Sets component `c` (0 year, 1 month, 2 day, 3 hour, 4 minute, 5 second, 6 weekday,
    /// 7 weekdayOrdinal, 8 weekOfMonth, 9 weekOfYear, 10 yearForWeekOfYear, 11 dayOfYear).
    func set(_ m: inout CalendarMatch, component c: Int, _ g: inout SplitMix64) {
        switch c {
        case 0: m.year = year(&g)
        case 1: m.month = month(&g)
        case 2: m.day = day(&g)
        case 3: m.hour = hour(&g)
        case 4: m.minute = minute(&g)
        case 5: m.second = second(&g)
        case 6: m.weekday = weekday(&g)
        case 7: m.weekdayOrdinal = weekdayOrdinal(&g)
        case 8: m.weekOfMonth = weekOfMonth(&g)
        case 9: m.weekOfYear = weekOfYear(&g)
        case 10: m.yearForWeekOfYear = year(&g)
        default: m.dayOfYear = dayOfYear(&g)
        }
    }
}
