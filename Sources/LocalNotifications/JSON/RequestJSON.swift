// A request as JSON: the one representation of the control socket, `apply` and `simulate`.
//
//   {"id":"fasting",
//    "content":{"title":"Glucose","body":"Check now","sound":"default","interruptionLevel":"active",
//               "categoryIdentifier":"REMINDER","threadIdentifier":"health","badge":1,"userInfo":{"meal":"fasting"}},
//    "trigger":{"calendar":{"match":{"hour":7,"minute":0},"tz":"Europe/Berlin","repeats":true}},
//    "missed":"coalesce"}
//
// Triggers: {"calendar":{"match":{…},"tz":"…","repeats":…,"policy":"nextTime","repeatedTime":"first",
//            "firstWeekday":1,"minimumDaysInFirstWeek":1}} (tz absent = floating);
//           {"interval":{"seconds":3600,"repeats":true}} (seconds may have a fraction: ms resolution);
//           {"location":{"region":{"circle":{"lat":…,"lon":…,"radius":…}} or {"polygon":[[lat,lon],…]}
//            or, with holes or several parts, {"parts":[[[[lat,lon],…] outer ring, hole, …] part, …]},
//            "notifyOnEntry":true,"notifyOnExit":false,"repeats":true,"dwell":60,"cooldown":300}}.
// Missed fires: "missed":"coalesce" | "skip" | {"late":SECONDS} (default coalesce).
import CivilTime
import FencepostJSON
import Geofencing
import Position

extension NotificationRequest {
    static let keys = ["id", "content", "trigger", "missed"]
    static let contentKeys = ["title", "body", "sound", "badge", "userInfo", "categoryIdentifier", "threadIdentifier", "interruptionLevel"]
    static let calendarKeys = ["match", "rrule", "dtstart", "exdate", "rdate", "tz", "repeats", "policy", "repeatedTime", "firstWeekday", "minimumDaysInFirstWeek"]

    /// Reads a request from its JSON form. Shape errors (wrong type, unknown or missing key) throw
    /// `.malformed` with the path; value rules are checked by ``validate(limits:)`` and the engine.
    /// - Complexity: O(size of the JSON).
    public init(json: JSONValue) throws(RequestError) {
        let r = try ObjectReader(json, path: "", allowed: Self.keys)
        guard let id = try r.string("id") else { throw RequestError(.malformed, "missing key \"id\"") }
        let content = try Self.content(r.object("content", allowed: Self.contentKeys))
        guard let t = try r.object("trigger", allowed: ["calendar", "interval", "location"]) else {
            throw RequestError(.malformed, "missing key \"trigger\" (one of calendar, interval, location)")
        }
        guard t.members.count == 1 else {
            throw RequestError(.malformed, "\"trigger\" must have exactly one of calendar, interval, location")
        }
        let trigger: NotificationTrigger
        if let c = try t.object("calendar", allowed: Self.calendarKeys) {
            trigger = .calendar(try Self.calendar(c))
        } else if let i = try t.object("interval", allowed: ["seconds", "repeats"]) {
            guard let s = try i.double("seconds") else { throw RequestError(.malformed, "missing key \"trigger.interval.seconds\"") }
            // The sign is validate's rule (> 0); the magnitude is InputRanges'.
            do { _ = try InputRanges.duration(abs(s), "trigger.interval.seconds") } catch { throw RequestError(error, rule: .interval) }
            let ms = (s * 1000).rounded()
            trigger = .interval(IntervalTrigger(milliseconds: Int64(ms), repeats: try i.bool("repeats") ?? false))
        } else if let l = try t.object("location", allowed: ["region", "notifyOnEntry", "notifyOnExit", "repeats", "dwell", "cooldown"]) {
            trigger = .location(try Self.location(l))
        } else {
            throw RequestError(.malformed, "\"trigger\" must have one of calendar, interval, location")
        }
        let missed = try Self.missedPolicy(r.value("missed"))
        self.init(identifier: id, content: content, trigger: trigger, missedFirePolicy: missed)
    }

