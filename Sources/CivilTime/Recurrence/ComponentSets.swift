// Sets and last days in the component form (`weekday mon-fri`, `hour 8-18/2`, `day -1`,
// `weekday fri` + `weekdayOrdinal -1`): sugar over the recurrence engine. A match with a set or a
// negative value becomes the RRULE that means the same under the component rules (SEMANTICS.md §1:
// components below the smallest given take their lowest value, those above it are free).

/// Component values that are sets: each component's values, by the names of ``CalendarMatch``.
public struct ComponentSets: Hashable, Sendable {
    public private(set) var values: [(name: String, values: [Int])] = []

    public init() {}

    public static func == (a: Self, b: Self) -> Bool {
        a.values.count == b.values.count && zip(a.values, b.values).allSatisfy { $0.name == $1.name && $0.values == $1.values }
    }
    public func hash(into h: inout Hasher) { for v in values { h.combine(v.name); h.combine(v.values) } }

    /// The components this form takes.
    public static let names = ["year", "month", "day", "hour", "minute", "second", "weekday", "weekdayOrdinal", "dayOfYear", "weekOfYear"]

    public subscript(_ name: String) -> [Int]? { values.first { $0.name == name }?.values }

    /// Adds values to component `name` (a repeated option adds to its list). A component's values
    /// are kept sorted and distinct.
    /// - Complexity: O((m + k) log(m + k)) for m values held and k added: one call per list.
    public mutating func add(_ name: String, _ new: [Int]) {
        if let i = values.firstIndex(where: { $0.name == name }) {
            values[i].values = Self.distinct(values[i].values + new)
        } else {
            values.append((name, Self.distinct(new)))
        }
    }

    static func distinct(_ v: [Int]) -> [Int] {
        var out: [Int] = []
        out.reserveCapacity(v.count)
        for x in v.sorted() where out.last != x { out.append(x) }
        return out
    }

    /// No component takes a value beyond ±9999 (years); a range is expanded only within these
    /// bounds, and a bound outside them is kept as a value so that ``rule()`` names it.
    public static let limit = 9999

    /// Whether these components need the recurrence engine: a set, a range, or a negative day or
    /// ordinal. A single plain value per component is an ordinary ``CalendarMatch``.
    public var needsRule: Bool { values.contains { $0.values.count > 1 || $0.values.contains { $0 < 0 } } }

    /// The single-valued components as a match (when `needsRule` is false).
    public var match: CalendarMatch {
        var m = CalendarMatch()
        for v in values where v.values.count == 1 { _ = m.setComponent(v.name, to: v.values[0]) }
        return m
    }

