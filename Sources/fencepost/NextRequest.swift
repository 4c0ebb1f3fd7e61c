// One `fencepost next` question — "when does this calendar match fire after this instant?" — in the
// form both modes share: the human mode builds it from options, the script mode from a JSON line.
import CivilTime
import FencepostJSON
import LocalNotifications

/// A question for the calendar: the next `count` fires of `match` strictly after `after`.
struct NextRequest: Sendable {
    /// nil: now (read by the shell).
    var after: WallInstant?
    /// An IANA zone name; nil: the device zone.
    var zoneName: String?
    var match = CalendarMatch()
    var policy: MatchingPolicy = .nextTime
    var repeatedTime: RepeatedTimePolicy = .first
    var count = 1
    var weekRules: WeekRules = .gregorianDefault
    /// A recurrence set (`rrule` + `dtstart`, or a match with sets) in place of `match`.
    var recurrence: RecurrenceSchedule?

    /// The largest `count` one request may ask for; above it the request is an error, so one line
    /// cannot make the run spend minutes or megabytes.
    static let maximumCount = 10_000
}

/// A bad request: the sentence goes back to the user as is.
struct NextRequestError: Error, Equatable, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

// MARK: - From JSON (script mode)

extension NextRequest {
    /// The top-level keys of a script-mode line.
    static let requestKeys = ["after", "tz", "match", "rrule", "dtstart", "exdate", "rdate", "policy", "repeatedTime", "count", "firstWeekday", "minimumDaysInFirstWeek"]

    /// Reads a request object:
    /// `{"after":"2026-03-08T06:59:00Z","tz":"America/New_York","match":{"hour":2,"minute":30},
    ///   "policy":"nextTime","repeatedTime":"first","count":3,"firstWeekday":2,"minimumDaysInFirstWeek":4}`.
    /// Only `match` is required. An unknown key, a value of the wrong type or out of range is an
    /// error that names it.
    ///
    /// - Complexity: O(k²) in the number of keys (k ≤ 8 in a valid request).
    init(json: JSONValue) throws(NextRequestError) {
        guard case .object(let members) = json else {
            throw NextRequestError("expected a JSON object, got \(json.kindDescription)")
        }
        self.init()
        var sawMatch = false
        for (key, value) in members {
            switch key {
            case "after":
                guard case .string(let text) = value else { throw Self.typeError(key, "a timestamp string", value) }
                switch InstantText.parse(text.utf8) {
                case .success(let instant): after = instant
                case .failure(let e): throw NextRequestError("\"after\": \(e)")
                }
            case "tz":
                guard case .string(let name) = value else { throw Self.typeError(key, "a zone name string", value) }
                zoneName = name
            case "match":
                sawMatch = true
                do throws(RequestError) {
                    if let sets = try ComponentSets(json: value, path: "match"), sets.needsRule {
                        recurrence = try Self.schedule(sets)
                    } else {
                        match = try CalendarMatch(json: value, path: "match")
                    }
                } catch {
                    throw NextRequestError(error.message)
                }
            case "rrule", "dtstart", "exdate", "rdate":
                break   // read below, together
            case "policy":
                guard case .string(let s) = value else { throw Self.typeError(key, "a string", value) }
                guard let p = MatchingPolicy(rawValue: s) else {
                    throw NextRequestError("unknown policy \"\(s)\" (\(MatchingPolicy.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                policy = p
            case "repeatedTime":
                guard case .string(let s) = value else { throw Self.typeError(key, "a string", value) }
                guard let r = RepeatedTimePolicy(rawValue: s) else {
                    throw NextRequestError("unknown repeatedTime \"\(s)\" (first, last)")
                }
                repeatedTime = r
            case "count":
                guard let c = value.int else { throw Self.typeError(key, "an integer", value) }
                guard (1...Self.maximumCount).contains(c) else {
                    throw NextRequestError("\"count\" must be 1...\(Self.maximumCount), got \(c)")
                }
                count = c
            case "firstWeekday":
                guard let d = value.int else { throw Self.typeError(key, "an integer", value) }
                guard (1...7).contains(d) else { throw NextRequestError("\"firstWeekday\" must be 1...7 (1 = Sunday), got \(d)") }
                weekRules.firstWeekday = d
            case "minimumDaysInFirstWeek":
                guard let d = value.int else { throw Self.typeError(key, "an integer", value) }
                guard (1...7).contains(d) else { throw NextRequestError("\"minimumDaysInFirstWeek\" must be 1...7, got \(d)") }
                weekRules.minimumDaysInFirstWeek = d
            default:
                throw NextRequestError("unknown key \"\(key)\" (keys: \(Self.requestKeys.joined(separator: ", ")))")
            }
        }
        if members.contains(where: { $0.key == "rrule" }) {
            guard !sawMatch else { throw NextRequestError("give \"match\" or \"rrule\", not both") }
            // The request decoder reads the rule, its DTSTART and its dates (one reader of rules).
            let keys: Set<String> = ["rrule", "dtstart", "exdate", "rdate"]
            recurrence = try Self.recurrence(JSONValue.object(members.filter { keys.contains($0.key) }))
            return
        }
        for key in ["dtstart", "exdate", "rdate"] where members.contains(where: { $0.key == key }) {
            throw NextRequestError("\"\(key)\" goes with \"rrule\"")
        }
        guard sawMatch else { throw NextRequestError("missing key \"match\" (or \"rrule\" with \"dtstart\")") }
    }

    /// The rule of a `trigger.calendar` object holding `rrule`, `dtstart`, `exdate` and `rdate`,
    /// read by the request decoder: `next` (script and human mode) says about a rule and its
    /// dates what `add` says, without the `trigger.calendar.` prefix.
    static func recurrence(_ calendar: JSONValue) throws(NextRequestError) -> RecurrenceSchedule? {
        do throws(RequestError) {
            return try NotificationRequest.calendarTrigger(json: calendar).recurrence
        } catch {
            throw NextRequestError(error.message.replacing("trigger.calendar.", with: ""))
        }
    }

    /// A match with sets as its rule.
    static func schedule(_ sets: ComponentSets) throws(RequestError) -> RecurrenceSchedule {
        do throws(RecurrenceError) {
            let (rule, start) = try sets.rule()
            return try RecurrenceSchedule(rule, start: start)
        } catch {
            throw RequestError(.calendar, "match.\(error.part): \(error.message)")
        }
    }

    static func typeError(_ key: String, _ expected: String, _ got: JSONValue) -> NextRequestError {
        NextRequestError("\"\(key)\" must be \(expected), got \(got.kindDescription)")
    }
}