    static func content(_ c: ObjectReader?) throws(RequestError) -> NotificationContent {
        var content = NotificationContent()
        guard let c else { return content }
        content.title = try c.string("title") ?? ""
        content.body = try c.string("body") ?? ""
        content.sound = try c.string("sound")
        content.badge = try c.int("badge")
        content.categoryIdentifier = try c.string("categoryIdentifier")
        content.threadIdentifier = try c.string("threadIdentifier")
        if let level = try c.string("interruptionLevel") {
            guard let l = InterruptionLevel(rawValue: level) else {
                throw RequestError(.malformed, "unknown content.interruptionLevel \"\(level)\" (\(InterruptionLevel.allCases.map { $0.rawValue }.joined(separator: ", ")))")
            }
            content.interruptionLevel = l
        }
        if let info = c.value("userInfo") {
            guard case .object(let members) = info else { throw c.typeError("userInfo", "an object of strings", info) }
            for (k, v) in members {
                guard case .string(let s) = v else { throw c.typeError("userInfo.\(k)", "a string", v) }
                content.userInfo.append((k, s))
            }
        }
        return content
    }

    /// A calendar trigger from its JSON object alone (`fencepost next` reads rules through this).
    public static func calendarTrigger(json: JSONValue) throws(RequestError) -> CalendarTrigger {
        try calendar(try ObjectReader(json, path: "trigger.calendar", allowed: calendarKeys))
    }

    static func calendar(_ c: ObjectReader) throws(RequestError) -> CalendarTrigger {
        if let text = try c.string("rrule") {
            guard c.value("match") == nil else { throw RequestError(.malformed, "trigger.calendar has both \"match\" and \"rrule\": give one") }
            guard let ds = try c.string("dtstart") else {
                throw RequestError(.malformed, "missing key \"trigger.calendar.dtstart\" (the rule's local start, e.g. 2026-01-05T07:00:00)")
            }
            guard let p = RecurrenceText.parse(ds), !p.utc else {
                throw RequestError(.calendar, "trigger.calendar.dtstart \"\(ds)\" must be a local date-time like 2026-01-05T07:00:00 (the zone is tz)")
            }
            let exclusions = try dates(c, "exdate"), additions = try dates(c, "rdate")
            let tz = try c.string("tz"), repeats = try c.bool("repeats") ?? true
            do throws(RecurrenceError) {
                let schedule = try RecurrenceSchedule(try RecurrenceRule(parsing: text), start: p.civil, exclusions: exclusions, additions: additions)
                return CalendarTrigger(recurrence: schedule, zoneIdentifier: tz, repeats: repeats)
            } catch {
                throw RequestError(.calendar, "trigger.calendar.rrule: \(error)")
            }
        }
        for key in ["dtstart", "rdate"] where c.value(key) != nil {
            throw RequestError(.malformed, "trigger.calendar.\(key) goes with \"rrule\"")
        }
        guard let m = c.value("match") else { throw RequestError(.malformed, "missing key \"trigger.calendar.match\" (or \"rrule\")") }
        // Sets, ranges, last days, and any match with excluded dates (a holiday calendar): the
        // recurrence engine.
        if let sets = try ComponentSets(json: m, path: c.field("match"), always: c.value("exdate") != nil), sets.needsRule || c.value("exdate") != nil {
            let tz = try c.string("tz"), repeats = try c.bool("repeats") ?? false
            let exclusions = try dates(c, "exdate")
            do throws(RecurrenceError) {
                let (rule, start) = try sets.rule()
                return CalendarTrigger(recurrence: try RecurrenceSchedule(rule, start: start, exclusions: exclusions), zoneIdentifier: tz, repeats: repeats)
            } catch {
                throw RequestError(.calendar, "trigger.calendar.match.\(error.part): \(error.message)")
            }
        }
        if c.value("exdate") != nil {
            throw RequestError(.malformed, "trigger.calendar.exdate goes with \"rrule\" or a match of year, month, day, hour, minute, second, weekday, weekdayOrdinal, dayOfYear, weekOfYear")
        }
        var t = CalendarTrigger(match: try CalendarMatch(json: m, path: c.field("match")), zoneIdentifier: try c.string("tz"), repeats: try c.bool("repeats") ?? false)
        if let p = try c.string("policy") {
            guard let policy = MatchingPolicy(rawValue: p) else {
                throw RequestError(.malformed, "unknown trigger.calendar.policy \"\(p)\" (\(MatchingPolicy.allCases.map { $0.rawValue }.joined(separator: ", ")))")
            }
            t.policy = policy
        }
        if let p = try c.string("repeatedTime") {
            guard let r = RepeatedTimePolicy(rawValue: p) else {
                throw RequestError(.malformed, "unknown trigger.calendar.repeatedTime \"\(p)\" (first, last)")
            }
            t.repeatedTime = r
        }
        if let d = try c.int("firstWeekday") {
            guard (1...7).contains(d) else { throw RequestError(.calendar, "trigger.calendar.firstWeekday must be 1…7 (1 = Sunday), got \(d)") }
            t.weekRules.firstWeekday = d
        }
        if let d = try c.int("minimumDaysInFirstWeek") {
            guard (1...7).contains(d) else { throw RequestError(.calendar, "trigger.calendar.minimumDaysInFirstWeek must be 1…7, got \(d)") }
            t.weekRules.minimumDaysInFirstWeek = d
        }
        return t
    }

