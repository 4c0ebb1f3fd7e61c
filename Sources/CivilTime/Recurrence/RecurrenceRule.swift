// RFC 5545 recurrence rules (§3.3.10 RECUR): the parsed form and its parser.
//
//   FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=0
//
// Parts and ranges as the RFC gives them; each error names the RFC part. What the engine cannot
// honour is refused here or by ``RecurrenceSchedule`` (SEMANTICS.md §6): FREQ=SECONDLY, BYSECOND=60
// (leap seconds), COUNT with UNTIL, BYSETPOS without another BYxxx part, and the combinations the
// RFC forbids (BYWEEKNO outside YEARLY, BYYEARDAY with DAILY/WEEKLY/MONTHLY, BYMONTHDAY with
// WEEKLY, BYDAY ordinals outside MONTHLY/YEARLY or with BYWEEKNO).

/// The frequency of a rule (FREQ), from the shortest period to the longest.
public enum RecurrenceFrequency: Int, Comparable, Sendable, CaseIterable {
    case minutely, hourly, daily, weekly, monthly, yearly

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// The RFC name: `MINUTELY` … `YEARLY`.
    public var name: String {
        switch self {
        case .minutely: "MINUTELY"
        case .hourly: "HOURLY"
        case .daily: "DAILY"
        case .weekly: "WEEKLY"
        case .monthly: "MONTHLY"
        case .yearly: "YEARLY"
        }
    }
}

/// One BYDAY entry: a weekday, and for MONTHLY/YEARLY rules an optional ordinal (`-1FR` = the
/// last Friday; 0 = every such weekday).
public struct RecurrenceWeekday: Hashable, Sendable {
    /// 1 = Sunday … 7 = Saturday (the numbering of ``CivilDays/weekday(dayNumber:)``).
    public var weekday: Int
    /// −53…53, 0 = no ordinal.
    public var ordinal: Int

    public init(weekday: Int, ordinal: Int = 0) { self.weekday = weekday; self.ordinal = ordinal }

    /// The RFC two-letter names, index 0 = Sunday.
    public static let names = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"]

    public var text: String { (ordinal == 0 ? "" : String(ordinal)) + Self.names[weekday - 1] }
}

/// UNTIL: a local (floating or zoned) date-time, or a UTC instant (`…Z`). A DATE value means the
/// end of that day.
public enum RecurrenceUntil: Hashable, Sendable {
    case local(CivilDateTime)
    case instant(WallInstant)
}

/// Why a rule, its DTSTART or its dates cannot be used. `part` is the RFC name of the part
/// (`FREQ`, `BYDAY`, `UNTIL`, `DTSTART`, `EXDATE` …).
public struct RecurrenceError: Error, Hashable, Sendable, CustomStringConvertible {
    public var part: String
    public var message: String
    public init(_ part: String, _ message: String) { self.part = part; self.message = message }
    public var description: String { "RRULE \(part): \(message)" }
}

/// A parsed recurrence rule (RFC 5545 §3.3.10), not yet tied to a DTSTART.
public struct RecurrenceRule: Hashable, Sendable {
    public var frequency: RecurrenceFrequency
    public var interval: Int = 1
    public var count: Int?
    public var until: RecurrenceUntil?
    public var bySecond: [Int] = []
    public var byMinute: [Int] = []
    public var byHour: [Int] = []
    public var byDay: [RecurrenceWeekday] = []
    public var byMonthDay: [Int] = []
    public var byYearDay: [Int] = []
    public var byWeekNo: [Int] = []
    public var byMonth: [Int] = []
    public var bySetPos: [Int] = []
    /// WKST, 1 = Sunday … 7 = Saturday; Monday by default (RFC).
    public var weekStart: Int = 2

    public init(frequency: RecurrenceFrequency) { self.frequency = frequency }

    /// The largest COUNT accepted: the last instance is found when the rule is compiled.
    public static let maximumCount = 100_000
    /// The largest INTERVAL accepted.
    public static let maximumInterval = 10_000

