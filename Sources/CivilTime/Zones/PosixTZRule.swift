/// A POSIX TZ rule string: `std offset [dst [offset] [,start[/time],end[/time]]]`
/// (POSIX.1-2017 §8.3, with RFC 8536 §3.3.1's extension of rule times to −167…167 hours).
///
/// Examples: `EST5EDT,M3.2.0,M11.1.0`, `<+0330>-3:30`, `IST-1GMT0,M10.5.0,M3.5.0/1` (Dublin: the
/// "DST" abbreviation is winter time, with a negative save), `EET-2EEST,M3.4.4/50,M10.4.4/50`.
///
/// Offsets in the string count hours *west* of Greenwich; stored offsets count seconds *east*
/// (`utcOffset`), like every other offset in this module. A DST part without a rule takes the US
/// rule `M3.2.0,M11.1.0` (tzcode's fallback when no `posixrules` file is consulted).
///
/// Evaluation uses the exact 400-year period of the Gregorian calendar (146097 days, a whole number
/// of weeks): an instant is reduced into 1970…2369 first, so every year of `Int64` works without
/// overflow, and the result is the same as evaluating in the instant's own year.
@usableFromInline
struct PosixTZRule: Sendable, Equatable {
    /// A day of the year in one of the three POSIX forms.
    @usableFromInline
    enum DateRule: Sendable, Equatable {
        /// `Jn`: 1…365, February 29 is never counted (day 60 is always March 1).
        case julianNoLeap(Int)
        /// `n`: 0…365, February 29 counted.
        case zeroBased(Int)
        /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (1…5, 5 = last) of month `m`.
        case monthWeekDay(month: Int, week: Int, weekday: Int)

        /// The day number (days since 1970-01-01) of this date in the year that starts on day
        /// number `jan1` and is a leap year or not.
        @inline(__always)
        func dayNumber(jan1: Int64, leap: Bool) -> Int64 {
            switch self {
            case .julianNoLeap(let n):
                return jan1 + Int64(n - 1) + (n >= 60 && leap ? 1 : 0)
            case .zeroBased(let n):
                return jan1 + Int64(n)
            case .monthWeekDay(let m, let w, let d):
                let first = jan1 + Int64(Self.daysBeforeMonth[m - 1]) + (m > 2 && leap ? 1 : 0)
                let firstWeekday = Int(floorMod(first + 4, 7))                  // 0 = Sunday
                var day = (d - firstWeekday + 7) % 7 + (w - 1) * 7              // 0-based
                let length = Self.daysInMonth[m - 1] + (m == 2 && leap ? 1 : 0)
                while day >= length { day -= 7 }
                return first + Int64(day)
            }
        }