    /// `exdate` / `rdate`: an array of local date-times, UTC instants (`…Z`) or dates.
    static func dates(_ c: ObjectReader, _ key: String) throws(RequestError) -> RecurrenceDates {
        var dates = RecurrenceDates()
        guard let v = c.value(key) else { return dates }
        guard case .array(let items) = v else { throw c.typeError(key, "an array of dates", v) }
        func bad(_ i: Int) -> RequestError {
            RequestError(.calendar, "trigger.calendar.\(key)[\(i)] must be a local date-time (2026-12-25T07:00:00), a UTC one (…Z) or a date (2026-12-25), got \(items[i])")
        }
        var texts: [String] = []
        texts.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            guard case .string(let s) = item else { throw bad(i) }
            texts.append(s)
        }
        if let i = dates.add(contentsOf: texts) { throw bad(i) }
        return dates
    }

    static func location(_ l: ObjectReader) throws(RequestError) -> LocationTrigger {
        guard let region = try l.object("region", allowed: ["circle", "polygon", "parts"]) else {
            throw RequestError(.malformed, "missing key \"trigger.location.region\"")
        }
        let shape: RegionShape
        if let c = try region.object("circle", allowed: ["lat", "lon", "radius"]) {
            guard let lat = try c.double("lat"), let lon = try c.double("lon") else {
                throw RequestError(.malformed, "trigger.location.region.circle needs \"lat\" and \"lon\"")
            }
            guard let radius = try c.double("radius") else {
                throw RequestError(.radius, "trigger.location.region.circle has no \"radius\" (metres)")
            }
            guard radius > 0 else { throw RequestError(.radius, "trigger.location.region.circle.radius must be greater than 0, got \(number(radius))") }
            do { _ = try InputRanges.radius(radius, "trigger.location.region.circle.radius", maximum: .infinity) } catch {
                throw RequestError(error, rule: .radius)
            }
            do {
                shape = .circle(try CircularRegion(center: Coordinate(latitude: lat, longitude: lon), radius: radius))
            } catch {
                throw RequestError(.region, "trigger.location.region.circle: \(error)")
            }
        } else if let p = region.value("polygon") {
            guard case .array(let points) = p else { throw region.typeError("polygon", "an array of [lat, lon] pairs", p) }
            var vertices: [Coordinate] = []
            for (i, point) in points.enumerated() {
                guard case .array(let pair) = point, pair.count == 2, let lat = pair[0].double, let lon = pair[1].double else {
                    throw RequestError(.malformed, "trigger.location.region.polygon[\(i)] must be [lat, lon]")
                }
                vertices.append(Coordinate(latitude: lat, longitude: lon))
            }
            do { shape = .polygon(try PolygonRegion(vertices: vertices)) } catch {
                throw RequestError(.region, "trigger.location.region.polygon: \(error)")
            }
        } else if let p = region.value("parts") {
            let key = "trigger.location.region.parts"
            guard case .array(let partValues) = p else { throw region.typeError("parts", "an array of parts (arrays of rings of [lat, lon] pairs)", p) }
            var parts: [[[Coordinate]]] = []
            for (i, partValue) in partValues.enumerated() {
                guard case .array(let ringValues) = partValue else { throw RequestError(.malformed, "\(key)[\(i)] must be an array of rings") }
                var rings: [[Coordinate]] = []
                for (j, ringValue) in ringValues.enumerated() {
                    guard case .array(let points) = ringValue else { throw RequestError(.malformed, "\(key)[\(i)][\(j)] must be an array of [lat, lon] pairs") }
                    var ring: [Coordinate] = []
                    for (k, point) in points.enumerated() {
                        guard case .array(let pair) = point, pair.count == 2, let lat = pair[0].double, let lon = pair[1].double else {
                            throw RequestError(.malformed, "\(key)[\(i)][\(j)][\(k)] must be [lat, lon]")
                        }
                        ring.append(Coordinate(latitude: lat, longitude: lon))
                    }
                    rings.append(ring)
                }
                parts.append(rings)
            }
            do { shape = .polygon(try PolygonRegion(parts: parts)) } catch {
                throw RequestError(.region, "\(key): \(error)")
            }
        } else {
            throw RequestError(.malformed, "trigger.location.region must have \"circle\", \"polygon\" or \"parts\"")
        }
        let dwell = try l.double("dwell"), cooldown = try l.double("cooldown") ?? 0
        do throws(RangeError) {
            if let dwell { _ = try InputRanges.duration(dwell, "trigger.location.dwell") }
            _ = try InputRanges.duration(cooldown, "trigger.location.cooldown")
        } catch { throw RequestError(error) }
        return LocationTrigger(shape: shape, notifyOnEntry: try l.bool("notifyOnEntry") ?? true,
                               notifyOnExit: try l.bool("notifyOnExit") ?? false, repeats: try l.bool("repeats") ?? false,
                               dwell: dwell, cooldown: cooldown)
    }

    static func missedPolicy(_ v: JSONValue?) throws(RequestError) -> MissedFirePolicy {
        guard let v else { return .default }
        switch v {
        case .string("coalesce"): return .coalesce
        case .string("skip"): return .skip
        case .object(let m) where m.count == 1 && m[0].key == "late":
            guard let g = m[0].value.int64, g >= 0 else {
                throw RequestError(.malformed, "\"missed.late\" must be a number of seconds ≥ 0")
            }
            do { _ = try InputRanges.duration(seconds: g, "missed.late") } catch { throw RequestError(error) }
            return .deliverLate(graceSeconds: g)
        default:
            throw RequestError(.malformed, "\"missed\" must be \"coalesce\", \"skip\" or {\"late\": SECONDS}, got \(v)")
        }
    }

    // MARK: Writing

    /// The request as JSON, in the form ``init(json:)`` reads (a round trip gives an equal request).
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("id", .string(identifier)), ("content", content.json)]
        members.append(("trigger", trigger.json))
        switch missedFirePolicy {
        case .coalesce: members.append(("missed", "coalesce"))
        case .skip: members.append(("missed", "skip"))
        case .deliverLate(let g): members.append(("missed", .object([("late", .integer(g))])))
        }
        return .object(members)
    }
}

