// Size: one RFC 5545 reader: content lines (§3.1), the properties of a VEVENT and their mapping
// to a request's recurrence set; each part needs the others' types.
//
// iCalendar files (RFC 5545) as requests (SEMANTICS.md §7): the one reader behind `fencepost add --ics FILE` and a
// config's `[[request]] ics = "file.ics"` / `except_ics = "holidays.ics"`.
//
// What is read. Content lines are unfolded (§3.1: a line break followed by one space or tab
// continues the line; CRLF or LF), split into name, parameters (quoted values may hold `;` `:`
// `,`) and value. Each VEVENT becomes one request whose calendar trigger is a recurrence set:
//
//   SUMMARY                  → content.title (text unescaped: \n \, \; \\)
//   DESCRIPTION              → content.body
//   DTSTART;TZID=Europe/Berlin:20260105T070000 → dtstart 2026-01-05T07:00:00, tz Europe/Berlin
//   DTSTART:20260105T060000Z → dtstart 2026-01-05T06:00:00, tz UTC
//   DTSTART:20260105T070000  → floating (no tz: the device zone)
//   DTSTART;VALUE=DATE:20260105 → an all-day event: it fires at 00:00 of the day (floating)
//   RRULE                    → rrule (no RRULE: one instance, FREQ=DAILY;COUNT=1)
//   EXDATE / RDATE           → exdate / rdate (local, `…Z` instants, or VALUE=DATE days)
//   RECURRENCE-ID            → an edited instance: the instance is removed from the series of the
//                              same UID and, unless STATUS:CANCELLED, fires as its own request
//
// A VTIMEZONE is not interpreted: its TZID must be an IANA zone name (it is then used from the
// system's TZif files); any other TZID is refused as not supported. Properties that a
// notification has no use for (DTEND, LOCATION, VALARM, …) are not dropped silently: each
// event's are named in `notes`. Pure: no Foundation, no I/O; the caller reads the file and says
// which zone names exist.
import CivilTime
import FencepostJSON

/// A content line of an iCalendar file, unfolded.
public struct ICalendarLine: Sendable {
    /// The line number (1-based) of the line's first physical line.
    public var line: Int
    /// Upper-cased property name (`DTSTART`, `BEGIN`, `X-WR-CALNAME`).
    public var name: String
    /// Parameters, names upper-cased, values unquoted.
    public var parameters: [(name: String, value: String)]
    public var value: String

    public func parameter(_ name: String) -> String? { parameters.first { $0.name == name }?.value }
}

/// Bad iCalendar input: what and where.
public struct ICalendarError: Error, Sendable, CustomStringConvertible {
    public var line: Int
    public var message: String
    public init(line: Int, _ message: String) { self.line = line; self.message = message }
    public var description: String { "line \(line): \(message)" }
}

/// What an iCalendar file turned into.
public struct ICalendarRequests: Sendable {
    /// Request objects, as the control socket's `add` takes them.
    public var requests: [JSONValue] = []
    /// What was read but not used, per event ("line 12: VEVENT \"Check\": DTEND, LOCATION not used …").
    public var notes: [String] = []
}

public enum ICalendar {
    /// The largest file read (the same bound as a config file's).
    public static let maximumEvents = 10_000

    // MARK: Content lines (§3.1)

    /// Unfolds and splits `text` into content lines; blank lines are skipped.
    public static func contentLines(_ text: String) throws(ICalendarError) -> [ICalendarLine] {
        var out: [ICalendarLine] = []
        var current: [UInt8] = []
        var currentLine = 0
        var lineNumber = 0
        func flush() throws(ICalendarError) {
            defer { current.removeAll(keepingCapacity: true) }
            if current.isEmpty { return }
            out.append(try split(current, line: currentLine))
        }
        var physical: [UInt8] = []
        var bytes = Array(text.utf8)
        if bytes.first == 0xEF && bytes.count >= 3 && bytes[1] == 0xBB && bytes[2] == 0xBF { bytes.removeFirst(3) }   // a BOM (Outlook)
        var i = 0
        while i <= bytes.count {
            let atEnd = i == bytes.count
            if atEnd || bytes[i] == 0x0A {
                lineNumber += 1
                if physical.last == 0x0D { physical.removeLast() }
                if let first = physical.first, first == 0x20 || first == 0x09 {
                    guard !current.isEmpty else { throw ICalendarError(line: lineNumber, "a continuation line (it starts with a space) with no line before it") }
                    current.append(contentsOf: physical.dropFirst())
                } else {
                    try flush()
                    current = physical
                    currentLine = lineNumber
                }
                physical.removeAll(keepingCapacity: true)
                if atEnd { break }
            } else {
                physical.append(bytes[i])
            }
            i += 1
        }
        try flush()
        return out
    }