    /// Parses `FREQ=…;…` (an `RRULE:` prefix is allowed; part names in any case).
    /// - Throws: ``RecurrenceError`` naming the part and the reason.
    /// - Complexity: O(length).
    public init(parsing text: String) throws(RecurrenceError) {
        var body = Substring(text)
        while body.first == " " { body = body.dropFirst() }
        while body.last == " " || body.last == "\r" || body.last == "\n" { body = body.dropLast() }
        if body.uppercased().hasPrefix("RRULE:") { body = body.dropFirst(6) }
        guard !body.isEmpty else { throw RecurrenceError("FREQ", "the rule is empty: give at least FREQ, e.g. FREQ=DAILY;BYHOUR=7") }
        var seen: Set<String> = []
        var frequency: RecurrenceFrequency?
        var rule = RecurrenceRule(frequency: .daily)
        for piece in body.split(separator: ";", omittingEmptySubsequences: false) {
            guard let eq = piece.firstIndex(of: "=") else {
                throw RecurrenceError(String(piece).uppercased(), "a part must be NAME=VALUE, got \"\(piece)\"")
            }
            let name = piece[..<eq].uppercased()
            let value = String(piece[piece.index(after: eq)...])
            guard seen.insert(name).inserted else { throw RecurrenceError(name, "given twice") }
            guard !value.isEmpty else { throw RecurrenceError(name, "has no value") }
            switch name {
            case "FREQ":
                switch value.uppercased() {
                case "SECONDLY":
                    throw RecurrenceError("FREQ", "SECONDLY is not supported: an alert device fires at most once a minute per rule (use MINUTELY with BYSECOND)")
                case "MINUTELY": frequency = .minutely
                case "HOURLY": frequency = .hourly
                case "DAILY": frequency = .daily
                case "WEEKLY": frequency = .weekly
                case "MONTHLY": frequency = .monthly
                case "YEARLY": frequency = .yearly
                default: throw RecurrenceError("FREQ", "unknown frequency \"\(value)\" (MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY, YEARLY)")
                }
            case "INTERVAL": rule.interval = try Self.integer(name, value, 1...Self.maximumInterval)
            case "COUNT": rule.count = try Self.integer(name, value, 1...Self.maximumCount)
            case "UNTIL":
                guard let u = RecurrenceText.until(value) else {
                    throw RecurrenceError("UNTIL", "expected a date 20261231, a local date-time 20261231T235959 or a UTC one 20261231T235959Z, got \"\(value)\"")
                }
                rule.until = u
            case "BYSECOND":
                rule.bySecond = try Self.list(name, value, 0...60, allowNegative: false)
                if rule.bySecond.contains(60) { throw RecurrenceError("BYSECOND", "60 (a leap second) is not supported: the device clock has no leap seconds") }
            case "BYMINUTE": rule.byMinute = try Self.list(name, value, 0...59, allowNegative: false)
            case "BYHOUR": rule.byHour = try Self.list(name, value, 0...23, allowNegative: false)
            case "BYMONTHDAY": rule.byMonthDay = try Self.list(name, value, 1...31, allowNegative: true)
            case "BYYEARDAY": rule.byYearDay = try Self.list(name, value, 1...366, allowNegative: true)
            case "BYWEEKNO": rule.byWeekNo = try Self.list(name, value, 1...53, allowNegative: true)
            case "BYMONTH": rule.byMonth = try Self.list(name, value, 1...12, allowNegative: false)
            case "BYSETPOS": rule.bySetPos = try Self.list(name, value, 1...366, allowNegative: true)
            case "BYDAY":
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let d = Self.weekdayNum(item) else {
                        throw RecurrenceError("BYDAY", "expected weekdays like MO or -1FR (ordinal ±1…53, days SU MO TU WE TH FR SA), got \"\(item)\"")
                    }
                    if !rule.byDay.contains(d) { rule.byDay.append(d) }
                }
            case "WKST":
                guard let i = RecurrenceWeekday.names.firstIndex(of: value.uppercased()) else {
                    throw RecurrenceError("WKST", "expected one of SU MO TU WE TH FR SA, got \"\(value)\"")
                }
                rule.weekStart = i + 1
            case "BYEASTER":
                throw RecurrenceError(name, "is not part of RFC 5545 and not supported")
            default:
                throw RecurrenceError(name, "unknown part (FREQ, INTERVAL, COUNT, UNTIL, BYSECOND, BYMINUTE, BYHOUR, BYDAY, BYMONTHDAY, BYYEARDAY, BYWEEKNO, BYMONTH, BYSETPOS, WKST)")
            }
        }
        guard let frequency else { throw RecurrenceError("FREQ", "missing: every rule needs FREQ (MINUTELY … YEARLY)") }
        rule.frequency = frequency
        try rule.validate()
        self = rule
    }

    /// The RFC's rules for combining parts (§3.3.10), as errors naming the part.
    public func validate() throws(RecurrenceError) {
        if count != nil && until != nil { throw RecurrenceError("COUNT", "and UNTIL must not both be given (RFC 5545 §3.3.10)") }
        if !(1...Self.maximumInterval).contains(interval) { throw RecurrenceError("INTERVAL", "must be 1…\(Self.maximumInterval), got \(interval)") }
        if let c = count, !(1...Self.maximumCount).contains(c) { throw RecurrenceError("COUNT", "must be 1…\(Self.maximumCount), got \(c)") }
        if !byWeekNo.isEmpty && frequency != .yearly { throw RecurrenceError("BYWEEKNO", "is only valid with FREQ=YEARLY") }
        if !byYearDay.isEmpty && (frequency == .daily || frequency == .weekly || frequency == .monthly) {
            throw RecurrenceError("BYYEARDAY", "is not valid with FREQ=\(frequency.name)")
        }
        if !byMonthDay.isEmpty && frequency == .weekly { throw RecurrenceError("BYMONTHDAY", "is not valid with FREQ=WEEKLY") }
        if byDay.contains(where: { $0.ordinal != 0 }) {
            if frequency != .monthly && frequency != .yearly {
                throw RecurrenceError("BYDAY", "an ordinal (\(byDay.first { $0.ordinal != 0 }!.text)) is only valid with FREQ=MONTHLY or YEARLY")
            }
            if frequency == .yearly && !byWeekNo.isEmpty {
                throw RecurrenceError("BYDAY", "an ordinal is not valid with FREQ=YEARLY and BYWEEKNO")
            }
            if frequency == .monthly && byDay.contains(where: { abs($0.ordinal) > 5 }) {
                throw RecurrenceError("BYDAY", "a month has at most 5 of a weekday: ordinal must be ±1…5 with FREQ=MONTHLY")
            }
        }
        if !bySetPos.isEmpty && bySecond.isEmpty && byMinute.isEmpty && byHour.isEmpty && byDay.isEmpty
            && byMonthDay.isEmpty && byYearDay.isEmpty && byWeekNo.isEmpty && byMonth.isEmpty {
            throw RecurrenceError("BYSETPOS", "needs another BYxxx part to select from (RFC 5545 §3.3.10)")
        }
        func check(_ name: String, _ values: [Int], _ range: ClosedRange<Int>, negative: Bool) throws(RecurrenceError) {
            for v in values where !(range.contains(v) || (negative && range.contains(-v))) {
                throw RecurrenceError(name, "\(v) is out of range (\(negative ? "±" : "")\(range.lowerBound)…\(range.upperBound))")
            }
        }
        try check("BYSECOND", bySecond, 0...59, negative: false)
        try check("BYMINUTE", byMinute, 0...59, negative: false)
        try check("BYHOUR", byHour, 0...23, negative: false)
        try check("BYMONTHDAY", byMonthDay, 1...31, negative: true)
        try check("BYYEARDAY", byYearDay, 1...366, negative: true)
        try check("BYWEEKNO", byWeekNo, 1...53, negative: true)
        try check("BYMONTH", byMonth, 1...12, negative: false)
        try check("BYSETPOS", bySetPos, 1...366, negative: true)
        for d in byDay where !(1...7).contains(d.weekday) || abs(d.ordinal) > 53 {
            throw RecurrenceError("BYDAY", "\(d.weekday)/\(d.ordinal) is out of range")
        }
        if !(1...7).contains(weekStart) { throw RecurrenceError("WKST", "must be a weekday") }
    }

    /// The rule in RFC form, parts in the RFC's order (what the engine understood).
    public var text: String {
        var parts = ["FREQ=\(frequency.name)"]
        if interval != 1 { parts.append("INTERVAL=\(interval)") }
        if let count { parts.append("COUNT=\(count)") }
        if let until {
            switch until {
            case .local(let c): parts.append("UNTIL=\(RecurrenceText.basic(c))")
            case .instant(let t): parts.append("UNTIL=\(RecurrenceText.basic(CivilDateTime(localSeconds: t.secondsSinceEpoch)))Z")
            }
        }
        func list(_ name: String, _ v: [Int]) { if !v.isEmpty { parts.append("\(name)=" + v.map(String.init).joined(separator: ",")) } }
        list("BYSECOND", bySecond)
        list("BYMINUTE", byMinute)
        list("BYHOUR", byHour)
        if !byDay.isEmpty { parts.append("BYDAY=" + byDay.map { $0.text }.joined(separator: ",")) }
        list("BYMONTHDAY", byMonthDay)
        list("BYYEARDAY", byYearDay)
        list("BYWEEKNO", byWeekNo)
        list("BYMONTH", byMonth)
        list("BYSETPOS", bySetPos)
        if weekStart != 2 { parts.append("WKST=\(RecurrenceWeekday.names[weekStart - 1])") }
        return parts.joined(separator: ";")
    }

    static func integer(_ part: String, _ text: String, _ range: ClosedRange<Int>) throws(RecurrenceError) -> Int {
        guard let v = Int(text), range.contains(v) else {
            throw RecurrenceError(part, "must be an integer \(range.lowerBound)…\(range.upperBound), got \"\(text)\"")
        }
        return v
    }

    static func list(_ part: String, _ text: String, _ range: ClosedRange<Int>, allowNegative: Bool) throws(RecurrenceError) -> [Int] {
        var out: [Int] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            var s = Substring(item)
            if s.first == "+" { s = s.dropFirst() }
            guard let v = Int(s), range.contains(v) || (allowNegative && range.contains(-v)) else {
                throw RecurrenceError(part, "expected integers \(allowNegative ? "±" : "")\(range.lowerBound)…\(range.upperBound) separated by commas, got \"\(item)\"")
            }
            if !out.contains(v) { out.append(v) }
        }
        return out
    }

    static func weekdayNum(_ item: Substring) -> RecurrenceWeekday? {
        let s = item.uppercased()
        guard s.count >= 2, let i = RecurrenceWeekday.names.firstIndex(of: String(s.suffix(2))) else { return nil }
        let prefix = s.dropLast(2)
        if prefix.isEmpty { return RecurrenceWeekday(weekday: i + 1) }
        var digits = Substring(prefix)
        if digits.first == "+" { digits = digits.dropFirst() }
        guard let n = Int(digits), n != 0, abs(n) <= 53 else { return nil }
        return RecurrenceWeekday(weekday: i + 1, ordinal: n)
    }
}