extension CalendarMatch {
    /// Reads calendar components, `{"hour":7,"minute":0,"weekday":"mon"}` (names as the type's
    /// properties; a weekday may be a name). `path` names the object in messages.
    public init(json: JSONValue, path: String) throws(RequestError) {
        let m = try ObjectReader(json, path: path, allowed: CalendarMatch.componentNames)
        self.init()
        for (name, v) in m.members {
            let n: Int
            if name == "weekday", case .string(let s) = v, let w = CalendarMatch.weekday(named: s) {
                n = w
            } else if let i = v.int {
                n = i
            } else {
                throw m.typeError(name, "an integer", v)
            }
            _ = setComponent(name, to: n)
        }
    }
}

extension ComponentSets {
    /// Reads a match whose values may be sets: `{"weekday":"mon-fri","hour":"8-18/2","day":-1}`
    /// or arrays (`"hour":[8,12]`). nil when every value is a plain integer or weekday name (an
    /// ordinary match), so that the caller reads it as before; with `always`, such a match too.
    public init?(json: JSONValue, path: String, always: Bool = false) throws(RequestError) {
        guard case .object(let members) = json else { return nil }
        var sets = ComponentSets()
        var any = false
        for (name, v) in members {
            switch v {
            case .string(let s):
                if name == "weekday", CalendarMatch.weekday(named: s) != nil { sets.add(name, [CalendarMatch.weekday(named: s)!]); continue }
                guard let values = ComponentSets.parse(name, s) else {
                    throw RequestError(.malformed, "\"\(path).\(name)\" must be an integer or a set: a list \"1,15,-1\", a range \"8-18\", a stepped range \"8-18/2\"; got \"\(s)\"")
                }
                sets.add(name, values); any = true
            case .array(let items):
                var list: [Int] = []
                for item in items {
                    if name == "weekday", case .string(let s) = item, let w = CalendarMatch.weekday(named: s) { list.append(w); continue }
                    guard let i = item.int else { throw RequestError(.malformed, "\(path).\(name) must list integers, got \(item)") }
                    list.append(i)
                }
                sets.add(name, list); any = true
            default:
                guard let i = v.int else { return nil }
                if i < 0 && (name == "day" || name == "weekdayOrdinal" || name == "dayOfYear" || name == "weekOfYear") { any = true }
                sets.add(name, [i])
            }
        }
        guard any || always else { return nil }
        self = sets
    }
}