    static func split(_ bytes: [UInt8], line: Int) throws(ICalendarError) -> ICalendarLine {
        // name *(";" param) ":" value; a parameter value may be quoted.
        var i = 0
        func isNameByte(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2D }
        while i < bytes.count && isNameByte(bytes[i]) { i += 1 }
        let name = String(decoding: bytes[0..<i], as: UTF8.self).asciiUppercased
        guard !name.isEmpty else {
            throw ICalendarError(line: line, "not a content line (NAME:value): \(String(decoding: bytes.prefix(40), as: UTF8.self))")
        }
        var parameters: [(name: String, value: String)] = []
        while i < bytes.count && bytes[i] == 0x3B {   // ;
            i += 1
            let s = i
            while i < bytes.count && isNameByte(bytes[i]) { i += 1 }
            let pname = String(decoding: bytes[s..<i], as: UTF8.self).asciiUppercased
            guard !pname.isEmpty, i < bytes.count, bytes[i] == 0x3D else {
                throw ICalendarError(line: line, "\(name): a parameter must be NAME=value")
            }
            i += 1
            var values: [String] = []
            repeat {
                if i < bytes.count && bytes[i] == 0x2C { i += 1 }
                if i < bytes.count && bytes[i] == 0x22 {   // "quoted"
                    let q = i + 1
                    i = q
                    while i < bytes.count && bytes[i] != 0x22 { i += 1 }
                    guard i < bytes.count else { throw ICalendarError(line: line, "\(name);\(pname): an unterminated quoted value") }
                    values.append(String(decoding: bytes[q..<i], as: UTF8.self))
                    i += 1
                } else {
                    let v = i
                    while i < bytes.count && bytes[i] != 0x3B && bytes[i] != 0x3A && bytes[i] != 0x2C { i += 1 }
                    values.append(String(decoding: bytes[v..<i], as: UTF8.self))
                }
            } while i < bytes.count && bytes[i] == 0x2C
            parameters.append((pname, values.joined(separator: ",")))
        }
        guard i < bytes.count, bytes[i] == 0x3A else {
            throw ICalendarError(line: line, "\(name): no \":\" before the value")
        }
        return ICalendarLine(line: line, name: name, parameters: parameters,
                             value: String(decoding: bytes[(i + 1)...], as: UTF8.self))
    }

