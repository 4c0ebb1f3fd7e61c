// `fencepost add FILE|-`: add requests to the running agent.
import ArgumentParser
import CivilTime
import FencepostAgent
import FencepostJSON
import FencepostLinux
import LocalNotifications

struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add notification requests to the agent (a request with the same id is replaced).",
        discussion: """
            FILE holds one JSON request (it may span lines), a JSON array of requests, or JSON \
            lines (one request a line; blank lines and # comments are skipped). - reads standard \
            input.

            Every request is checked here first against the rules that need nothing of the \
            agent's (id, title and body sizes, intervals, calendar fields): one broken rule and \
            nothing is sent. Then the requests go to the agent in messages of at most 100 \
            requests and at most its message size ([socket] max_message_bytes, 64 KiB unless \
            configured). Each message is all or nothing: when the agent refuses a request (an \
            unknown category or time zone, a match that never fires, a radius over its \
            max_radius), none of that message's requests is added, the messages before it stay \
            added and the error says up to which line. Up to 100 requests are all or nothing.

              echo '{"id":"water","content":{"title":"Drink"},"trigger":{"interval":{"seconds":3600,"repeats":true}}}' \\
                  | fencepost add -

            The keys of a request (the same in a config file's [[request]] tables, in TOML):

              id                 up to 64 bytes; the same id replaces the request
              content            title, body, sound (a pattern: default, chime, double, alarm, \
            none, or one of [patterns]), badge, userInfo, categoryIdentifier, threadIdentifier, \
            interruptionLevel (passive, active, timeSensitive, critical)
              trigger.calendar   match (year, month, day, hour, minute, second, weekday (1-7 or \
            "mon"…), weekdayOrdinal, weekOfMonth, weekOfYear, yearForWeekOfYear, dayOfYear), tz \
            (IANA name; none: the device zone), repeats, policy (nextTime, strict, \
            previousTimePreservingSmallerComponents, nextTimePreservingSmallerComponents), \
            repeatedTime (first, last), firstWeekday, minimumDaysInFirstWeek; a match value may \
            be a set ("mon-fri", "8-18/2", [8, 12], a day -1 from the end); or instead of match an \
            RFC 5545 rule: rrule, dtstart (local), exdate, rdate (docs/protocol.md, Requests)
              trigger.interval   seconds (at least 60 when repeating), repeats
              trigger.location   region (circle = {lat, lon, radius} in metres, polygon = \
            [[lat, lon], …], or parts = [[outer ring, holes…], …]), notifyOnEntry, notifyOnExit, repeats, dwell (seconds inside before it \
            reports: a dwell zone reports "dwell" instead of "enter"), cooldown (seconds)
              missed             "coalesce" (default), "skip" or {"late": SECONDS}

            iCalendar (RFC 5545) files: --ics FILE adds each VEVENT of FILE as a request (ids \
            ID-1, ID-2, … with --id ID, default the file's name; ID alone for one event): \
            SUMMARY is the title, DESCRIPTION the body, DTSTART (TZID an IANA zone; UTC …Z; \
            VALUE=DATE: 00:00 of the day) with RRULE, EXDATE and RDATE the calendar trigger; an \
            edited instance (RECURRENCE-ID) replaces its instance. What is not used (DTEND, \
            LOCATION, VALARM, …) is named on standard error. --except-ics FILE skips the days of \
            an exclusion calendar (all-day VEVENTs, e.g. public holidays) in every calendar \
            trigger added. The same in a request: "ics": "FILE" in place of the trigger, \
            "except_ics": "FILE" beside it (config files: relative to the config's folder).

              fencepost add --ics shifts.ics --except-ics holidays.ics

            Scripts may also send requests to the control socket themselves (JSON-RPC 2.0, \
            method "add"): docs/protocol.md has every method, its answer and its errors.
            """)

    @Argument(help: ArgumentHelp("The requests (JSON or JSON lines); - for standard input.", valueName: "file"))
    var file: String?

    @Option(name: .customLong("ics"), help: ArgumentHelp("An iCalendar file: each VEVENT a request.", valueName: "file"))
    var ics: String?

    @Option(name: .customLong("except-ics"), help: ArgumentHelp("An exclusion calendar (all-day events): its days are skipped by every calendar trigger added.", valueName: "file"))
    var exceptICS: String?

    @Option(help: ArgumentHelp("With --ics: the requests' id (ID-1, ID-2, …; default the file's name).", valueName: "id"))
    var id: String?

    @Flag(help: "Print the agent's answer as JSON.")
    var json = false

    @OptionGroup var options: SocketOptions

    /// Requests per message: a file of hundreds in a few round trips, and one message's work in
    /// the agent (each request checked and scheduled, on a copy of its engine) a short loop turn.
    static let batchRequests = 100

    func run() throws {
        try runClient("add") { () throws(ClientFailure) in
            var items: [NumberedJSON] = []
            var path = file ?? ics ?? "-"
            if let file { items = try ClientInput.jsonValues(try ClientInput.read(file), path: file) }
            if let ics {
                let stem = ics.split(separator: "/").last.map { String($0.split(separator: ".").first ?? $0) } ?? "ics"
                items.append(NumberedJSON(line: 1, value: .object([("id", .string(id ?? stem)), ("ics", .string(ics))])))
                if file == nil { path = ics }
            } else if id != nil {
                throw ClientFailure(64, "--id goes with --ics")
            }
            guard file != nil || ics != nil else { throw ClientFailure(64, "give a file of requests, - (standard input), or --ics FILE") }
            items = try Self.resolveCalendars(items, exceptICS: exceptICS, path: path)
            guard !items.isEmpty else { throw ClientFailure(ClientFailure.dataError, "\(ClientInput.name(path)): no request") }
            try ClientInput.checkRequests(items, path: path)
            let result = try Self.send(items, socket: options.path, path: path)
            if json { return try printJSON(result) }
            let shown = ClientText.printable(result)
            var text = "added \(ClientText.ids(shown["added"]).joined(separator: ", "))\n"
            for e in shown["evicted"]?.array ?? [] {
                text += "evicted \(e["id"]?.string ?? "?"): \(e["detail"]?.string ?? "")\n"
            }
            try writeStandardOutput(text)
        }
    }

    /// The `ics` / `except_ics` keys of the requests (and --except-ics for all) resolved by the
    /// agent config's own reader (``ClientCalendars``): one request per VEVENT; what the files
    /// hold that no request uses is said on standard error.
    static func resolveCalendars(_ items: [NumberedJSON], exceptICS: String?, path: String) throws(ClientFailure) -> [NumberedJSON] {
        var out: [NumberedJSON] = []
        for item in items {
            var value = item.value
            if let exceptICS, case .object(var members) = value {
                if members.contains(where: { $0.key == "except_ics" }) {
                    throw ClientFailure(ClientFailure.dataError, "\(ClientInput.name(path)):\(item.line): the request has except_ics and --except-ics is given: give one")
                }
                members.append(("except_ics", .string(exceptICS)))
                value = .object(members)
            }
            do throws(ICalendarKeyError) {
                let resolved = try ClientCalendars.resolve(value, after: SystemClocks.wallNow())
                for note in resolved.notes { writeStandardError("fencepost add: \(note)\n") }
                for r in resolved.requests { out.append(NumberedJSON(line: item.line, value: r)) }
            } catch {
                throw ClientFailure(ClientFailure.dataError, "\(ClientInput.name(path)):\(item.line): \(error)")
            }
        }
        return out
    }

    /// Sends `items` in batches (``ControlBatches``) and returns the answers joined:
    /// `{"added":[…],"evicted":[…]}`. A failure names the file's line and, when earlier messages
    /// were added, up to which line that is.
    static func send(_ items: [NumberedJSON], socket: String, path: String) throws(ClientFailure) -> JSONValue {
        func params(_ list: [JSONValue]) -> JSONValue { .object([("requests", .array(list))]) }
        var batches = ControlBatches(method: "add", items: items.map(\.value), maximumCount: batchRequests, params: params)
        var added: [JSONValue] = [], evicted: [JSONValue] = []
        var start = 0
        while start < items.count {
            let range = batches.next(from: start)
            let answer: JSONValue
            do throws(ClientFailure) {
                answer = try ControlClient.call(socket, "add", params(items[range].map(\.value)))
            } catch {
                if let limit = error.messageLimit {
                    // Refused unread: cut again, or, for one request, the rule it breaks.
                    guard range.count == 1 else { batches.refused(range, agentLimit: limit); continue }
                    throw ClientFailure(ClientFailure.dataError, "\(ClientInput.name(path)):\(items[start].line): the request alone makes a message of \(batches.messageBytes(of: range)) bytes; the agent takes messages of at most \(limit) bytes (its [socket] max_message_bytes)" + sentBefore(start, items))
                }
                var located = ClientInput.locate(error, ["requests": items[range].map(\.line)], path: path)
                located.message += sentBefore(start, items)
                throw located
            }
            added += answer["added"]?.array ?? []
            evicted += answer["evicted"]?.array ?? []
            start = range.upperBound
        }
        return .object([("added", .array(added)), ("evicted", .array(evicted))])
    }

    /// What stays added when the message from `start` on failed: nothing to say for the first.
    static func sentBefore(_ start: Int, _ items: [NumberedJSON]) -> String {
        guard start > 0 else { return "" }
        return "; the \(start) requests before line \(items[start].line) were added, this one and those after it were not"
    }
}

/// The `ics` / `except_ics` keys of a request read by the CLI (`add`, `simulate`): files relative
/// to the current directory, zones from the system's TZif files; the reader is the agent
/// config's (``ICalendar/resolve(_:read:isZone:)``).
enum ClientCalendars {
    /// - Parameter after: events over by then are left out (``ICalendar/requests(_:idPrefix:defaults:after:isZone:)``).
    static func resolve(_ request: JSONValue, after: WallInstant? = nil) throws(ICalendarKeyError) -> ICalendarRequests {
        try ICalendar.resolve(request, read: InputFiles.readCalendar(at:), after: after, isZone: InputFiles.isZone)
    }
}