        static let daysBeforeMonth = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334]
        static let daysInMonth = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    }

    /// Standard time.
    @usableFromInline let standardName: String
    @usableFromInline let standardOffset: Int32
    /// Daylight saving time, when the rule has it.
    @usableFromInline let dst: DST?

    @usableFromInline
    struct DST: Sendable, Equatable {
        @usableFromInline let name: String
        @usableFromInline let offset: Int32
        @usableFromInline let schedule: DaylightSchedule
    }

    /// The text it was parsed from.
    let text: String

    // MARK: Parsing

    /// Parses `text`; errors carry the UTF-8 offset of the fault.
    init(parsing text: String) throws(PosixTZParseError) {
        var p = Parser(bytes: Array(text.utf8))
        let stdName = try p.name()
        guard let stdWest = try p.offset(maxHours: 24, required: true) else {
            throw PosixTZParseError(position: p.i, fault: .expectedOffset)
        }
        self.text = text
        self.standardName = stdName
        self.standardOffset = -stdWest
        if p.atEnd {
            self.dst = nil
            return
        }
        let dstName = try p.name()
        let dstWest = try p.offset(maxHours: 24, required: false) ?? (stdWest - 3600)
        var start = DateRule.monthWeekDay(month: 3, week: 2, weekday: 0), startTime: Int32 = 7200
        var end = DateRule.monthWeekDay(month: 11, week: 1, weekday: 0), endTime: Int32 = 7200
        if !p.atEnd {
            try p.expect(UInt8(ascii: ","))
            start = try p.date()
            if p.peek == UInt8(ascii: "/") { p.i += 1; startTime = try p.offset(maxHours: 167, required: true)! }
            try p.expect(UInt8(ascii: ","))
            end = try p.date()
            if p.peek == UInt8(ascii: "/") { p.i += 1; endTime = try p.offset(maxHours: 167, required: true)! }
            guard p.atEnd else { throw PosixTZParseError(position: p.i, fault: .trailingCharacters) }
        }
        let schedule = DaylightSchedule(standardOffset: -stdWest, daylightOffset: -dstWest, start: start,
                                        startTime: startTime, end: end, endTime: endTime)
        self.dst = DST(name: dstName, offset: -dstWest, schedule: schedule)
    }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0

        var atEnd: Bool { i >= bytes.count }
        var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

        static func isAlpha(_ c: UInt8) -> Bool { (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A }
        static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

        mutating func expect(_ c: UInt8) throws(PosixTZParseError) {
            guard peek == c else {
                throw PosixTZParseError(position: i, fault: c == UInt8(ascii: ",") ? .expectedComma : .expectedRule)
            }
            i += 1
        }

        /// `<[A-Za-z0-9+-]{3,}>` or `[A-Za-z]{3,}`.
        mutating func name() throws(PosixTZParseError) -> String {
            let begin = i
            if peek == UInt8(ascii: "<") {
                i += 1
                let s = i
                while let c = peek, c != UInt8(ascii: ">") {
                    guard Self.isAlpha(c) || Self.isDigit(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") else {
                        if c == UInt8(ascii: "<") || c == UInt8(ascii: ",") {
                            throw PosixTZParseError(position: i, fault: .unterminatedName)
                        }
                        throw PosixTZParseError(position: i, fault: .badNameCharacter)
                    }
                    i += 1
                }
                guard peek == UInt8(ascii: ">") else { throw PosixTZParseError(position: begin, fault: .unterminatedName) }
                let e = i
                i += 1
                guard e - s >= 3 else { throw PosixTZParseError(position: begin, fault: .nameTooShort) }
                return String(decoding: bytes[s..<e], as: UTF8.self)
            }
            while let c = peek, Self.isAlpha(c) { i += 1 }
            if i == begin { throw PosixTZParseError(position: begin, fault: .expectedName) }
            guard i - begin >= 3 else { throw PosixTZParseError(position: begin, fault: .nameTooShort) }
            return String(decoding: bytes[begin..<i], as: UTF8.self)
        }

        /// Digits as a number, at most `maxDigits` of them; nil when there are none.
        mutating func number(maxDigits: Int) throws(PosixTZParseError) -> Int? {
            let begin = i
            var v = 0
            while let c = peek, Self.isDigit(c) {
                guard i - begin < maxDigits else { throw PosixTZParseError(position: begin, fault: .valueOutOfRange) }
                v = v * 10 + Int(c - 0x30)
                i += 1
            }
            return i == begin ? nil : v
        }

        /// `[+|-]hh[:mm[:ss]]` in seconds (sign as written); nil when absent and not required.
        mutating func offset(maxHours: Int, required: Bool) throws(PosixTZParseError) -> Int32? {
            let begin = i
            var sign: Int32 = 1
            if peek == UInt8(ascii: "+") { i += 1 } else if peek == UInt8(ascii: "-") { sign = -1; i += 1 }
            guard let h = try number(maxDigits: 3) else {
                if required || i != begin { throw PosixTZParseError(position: i, fault: .expectedOffset) }
                return nil
            }
            guard h <= maxHours else { throw PosixTZParseError(position: begin, fault: .valueOutOfRange) }
            var total = h * 3600
            for scale in [60, 1] {
                guard peek == UInt8(ascii: ":") else { break }
                i += 1
                let at = i
                guard let v = try number(maxDigits: 2) else { throw PosixTZParseError(position: at, fault: .expectedOffset) }
                guard v <= 59 else { throw PosixTZParseError(position: at, fault: .valueOutOfRange) }
                total += v * scale
            }
            return sign * Int32(total)
        }

        mutating func date() throws(PosixTZParseError) -> DateRule {
            let begin = i
            switch peek {
            case UInt8(ascii: "J"):
                i += 1
                guard let n = try number(maxDigits: 3) else { throw PosixTZParseError(position: i, fault: .expectedRule) }
                guard (1...365).contains(n) else { throw PosixTZParseError(position: begin, fault: .valueOutOfRange) }
                return .julianNoLeap(n)
            case UInt8(ascii: "M"):
                i += 1
                var parts: [Int] = []
                for k in 0..<3 {
                    if k > 0 {
                        guard peek == UInt8(ascii: ".") else { throw PosixTZParseError(position: i, fault: .expectedRule) }
                        i += 1
                    }
                    guard let v = try number(maxDigits: 2) else { throw PosixTZParseError(position: i, fault: .expectedRule) }
                    parts.append(v)
                }
                guard (1...12).contains(parts[0]), (1...5).contains(parts[1]), (0...6).contains(parts[2]) else {
                    throw PosixTZParseError(position: begin, fault: .valueOutOfRange)
                }
                return .monthWeekDay(month: parts[0], week: parts[1], weekday: parts[2])
            case let c? where Self.isDigit(c):
                let n = try number(maxDigits: 3)!
                guard n <= 365 else { throw PosixTZParseError(position: begin, fault: .valueOutOfRange) }
                return .zeroBased(n)
            default:
                throw PosixTZParseError(position: i, fault: .expectedRule)
            }
        }
    }
}

/// When a POSIX rule switches between standard and daylight time: plain numbers only, so that
/// evaluating it retains nothing.
@usableFromInline
struct DaylightSchedule: Sendable, Equatable {
    @usableFromInline let standardOffset: Int32
    @usableFromInline let daylightOffset: Int32
    @usableFromInline let start: PosixTZRule.DateRule
    /// Seconds after local midnight, in standard time (−167 h…167 h).
    @usableFromInline let startTime: Int32
    @usableFromInline let end: PosixTZRule.DateRule
    /// Seconds after local midnight, in daylight time.
    @usableFromInline let endTime: Int32