    /// TEXT values (§3.3.11): `\n` `\N` a line break, `\,` `\;` `\\` the character.
    public static func unescape(_ s: String) -> String {
        var out: [UInt8] = []
        var escaped = false
        for b in s.utf8 {
            if escaped {
                out.append(b == UInt8(ascii: "n") || b == UInt8(ascii: "N") ? 0x0A : b)
                escaped = false
            } else if b == UInt8(ascii: "\\") {
                escaped = true
            } else {
                out.append(b)
            }
        }
        if escaped { out.append(UInt8(ascii: "\\")) }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Components

    /// A component: its lines and the components inside it.
    struct Component {
        var name: String
        var line: Int
        var properties: [ICalendarLine] = []
        var children: [Component] = []
        func first(_ name: String) -> ICalendarLine? { properties.first { $0.name == name } }
        func all(_ name: String) -> [ICalendarLine] { properties.filter { $0.name == name } }
    }

    static func components(_ lines: [ICalendarLine]) throws(ICalendarError) -> Component {
        var stack: [Component] = []
        var root: Component?
        for l in lines {
            switch l.name {
            case "BEGIN":
                let n = l.value.asciiUppercased
                if stack.isEmpty && n != "VCALENDAR" {
                    throw ICalendarError(line: l.line, "the file must start with BEGIN:VCALENDAR, not BEGIN:\(l.value)")
                }
                guard stack.count < 8 else { throw ICalendarError(line: l.line, "components nested deeper than 8") }
                stack.append(Component(name: n, line: l.line))
            case "END":
                guard let top = stack.popLast() else { throw ICalendarError(line: l.line, "END:\(l.value) without a BEGIN") }
                guard top.name == l.value.asciiUppercased else {
                    throw ICalendarError(line: l.line, "END:\(l.value) closes BEGIN:\(top.name) of line \(top.line)")
                }
                if stack.isEmpty {
                    guard root == nil else { throw ICalendarError(line: l.line, "a second VCALENDAR (one calendar a file)") }
                    root = top
                } else {
                    stack[stack.count - 1].children.append(top)
                }
            default:
                guard !stack.isEmpty else {
                    throw ICalendarError(line: l.line, root == nil ? "the file must start with BEGIN:VCALENDAR" : "\(l.name) after END:VCALENDAR")
                }
                stack[stack.count - 1].properties.append(l)
            }
        }
        if let open = stack.last { throw ICalendarError(line: open.line, "BEGIN:\(open.name) has no END:\(open.name)") }
        guard let root else { throw ICalendarError(line: 1, "no BEGIN:VCALENDAR (not an iCalendar file)") }
        return root
    }

    // MARK: Values

    /// A DATE or DATE-TIME value with its TZID: (text for `dtstart`/`exdate`/`rdate`, zone, is a date).
    struct Moment {
        var civil: CivilDateTime
        var isDate: Bool
        var utc: Bool
        var tzid: String?
        /// As RecurrenceDates reads it.
        var text: String {
            if isDate {
                let s = civil.iso8601
                return String(s.prefix(10))
            }
            return civil.iso8601 + (utc ? "Z" : "")
        }
    }

    static func moments(_ p: ICalendarLine) throws(ICalendarError) -> [Moment] {
        if let v = p.parameter("VALUE")?.asciiUppercased, v != "DATE" && v != "DATE-TIME" {
            throw ICalendarError(line: p.line, "\(p.name);VALUE=\(v) is not supported (a notification has no duration: dates and date-times only)")
        }
        let tzid = p.parameter("TZID")
        var out: [Moment] = []
        for item in p.value.split(separator: ",") {
            let s = String(item).trimmingSpaces()
            guard let r = RecurrenceText.parse(s) else {
                throw ICalendarError(line: p.line, "\(p.name) \"\(s)\" is not a date (20260105) or a date-time (20260105T070000, …Z)")
            }
            if r.utc && tzid != nil { throw ICalendarError(line: p.line, "\(p.name) \"\(s)\" is UTC (Z) and has a TZID: give one") }
            out.append(Moment(civil: r.civil, isDate: r.isDate || p.parameter("VALUE")?.asciiUppercased == "DATE", utc: r.utc, tzid: r.utc ? nil : tzid))
        }
        guard !out.isEmpty else { throw ICalendarError(line: p.line, "\(p.name) has no value") }
        return out
    }

    /// A TZID as the file writes it; some writers prefix a path (`/mozilla.org/…/Europe/Berlin`)
    /// that is not part of the IANA name. The name is kept as written.
    static func zone(_ tzid: String, line: Int, definedInFile: Set<String>, isZone: (String) -> Bool) throws(ICalendarError) -> String {
        if isZone(tzid) { return tzid }
        if definedInFile.contains(tzid) {
            throw ICalendarError(line: line, "TZID \"\(tzid)\" is defined by a VTIMEZONE in the file; VTIMEZONE definitions are not supported, only IANA zone names (e.g. Europe/Berlin) as TZID")
        }
        throw ICalendarError(line: line, "TZID \"\(tzid)\" is not a known IANA time zone")
    }

    /// What an event's properties are for: read, or named as not used.
    static let used: Set<String> = ["UID", "SUMMARY", "DESCRIPTION", "DTSTART", "RRULE", "EXDATE", "RDATE", "RECURRENCE-ID", "STATUS", "DTSTAMP"]
    /// Refused: they change when the event happens and cannot be honoured.
    static let refused: [String: String] = [
        "EXRULE": "EXRULE is not supported (RFC 5545 deprecates it; list the dates in EXDATE)",
        "RANGE": "RECURRENCE-ID;RANGE=THISANDFUTURE is not supported (split the series into two events)",
    ]

    // MARK: Events to requests

    /// The VEVENTs of `text` as request objects.
    /// - Parameters:
    ///   - idPrefix: each request's id is `idPrefix` when the file has one VEVENT, else
    ///     `idPrefix-N` for the file's N-th VEVENT.
    ///   - defaults: keys merged into every request (content.sound, categoryIdentifier, missed…);
    ///     the event's own title and body win.
    ///   - isZone: whether a TZID is a zone name the device knows (the shell looks it up).
    /// - Complexity: O(lines + events²) for edited instances (RECURRENCE-ID) matched by UID.
    ///   - after: with a time, an event whose every instance is over by then (its civil times all
    ///     more than 14 hours before it: over in any zone) is left out and named in `notes`, so
    ///     that a calendar's past one-off events do not make the agent refuse the file.
    public static func requests(_ text: String, idPrefix: String, defaults: [(key: String, value: JSONValue)] = [],
                                after: WallInstant? = nil, isZone: (String) -> Bool) throws(ICalendarError) -> ICalendarRequests {
        let root = try components(try contentLines(text))
        var result = ICalendarRequests()
        let defined = Set(root.children.filter { $0.name == "VTIMEZONE" }.compactMap { $0.first("TZID")?.value })
        var others: [String: Int] = [:]
        for c in root.children where c.name != "VEVENT" && c.name != "VTIMEZONE" { others[c.name, default: 0] += 1 }
        for (name, n) in others.sorted(by: { $0.key < $1.key }) {
            result.notes.append("\(n) \(name) component\(n == 1 ? "" : "s") not used (only VEVENTs become requests)")
        }
        let events = root.children.filter { $0.name == "VEVENT" }
        guard !events.isEmpty else { throw ICalendarError(line: root.line, "the calendar has no VEVENT") }
        guard events.count <= maximumEvents else { throw ICalendarError(line: root.line, "more than \(maximumEvents) VEVENTs") }

        struct Built { var ordinal: Int; var uid: String?; var line: Int; var calendar: [(key: String, value: JSONValue)]; var title: String?; var body: String?; var exdates: [String]; var cancelled: Bool; var override: Bool }
        var built: [Built] = []
        for (ordinal, e) in events.enumerated() {
            for p in e.properties { if let why = refused[p.name] { throw ICalendarError(line: p.line, why) } }
            if let r = e.first("RECURRENCE-ID"), r.parameter("RANGE") != nil { throw ICalendarError(line: r.line, refused["RANGE"]!) }
            guard let startLine = e.first("DTSTART") else { throw ICalendarError(line: e.line, "VEVENT has no DTSTART") }
            guard e.all("DTSTART").count == 1 else { throw ICalendarError(line: e.all("DTSTART")[1].line, "VEVENT has a second DTSTART") }
            let starts = try moments(startLine)
            guard starts.count == 1 else { throw ICalendarError(line: startLine.line, "DTSTART takes one value") }
            let start = starts[0]
            var zoneName: String?
            if start.utc { zoneName = "UTC" }
            else if let t = start.tzid { zoneName = try zone(t, line: startLine.line, definedInFile: defined, isZone: isZone) }
            var calendar: [(key: String, value: JSONValue)] = []
            let rules = e.all("RRULE")
            guard rules.count <= 1 else { throw ICalendarError(line: rules[1].line, "a second RRULE in one VEVENT is not supported (RFC 5545 deprecates it)") }
            if let r = rules.first {
                do throws(RecurrenceError) { _ = try RecurrenceRule(parsing: r.value) } catch {
                    throw ICalendarError(line: r.line, "\(error)")
                }
                calendar.append(("rrule", .string(r.value)))
            } else {
                calendar.append(("rrule", .string("FREQ=DAILY;COUNT=1")))
            }
            calendar.append(("dtstart", .string(start.civil.iso8601)))
            if let zoneName { calendar.append(("tz", .string(zoneName))) }
            func dates(_ name: String) throws(ICalendarError) -> [String] {
                var out: [String] = []
                for p in e.all(name) {
                    for m in try moments(p) {
                        if let t = m.tzid, t != start.tzid {
                            throw ICalendarError(line: p.line, "\(name);TZID=\(t) differs from DTSTART's zone \(start.tzid ?? (start.utc ? "UTC" : "(floating)")): not supported")
                        }
                        var m = m
                        if start.utc && !m.utc && !m.isDate { m.utc = true }   // a UTC series: its local times are UTC
                        out.append(m.text)
                    }
                }
                return out
            }
            let exdates = try dates("EXDATE"), rdates = try dates("RDATE")
            if !rdates.isEmpty { calendar.append(("rdate", .array(rdates.map { .string($0) }))) }
            var overrideDate: [String] = []
            if let r = e.first("RECURRENCE-ID") {
                let m = try moments(r)
                overrideDate = m.map { $0.text }
            }
            if let after, rdates.isEmpty, let r = calendar.first(where: { $0.key == "rrule" })?.value.string {
                let cutoff = CivilDateTime(localSeconds: after.secondsSinceEpoch - 14 * 3600)
                do throws(RecurrenceError) {
                    let schedule = try RecurrenceSchedule(try RecurrenceRule(parsing: r), start: start.civil)
                    if schedule.localInstances(from: cutoff, limit: 1).isEmpty {
                        result.notes.append("line \(e.line): VEVENT \(e.first("SUMMARY").map { "\"\(unescape($0.value))\"" } ?? "(no SUMMARY)"): over before \(after) (no instance after it): not added")
                        continue
                    }
                } catch {
                    throw ICalendarError(line: e.first("RRULE")?.line ?? startLine.line, "\(error)")
                }
            }
            let status = e.first("STATUS")?.value.asciiUppercased
            let title = e.first("SUMMARY").map { unescape($0.value) }
            let body = e.first("DESCRIPTION").map { unescape($0.value) }
            var unused: [String] = []
            for p in e.properties where !used.contains(p.name) && !unused.contains(p.name) { unused.append(p.name) }
            for c in e.children where !unused.contains(c.name) { unused.append(c.name) }
            if !unused.isEmpty {
                result.notes.append("line \(e.line): VEVENT \(title.map { "\"\($0)\"" } ?? "(no SUMMARY)"): \(unused.joined(separator: ", ")) not used"
                                    + (unused.contains("VALARM") ? " (the request fires at DTSTART)" : ""))
            }
            if status == "CANCELLED" && overrideDate.isEmpty {
                result.notes.append("line \(e.line): VEVENT \(title.map { "\"\($0)\"" } ?? "(no SUMMARY)"): STATUS:CANCELLED, no request")
                continue
            }
            built.append(Built(ordinal: ordinal + 1, uid: e.first("UID")?.value, line: e.line, calendar: calendar, title: title, body: body,
                               exdates: exdates + overrideDate, cancelled: status == "CANCELLED", override: !overrideDate.isEmpty))
        }
        // An edited instance leaves its series: its RECURRENCE-ID (the last of its exdates,
        // put there above) becomes an EXDATE of the event of the same UID; the edited event,
        // unless cancelled, is a request of its own. Requests keep the file's order.
        var masters: [Built] = []
        for b in built where !b.override { masters.append(b) }
        for b in built where b.override {
            guard let k = masters.firstIndex(where: { $0.uid != nil && $0.uid == b.uid }) else {
                throw ICalendarError(line: b.line, "RECURRENCE-ID of UID \(b.uid ?? "(none)"): no VEVENT with that UID and no RECURRENCE-ID in the file")
            }
            masters[k].exdates += b.exdates.suffix(1)
        }
        var ordered: [Built] = []
        for b in built {
            if !b.override { ordered.append(masters.first { $0.line == b.line }!); continue }
            if b.cancelled { continue }
            var own = b
            own.exdates.removeLast()
            ordered.append(own)
        }
        masters = ordered
        for b in masters {
            var calendar = b.calendar
            if !b.exdates.isEmpty { calendar.append(("exdate", .array(b.exdates.map { .string($0) }))) }
            var content: [(key: String, value: JSONValue)] = []
            if case .object(let d)? = defaults.first(where: { $0.key == "content" })?.value { content = d }
            func set(_ key: String, _ v: String?) {
                guard let v else { return }
                content.removeAll { $0.key == key }
                content.append((key, .string(v)))
            }
            set("title", b.title)
            set("body", b.body)
            // Ids by the event's place in the file, so that an event left out (over, cancelled)
            // does not rename the others.
            var request: [(key: String, value: JSONValue)] = [("id", .string(events.count == 1 ? idPrefix : "\(idPrefix)-\(b.ordinal)"))]
            if !content.isEmpty { request.append(("content", .object(content))) }
            request.append(("trigger", .object([("calendar", .object(calendar))])))
            for d in defaults where d.key != "content" && d.key != "id" && d.key != "trigger" { request.append(d) }
            result.requests.append(.object(request))
        }
        return result
    }

    // MARK: Exclusion calendars

    /// The days of an exclusion calendar (`except_ics`): every day its all-day VEVENTs cover
    /// (DTSTART to DTEND exclusive, or one day; an RRULE's instances up to `horizonYear`), as
    /// `2026-12-25` texts, sorted. A timed event is refused: the calendar lists days.
    public static func exclusionDays(_ text: String, horizonYear: Int64 = 2200) throws(ICalendarError) -> [String] {
        let root = try components(try contentLines(text))
        var days: Set<Int64> = []
        for e in root.children where e.name == "VEVENT" {
            guard let s = e.first("DTSTART") else { throw ICalendarError(line: e.line, "VEVENT has no DTSTART") }
            let start = try moments(s)[0]
            guard start.isDate else {
                throw ICalendarError(line: s.line, "DTSTART \(s.value) is a time: an exclusion calendar holds all-day events (DTSTART;VALUE=DATE:20261225)")
            }
            let first = CivilDays.dayNumber(year: start.civil.year, month: start.civil.month, day: start.civil.day)
            var length: Int64 = 1
            if let en = e.first("DTEND") {
                let end = try moments(en)[0]
                let last = CivilDays.dayNumber(year: end.civil.year, month: end.civil.month, day: end.civil.day)
                guard last > first else { throw ICalendarError(line: en.line, "DTEND \(en.value) is not after DTSTART \(s.value)") }
                guard last - first <= 366 else { throw ICalendarError(line: en.line, "an all-day event of more than 366 days") }
                length = last - first
            }
            var starts: [Int64] = [first]
            if let r = e.first("RRULE") {
                do throws(RecurrenceError) {
                    let schedule = try RecurrenceSchedule(try RecurrenceRule(parsing: r.value), start: start.civil)
                    starts = []
                    var from = start.civil
                    while starts.count < 10_000 {
                        let batch = schedule.localInstances(from: from, limit: 64)
                        for c in batch where c.year <= horizonYear { starts.append(CivilDays.dayNumber(year: c.year, month: c.month, day: c.day)) }
                        guard batch.count == 64, let last = batch.last, last.year <= horizonYear else { break }
                        from = CivilDateTime(localSeconds: last.localSeconds + 1)
                    }
                } catch {
                    throw ICalendarError(line: r.line, "\(error)")
                }
            }
            var removed: Set<Int64> = []
            for p in e.all("EXDATE") {
                for m in try moments(p) { removed.insert(CivilDays.dayNumber(year: m.civil.year, month: m.civil.month, day: m.civil.day)) }
            }
            for d in starts where !removed.contains(d) { for k in 0..<length { days.insert(d + k) } }
            guard days.count <= 100_000 else { throw ICalendarError(line: e.line, "more than 100,000 excluded days") }
        }
        return days.sorted().map { d in
            let (y, m, dd) = CivilDays.date(dayNumber: d)
            return CivilDateTime(year: y, month: m, day: dd).iso8601.prefix(10).description
        }
    }
}