/// Dates and date-times as rules and requests write them.
public enum RecurrenceText {
    /// A date-time with an optional trailing `Z`, and whether it had one; a date alone has
    /// `isDate`.
    public static func parse(_ text: String) -> (civil: CivilDateTime, utc: Bool, isDate: Bool)? {
        var b = Array(text.utf8)
        var utc = false
        if let last = b.last, last == UInt8(ascii: "Z") || last == UInt8(ascii: "z") { utc = true; b.removeLast() }
        let digits = b.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: ":") }
        // Extended form: dashes and colons only in their places.
        if b.count != digits.count {
            let dateOnly = b.count == 10, full = b.count == 19
            guard dateOnly || full, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-") else { return nil }
            if full { guard b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":") else { return nil } }
        }
        func number(_ r: Range<Int>, _ s: [UInt8]) -> Int? {
            var v = 0
            for i in r { let d = s[i] &- UInt8(ascii: "0"); guard d < 10 else { return nil }; v = v * 10 + Int(d) }
            return v
        }
        let s = digits
        let isDate = s.count == 8
        guard isDate || (s.count == 15 && (s[8] == UInt8(ascii: "T") || s[8] == UInt8(ascii: "t"))) else { return nil }
        guard !(isDate && utc) else { return nil }
        guard let y = number(0..<4, s), let mo = number(4..<6, s), let d = number(6..<8, s) else { return nil }
        var h = 0, mi = 0, se = 0
        if !isDate {
            guard let hh = number(9..<11, s), let mm = number(11..<13, s), let ss = number(13..<15, s) else { return nil }
            h = hh; mi = mm; se = ss
        }
        guard y >= 1, (1...12).contains(mo), (1...CivilDays.daysInMonth(year: Int64(y), month: mo)).contains(d),
              h <= 23, mi <= 59, se <= 59 else { return nil }
        return (CivilDateTime(year: Int64(y), month: mo, day: d, hour: h, minute: mi, second: se), utc, isDate)
    }

    static func until(_ text: String) -> RecurrenceUntil? {
        guard let p = parse(text) else { return nil }
        if p.utc { return .instant(WallInstant(secondsSinceEpoch: p.civil.localSeconds)) }
        if p.isDate { return .local(CivilDateTime(localSeconds: p.civil.localSeconds + 86_399)) }
        return .local(p.civil)
    }

    /// `20260105T070000`
    public static func basic(_ c: CivilDateTime) -> String {
        func pad(_ v: Int64, _ w: Int) -> String { let s = String(v); return String(repeating: "0", count: max(0, w - s.count)) + s }
        return "\(pad(c.year, 4))\(pad(Int64(c.month), 2))\(pad(Int64(c.day), 2))T\(pad(Int64(c.hour), 2))\(pad(Int64(c.minute), 2))\(pad(Int64(c.second), 2))"
    }
}