    /// Reads `8`, `8-18`, `8-18/2`, `1,15,-1`, `mon-fri`, `mon,wed` (weekdays by name or 1…7 with
    /// 1 = Sunday). nil when malformed.
    public static func parse(_ name: String, _ text: String) -> [Int]? {
        var out: [Int] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            var range = Substring(item)
            var step = 1
            if let slash = range.firstIndex(of: "/") {
                guard let s = Int(range[range.index(after: slash)...]), s >= 1 else { return nil }
                step = s
                range = range[..<slash]
            }
            func value(_ t: Substring) -> Int? {
                if name == "weekday", let w = CalendarMatch.weekday(named: String(t)) { return w }
                return Int(t)
            }
            // A dash after the first character separates a range (`8-18`, `mon-fri`); a leading one is a sign.
            if let dash = range.dropFirst().firstIndex(of: "-") {
                guard let lo = value(range[..<dash]), let hi = value(range[range.index(after: dash)...]), lo <= hi else { return nil }
                if lo < -limit { out.append(lo) }
                if hi > limit { out.append(hi) }
                var v = max(lo, -limit)
                while v <= min(hi, limit) {
                    out.append(v)
                    let (next, overflow) = v.addingReportingOverflow(step)
                    if overflow { break }
                    v = next
                }
            } else {
                guard step == 1, let v = value(range) else { return nil }
                out.append(v)
            }
        }
        return out.isEmpty ? nil : distinct(out)
    }

    /// The rule and DTSTART that mean these components.
    /// - Throws: ``RecurrenceError`` naming the component (by its component name) when a value is
    ///   out of range or the combination has no rule form.
    public func rule() throws(RecurrenceError) -> (rule: RecurrenceRule, start: CivilDateTime) {
        func check(_ name: String, _ range: ClosedRange<Int>, negative: Bool = false) throws(RecurrenceError) {
            // The farthest value out of range: the bound of a range that went too far.
            let outside = (self[name] ?? []).filter { !(range.contains($0) || (negative && range.contains(-$0))) }
            if let v = outside.max(by: { $0.magnitude < $1.magnitude }) {
                throw RecurrenceError(name, "\(v) is out of range (\(negative ? "±" : "")\(range.lowerBound)…\(range.upperBound))")
            }
        }
        for v in values where !Self.names.contains(v.name) {
            throw RecurrenceError(v.name, "takes one value (sets, ranges and negative values are for \(Self.names.joined(separator: ", ")))")
        }
        try check("month", 1...12); try check("day", 1...31, negative: true); try check("hour", 0...23)
        try check("minute", 0...59); try check("second", 0...59); try check("weekday", 1...7)
        try check("weekdayOrdinal", 1...5, negative: true); try check("dayOfYear", 1...366, negative: true)
        try check("weekOfYear", 1...53, negative: true)
        let ordinals = self["weekdayOrdinal"] ?? []
        let weekdays = self["weekday"] ?? []
        if !ordinals.isEmpty && weekdays.isEmpty {
            throw RecurrenceError("weekdayOrdinal", "needs a weekday (e.g. weekday fri, weekdayOrdinal -1: the last Friday)")
        }
        let yearly = self["dayOfYear"] != nil || self["weekOfYear"] != nil
        if yearly && !ordinals.isEmpty {
            throw RecurrenceError("weekdayOrdinal", "cannot be combined with dayOfYear or weekOfYear")
        }
        let hasDate = ["month", "day", "weekday", "dayOfYear", "weekOfYear"].contains { self[$0] != nil }
        var rule = RecurrenceRule(frequency: yearly ? .yearly : !ordinals.isEmpty ? .monthly
            : (hasDate || self["hour"] != nil) ? .daily : self["minute"] != nil ? .hourly : .minutely)
        rule.byMonth = self["month"] ?? []
        rule.byMonthDay = self["day"] ?? []
        rule.byYearDay = self["dayOfYear"] ?? []
        rule.byWeekNo = self["weekOfYear"] ?? []
        if ordinals.isEmpty {
            rule.byDay = weekdays.map { RecurrenceWeekday(weekday: $0) }
        } else {
            for w in weekdays { for n in ordinals { rule.byDay.append(RecurrenceWeekday(weekday: w, ordinal: n)) } }
        }
        // Times: a component not given is free when a smaller one is given, else its lowest value.
        let second = self["second"], minute = self["minute"], hour = self["hour"]
        rule.bySecond = second ?? [0]
        if rule.frequency > .minutely { rule.byMinute = minute ?? (second != nil ? [] : [0]) }
        else if let minute { rule.byMinute = minute }
        if rule.frequency > .hourly { rule.byHour = hour ?? (minute != nil || second != nil ? [] : [0]) }
        else if let hour { rule.byHour = hour }
        if rule.frequency == .daily || rule.frequency > .daily {
            // With the hour free, every hour (and with the minute free, every minute) of the day.
            if rule.byHour.isEmpty { rule.byHour = Array(0...23) }
            if rule.byMinute.isEmpty { rule.byMinute = Array(0...59) }
        } else if rule.frequency == .hourly && rule.byMinute.isEmpty {
            rule.byMinute = Array(0...59)
        }
        var start = CivilDateTime(year: 1970, month: 1, day: 1)
        if let years = self["year"] {
            guard years.count == 1, (1...9999).contains(years[0]) else { throw RecurrenceError("year", "takes one year 1…9999 with sets") }
            start = CivilDateTime(year: Int64(years[0]), month: 1, day: 1)
            rule.until = .local(CivilDateTime(year: Int64(years[0]), month: 12, day: 31, hour: 23, minute: 59, second: 59))
        }
        try rule.validate()
        return (rule, start)
    }
}