extension NotificationContent {
    /// The content as JSON (absent fields omitted).
    public var json: JSONValue {
        var m: [(key: String, value: JSONValue)] = [("title", .string(title)), ("body", .string(body))]
        if let sound { m.append(("sound", .string(sound))) }
        if let badge { m.append(("badge", .integer(Int64(badge)))) }
        if !userInfo.isEmpty { m.append(("userInfo", .object(userInfo.map { ($0.key, .string($0.value)) }))) }
        if let categoryIdentifier { m.append(("categoryIdentifier", .string(categoryIdentifier))) }
        if let threadIdentifier { m.append(("threadIdentifier", .string(threadIdentifier))) }
        m.append(("interruptionLevel", .string(interruptionLevel.rawValue)))
        return .object(m)
    }
}

extension NotificationTrigger {
    /// The trigger as JSON.
    public var json: JSONValue {
        switch self {
        case .calendar(let t):
            var m: [(key: String, value: JSONValue)] = []
            if let r = t.recurrence {
                m.append(("rrule", .string(r.rule.text)))
                m.append(("dtstart", .string(r.start.iso8601)))
                if !r.exclusions.isEmpty { m.append(("exdate", .array(r.exclusions.texts.map { .string($0) }))) }
                if !r.additions.isEmpty { m.append(("rdate", .array(r.additions.texts.map { .string($0) }))) }
            } else {
                m.append(("match", .object(t.match.setComponents.map { ($0.name, .integer(Int64($0.value))) })))
            }
            if let z = t.zoneIdentifier { m.append(("tz", .string(z))) }
            m.append(("repeats", .bool(t.repeats)))
            if t.policy != .nextTime { m.append(("policy", .string(t.policy.rawValue))) }
            if t.repeatedTime != .first { m.append(("repeatedTime", .string(t.repeatedTime.rawValue))) }
            if t.weekRules != .gregorianDefault {
                m.append(("firstWeekday", .integer(Int64(t.weekRules.firstWeekday))))
                m.append(("minimumDaysInFirstWeek", .integer(Int64(t.weekRules.minimumDaysInFirstWeek))))
            }
            return .object([("calendar", .object(m))])
        case .interval(let t):
            let seconds: JSONValue = t.milliseconds % 1000 == 0 ? .integer(t.milliseconds / 1000) : .number(Double(t.milliseconds) / 1000)
            return .object([("interval", .object([("seconds", seconds), ("repeats", .bool(t.repeats))]))])
        case .location(let t):
            let region: JSONValue
            switch t.shape {
            case .circle(let c):
                region = .object([("circle", .object([("lat", .number(c.center.latitude)), ("lon", .number(c.center.longitude)),
                                                       ("radius", .number(c.radius))]))])
            case .polygon(let p):
                region = RequestJSON.polygonRegion(p.parts)
            }
            var m: [(key: String, value: JSONValue)] = [("region", region), ("notifyOnEntry", .bool(t.notifyOnEntry)),
                                                       ("notifyOnExit", .bool(t.notifyOnExit)), ("repeats", .bool(t.repeats))]
            if let d = t.dwell { m.append(("dwell", .number(d))) }
            if t.cooldown != 0 { m.append(("cooldown", .number(t.cooldown))) }
            return .object([("location", .object(m))])
        }
    }
}

/// Pieces of the request JSON that other modules build.
public enum RequestJSON {
    /// A polygon's `region`: `{"polygon":[[lat,lon],…]}` for one ring, else `{"parts":[…]}` (each
    /// part its rings, the outer ring first), so that no hole or part is lost.
    public static func polygonRegion(_ parts: [[[Coordinate]]]) -> JSONValue {
        func ring(_ r: [Coordinate]) -> JSONValue { .array(r.map { .array([.number($0.latitude), .number($0.longitude)]) }) }
        if parts.count == 1, parts[0].count == 1 { return .object([("polygon", ring(parts[0][0]))]) }
        return .object([("parts", .array(parts.map { .array($0.map(ring)) }))])
    }
}