extension String {
    /// Without the spaces at either end (bytewise: Embedded Swift has no Unicode tables here).
    func trimmingSpaces() -> String {
        let b = Array(utf8)
        var lo = 0, hi = b.count
        while lo < hi && b[lo] == 0x20 { lo += 1 }
        while hi > lo && b[hi - 1] == 0x20 { hi -= 1 }
        return String(decoding: b[lo..<hi], as: UTF8.self)
    }

    /// ASCII letters upper-cased, the rest as is (iCalendar names are ASCII, case-insensitive).
    var asciiUppercased: String {
        String(decoding: utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }, as: UTF8.self)
    }
}

// MARK: The `ics` and `except_ics` keys of a request

/// An `ics` or `except_ics` key that could not be honoured: the key, and why (file and line).
public struct ICalendarKeyError: Error, Sendable, CustomStringConvertible {
    public var key: String
    public var message: String
    public init(key: String, _ message: String) { self.key = key; self.message = message }
    public var description: String { "\(key): \(message)" }
}

extension ICalendar {
    /// The keys a request object may carry in place of (`ics`) or beside (`except_ics`) a trigger.
    public static let requestKeys = ["ics", "except_ics"]

    /// A request object with `ics = "file.ics"` and/or `except_ics = "holidays.ics"` resolved:
    /// `ics` makes one request per VEVENT (ids from the object's `id`; its content, missed and
    /// other keys as defaults); `except_ics` adds the days of an exclusion calendar to every
    /// resulting calendar trigger's `exdate`. An object without either key comes back as is.
    /// - Parameters:
    ///   - read: the text of a file named in the object (the caller resolves relative names).
    ///   - isZone: whether a TZID names a zone the device knows.
    public static func resolve(_ request: JSONValue, read: (String) throws(ICalendarKeyError) -> String,
                               after: WallInstant? = nil, isZone: (String) -> Bool) throws(ICalendarKeyError) -> ICalendarRequests {
        guard case .object(let members) = request else { return ICalendarRequests(requests: [request]) }
        func file(_ key: String) throws(ICalendarKeyError) -> String? {
            guard let v = members.first(where: { $0.key == key })?.value else { return nil }
            guard case .string(let name) = v, !name.isEmpty else { throw ICalendarKeyError(key: key, "must be a file name (a string)") }
            return name
        }
        let icsFile = try file("ics"), exceptFile = try file("except_ics")
        guard icsFile != nil || exceptFile != nil else { return ICalendarRequests(requests: [request]) }
        let rest = members.filter { !requestKeys.contains($0.key) }
        var result: ICalendarRequests
        if let icsFile {
            if rest.contains(where: { $0.key == "trigger" }) {
                throw ICalendarKeyError(key: "ics", "goes without a trigger: each VEVENT of \(icsFile) is the trigger of one request")
            }
            guard case .string(let id)? = rest.first(where: { $0.key == "id" })?.value else {
                throw ICalendarKeyError(key: "ics", "needs an id: the requests are named id-1, id-2, … (id alone for one event)")
            }
            let text = try read(icsFile)
            do throws(ICalendarError) {
                result = try requests(text, idPrefix: id, defaults: rest.filter { $0.key != "id" }, after: after, isZone: isZone)
            } catch {
                throw ICalendarKeyError(key: "ics", "\(icsFile): \(error)")
            }
            result.notes = result.notes.map { "\(icsFile): \($0)" }
        } else {
            result = ICalendarRequests(requests: [.object(rest)])
        }
        guard let exceptFile else { return result }
        let days: [String]
        let exceptText: String
        do throws(ICalendarKeyError) { exceptText = try read(exceptFile) } catch {
            throw ICalendarKeyError(key: "except_ics", error.message)
        }
        do throws(ICalendarError) { days = try exclusionDays(exceptText) } catch {
            throw ICalendarKeyError(key: "except_ics", "\(exceptFile): \(error)")
        }
        for k in result.requests.indices {
            guard let r = adding(exclusions: days, to: result.requests[k]) else {
                throw ICalendarKeyError(key: "except_ics", "goes with a calendar trigger (trigger.calendar, or ics)")
            }
            result.requests[k] = r
        }
        return result
    }

    /// `request` with `days` appended to its trigger.calendar.exdate; nil when it has no calendar trigger.
    static func adding(exclusions days: [String], to request: JSONValue) -> JSONValue? {
        func replacing(_ members: [(key: String, value: JSONValue)], _ key: String, _ f: (JSONValue?) -> JSONValue?) -> [(key: String, value: JSONValue)]? {
            var out = members
            if let i = out.firstIndex(where: { $0.key == key }) {
                guard let v = f(out[i].value) else { return nil }
                out[i].value = v
            } else {
                guard let v = f(nil) else { return nil }
                out.append((key, v))
            }
            return out
        }
        guard case .object(let r) = request else { return nil }
        let updated = replacing(r, "trigger") { trigger in
            guard case .object(let t)? = trigger else { return nil }
            return replacing(t, "calendar") { calendar in
                guard case .object(let c)? = calendar else { return nil }
                return replacing(c, "exdate") { old in
                    var list: [JSONValue] = []
                    if case .array(let a)? = old { list = a }
                    return .array(list + days.map { .string($0) })
                }.map { JSONValue.object($0) }
            }.map { JSONValue.object($0) }
        }
        return updated.map { JSONValue.object($0) }
    }
}