    // MARK: Evaluation

    /// Whether the rule is in daylight time at `t`, the last change at or before `t`, and the first
    /// change after it (`nil`: the rule never changes, or the result would not fit in `Int64`).
    ///
    /// A change is an instant at which the rule switches between standard and daylight time;
    /// coinciding events (an all-year DST rule ending one year at the instant it starts the next)
    /// cancel out.
    ///
    /// - Complexity: O(1): the events of five years around `t`, no allocation.
    @usableFromInline
    func state(at t: Int64) -> (isDST: Bool, next: Int64?, previous: Int64?) {
        // Reduce into [0, P): 1970-01-01 … 2370-01-01.
        let r = floorMod(t, Self.period)
        let year = CivilDays.date(dayNumber: floorDiv(r, 86400)).year
        // Events of years year-2 … year+2, sorted by (time, year, start-before-end). Every event of
        // year y lies within 8 days of year y (rule times are within ±167 h, offsets within ±25 h),
        // so the state at r is decided by this window, and the neighbouring changes fall inside it
        // when the rule changes at all (an annual rule changes at least once a year).
        return withUnsafeTemporaryAllocation(of: (time: Int64, isDST: Bool).self, capacity: 10) { ev in
            var n = 0
            // Insertion sort, stable: an event inserted later with an equal time goes after.
            func insert(_ time: Int64, _ isDST: Bool) {
                var k = n
                while k > 0 && ev[k - 1].time > time { ev[k] = ev[k - 1]; k -= 1 }
                ev[k] = (time, isDST)
                n += 1
            }
            for y in (year - 2)...(year + 2) {
                let (s, e) = events(year: y)
                insert(s, true)
                insert(e, false)
            }
            // Walk groups of equal times; the state after a group is its last event's. Events of
            // years outside the window lie before jan1(year-2) + 8 days or after jan1(year+3) − 8
            // days, so a change is known only between groups inside those bounds.
            let lowBound = CivilDays.dayNumber(year: year - 2, month: 1, day: 1) * 86400 + 9 * 86400
            let highBound = CivilDays.dayNumber(year: year + 3, month: 1, day: 1) * 86400 - 9 * 86400
            var current = false
            var previous: Int64? = nil, next: Int64? = nil
            var previousGroup: (time: Int64, isDST: Bool)? = nil
            var i = 0
            while i < n {
                let time = ev[i].time
                var j = i
                while j + 1 < n && ev[j + 1].time == time { j += 1 }
                let after = ev[j].isDST
                var isChange = false
                if let g = previousGroup, g.time > lowBound && time < highBound { isChange = g.isDST != after }
                if time <= r {
                    current = after           // year-2's events all precede r: always reached
                    if isChange { previous = time }
                } else if isChange && next == nil {
                    next = time
                }
                previousGroup = (time, after)
                i = j + 1
            }
            // Back to t's own period: t + (x - r); x - r is a few years at most.
            func unreduce(_ x: Int64?) -> Int64? {
                guard let x else { return nil }
                let (v, o) = t.addingReportingOverflow(x - r)
                return o ? nil : v
            }
            return (current, unreduce(next), unreduce(previous))
        }
    }

    /// The UTC instants at which DST starts and ends in `year`.
    @inline(__always)
    func events(year: Int64) -> (start: Int64, end: Int64) {
        let jan1 = CivilDays.dayNumber(year: year, month: 1, day: 1)
        let leap = CivilDays.isLeapYear(year)
        return (start.dayNumber(jan1: jan1, leap: leap) * 86400 + Int64(startTime) - Int64(standardOffset),
                end.dayNumber(jan1: jan1, leap: leap) * 86400 + Int64(endTime) - Int64(daylightOffset))
    }

    /// Whether the rule is in daylight time at `t`: `state(at:).isDST` without the neighbouring
    /// changes, so no sorting (the hot path after 2200).
    ///
    /// - Complexity: O(1): the events of four years.
    @usableFromInline
    func isDST(at t: Int64) -> Bool {
        let r = floorMod(t, Self.period)
        let year = CivilDays.date(dayNumber: floorDiv(r, 86400)).year
        // The last event at or before r, ties going to the later (year, start-before-end) order,
        // as in `state(at:)`. Events of year+2 all lie after r; year-2's all before it.
        var bestTime = Int64.min, bestOrder = -1, result = false
        var order = 0
        for y in (year - 2)...(year + 1) {
            let (s, e) = events(year: y)
            if s <= r && (s > bestTime || (s == bestTime && order > bestOrder)) { bestTime = s; bestOrder = order; result = true }
            order += 1
            if e <= r && (e > bestTime || (e == bestTime && order > bestOrder)) { bestTime = e; bestOrder = order; result = false }
            order += 1
        }
        return result
    }

    /// 400 Gregorian years in seconds.
    @usableFromInline static let period: Int64 = 146_097 * 86_400
}

/// A POSIX TZ parse failure before it is given a zone name.
struct PosixTZParseError: Error, Equatable {
    let position: Int
    let fault: PosixTZFault
}
