// `fencepost next`: when does a calendar trigger fire? Human mode answers one question from options;
// script mode (`--jsonl`) answers one JSON request per line of standard input.
import ArgumentParser
import CivilTime
import FencepostJSON
import FencepostLinux

/// Stored properties: one per command-line option (the date components of a calendar trigger
/// and their policies), as swift-argument-parser declares them.
struct NextCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "next",
        abstract: "Show the next fires of a calendar trigger.",
        discussion: """
            Human mode prints one line per fire: local time, zone abbreviation, UTC offset, the \
            instant in UTC, and how long after --after it is.

              fencepost next --tz America/New_York --after 2026-03-08T06:59:00Z \\
                  --hour 2 --minute 30 --count 3

            --json answers the same question as one JSON object:

              fencepost next --tz UTC --after 2026-03-08T06:59:00Z --hour 7 --json
              {"trigger":{"hour":7},"zone":"UTC","after":"2026-03-08T06:59:00Z","policy":"nextTime","repeatedTime":"first","next":["2026-03-08T07:00:00Z"]}

            Script mode (--jsonl) reads one JSON object per line from standard input and writes \
            one JSON line per input line, in order:

              echo '{"after":"2026-03-08T06:59:00Z","match":{"hour":7},"count":2}' |
                  TZ=UTC fencepost next --jsonl
              {"next":["2026-03-08T07:00:00Z","2026-03-09T07:00:00Z"]}

            Keys: match (required; component names as the options, in camelCase: year, month, \
            day, hour, minute, second, weekday, weekdayOrdinal, weekOfMonth, weekOfYear, \
            yearForWeekOfYear, dayOfYear), after (RFC 3339, Z or ±HH:MM, fraction allowed; \
            default now), tz (default the device zone), policy (default nextTime), repeatedTime \
            (default first), count (1...10000, default 1), firstWeekday, minimumDaysInFirstWeek. \
            Answers list UTC instants in whole seconds; fewer than count when no more exist. A \
            line that cannot be answered (not JSON, an unknown key, a wrong type, an unknown \
            zone, a component out of range) gets {"error":"..."} and the run goes on. A blank \
            line is answered {"error":"empty line"}, so answers always pair with lines.

            Exit status: 0 success (also when there is no next fire), 64 usage error, 65 data \
            error (unknown zone, component out of range), 74 I/O error.
            """
    )

    // MARK: Components

    @Option(help: "Year to match.") var year: Int?
    @Option(help: "Month to match, 1-12 (sets: 1,7 or 3-5; repeatable).") var month: [String] = []
    @Option(help: "Day of the month to match, 1-31, or -1 for the last (sets: 1,15,-1; repeatable).") var day: [String] = []
    @Option(help: "Hour to match, 0-23 (sets: 8,12 or 8-18/2; repeatable).") var hour: [String] = []
    @Option(help: "Minute to match, 0-59 (sets: 0,30 or 0-59/15; repeatable).") var minute: [String] = []
    @Option(help: "Second to match, 0-59 (sets as --minute; repeatable).") var second: [String] = []
    @Option(help: "Weekday to match: 1-7 (1 = Sunday) or a name (mon, monday, ...); sets: mon-fri or mon,wed; repeatable.")
    var weekday: [String] = []
    @Option(help: "The n-th such weekday in the month (with --weekday); -1 = the last.") var weekdayOrdinal: [String] = []
    @Option(help: "Week of the month to match.") var weekOfMonth: Int?
    @Option(help: "Week of the year to match.") var weekOfYear: Int?
    @Option(help: "Year of --week-of-year (the week-numbering year).") var yearForWeekOfYear: Int?
    @Option(help: "Day of the year to match, 1-366.") var dayOfYear: Int?

    // MARK: Question

    @Option(help: "IANA time zone of the trigger (default: the device zone, from TZ or /etc/localtime).")
    var tz: String?
    @Option(help: "Fires strictly after this instant: 2026-03-28T00:00:00Z or with a ±HH:MM offset (default: now).")
    var after: InstantArgument?
    @Option(help: "How many fires to show, 1-\(NextRequest.maximumCount).") var count = 1
    @Option(help: "When the local time does not exist: \(MatchingPolicy.allCases.map(\.rawValue).joined(separator: ", ")).")
    var policy = "nextTime"
    @Option(help: "When the local time exists twice: first, last.") var repeatedTime = "first"
    @Option(help: "First day of a week, 1-7 (1 = Sunday).") var firstWeekday: Int?
    @Option(help: "Days of a year's first week that must fall in that year, 1-7.") var minimumDaysInFirstWeek: Int?

    // MARK: Recurrence rule (RFC 5545)

    @Option(help: "An RFC 5545 recurrence rule instead of components: FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7.")
    var rrule: String?
    @Option(help: "The rule's start, local time in the zone: 2026-01-05T07:00:00 (with --rrule).")
    var dtstart: String?
    @Option(help: "A date-time or date (whole day) the rule skips (with --rrule; repeatable).")
    var exdate: [String] = []

    @Flag(help: "Script mode: read one JSON request per line from standard input, answer one JSON line each.")
    var jsonl = false

    @Flag(help: "Answer this one question as one JSON object: {\"trigger\":{…},\"zone\":…,\"after\":…,\"next\":[…]} (--jsonl is for streams of questions).")
    var json = false

    // MARK: Validation (errors here exit 64)

    /// The component options, sets included (a value that is not a number, set or range is a usage error).
    func componentSets() throws -> ComponentSets {
        var sets = ComponentSets()
        for (name, option, texts) in [("month", "--month", month), ("day", "--day", day), ("hour", "--hour", hour),
                                      ("minute", "--minute", minute), ("second", "--second", second),
                                      ("weekday", "--weekday", weekday), ("weekdayOrdinal", "--weekday-ordinal", weekdayOrdinal)] {
            for text in texts {
                guard let values = ComponentSets.parse(name, text) else {
                    throw ValidationError("\(option) \"\(text)\" is not a value, a list (1,15), a range (8-18) or a stepped range (8-18/2)")
                }
                sets.add(name, values)
            }
        }
        for (name, value) in [("year", year), ("weekOfMonth", weekOfMonth), ("weekOfYear", weekOfYear),
                              ("yearForWeekOfYear", yearForWeekOfYear), ("dayOfYear", dayOfYear)] {
            if let value { sets.add(name, [value]) }
        }
        return sets
    }

    var match: CalendarMatch { (try? componentSets())?.match ?? CalendarMatch() }
    var hasComponents: Bool { ((try? componentSets())?.values.isEmpty ?? true) == false }

    func validate() throws {
        if jsonl && json { throw ValidationError("--json answers the options' question; --jsonl reads questions from standard input: give one.") }
        if jsonl {
            guard !hasComponents, rrule == nil, dtstart == nil, exdate.isEmpty, tz == nil, after == nil, count == 1, policy == "nextTime",
                  repeatedTime == "first", firstWeekday == nil, minimumDaysInFirstWeek == nil
            else { throw ValidationError("--jsonl takes its questions from standard input; give no other options.") }
            return
        }
        guard (1...NextRequest.maximumCount).contains(count) else {
            throw ValidationError("--count must be 1...\(NextRequest.maximumCount).")
        }
        guard MatchingPolicy(rawValue: policy) != nil else {
            throw ValidationError("--policy must be one of \(MatchingPolicy.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        guard RepeatedTimePolicy(rawValue: repeatedTime) != nil else {
            throw ValidationError("--repeated-time must be first or last.")
        }
        if let d = firstWeekday, !(1...7).contains(d) { throw ValidationError("--first-weekday must be 1...7.") }
        if let d = minimumDaysInFirstWeek, !(1...7).contains(d) {
            throw ValidationError("--minimum-days-in-first-week must be 1...7.")
        }
        _ = try componentSets()
        if rrule != nil {
            guard !hasComponents else { throw ValidationError("Give --rrule or components (--hour …), not both.") }
            guard dtstart != nil else { throw ValidationError("--rrule needs --dtstart, the rule's local start (2026-01-05T07:00:00).") }
            return
        }
        if dtstart != nil || !exdate.isEmpty { throw ValidationError("--dtstart and --exdate go with --rrule.") }
        guard hasComponents else {
            throw ValidationError("Give at least one component, e.g. --hour 7 --minute 30, or --rrule with --dtstart.")
        }
    }

    // MARK: Run

    func run() throws {
        if jsonl { try runScriptMode() } else { try runHumanMode() }
    }

    func runHumanMode() throws {
        let zones = SystemZones()
        let zone: ZoneRules
        do {
            zone = try tz.map { name throws(ZoneError) in try zones.rules(named: name) }
                ?? zones.deviceZone(tzVariable: SystemZones.environmentTZ())
        } catch {
            throw dataError(tz == nil ? "no device time zone: \(error)" : "\(error)")
        }
        if let recurrence = try recurrenceSchedule() {
            return try runRule(recurrence, zone: zone)
        }
        let match = self.match
        var weekRules = WeekRules.gregorianDefault
        if let d = firstWeekday { weekRules.firstWeekday = d }
        if let d = minimumDaysInFirstWeek { weekRules.minimumDaysInFirstWeek = d }
        let schedule: CalendarSchedule
        do { schedule = try CalendarSchedule(match, weekRules: weekRules) } catch { throw dataError("\(error)") }

        let start = after?.instant ?? SystemClocks.wallNow()
        let policy = MatchingPolicy(rawValue: self.policy)!
        let repeatedTime = RepeatedTimePolicy(rawValue: self.repeatedTime)!
        let fires = NextRequest.fires(
            of: schedule, after: start, in: zone, policy: policy, repeatedTime: repeatedTime, count: count)
        if json {
            let answer: JSONValue = .object([
                ("trigger", .object(match.setComponents.map { ($0.name, JSONValue.integer(Int64($0.value))) })),
                ("zone", .string(zone.identifier)), ("after", .string(start.description)),
                ("policy", .string(policy.rawValue)), ("repeatedTime", .string(repeatedTime.rawValue)),
                ("next", .array(fires.map { JSONValue.string($0.description) })),
            ])
            return print(answer.serialized())
        }
        print(HumanReport.render(
            match: match, zone: zone, after: start, policy: policy, repeatedTime: repeatedTime,
            fires: fires, requested: count))
    }

    /// The rule of --rrule, or of components with sets; nil for an ordinary match.
    func recurrenceSchedule() throws -> RecurrenceSchedule? {
        if let rrule, let dtstart {
            var calendar: [(String, JSONValue)] = [("rrule", .string(rrule)), ("dtstart", .string(dtstart))]
            if !exdate.isEmpty { calendar.append(("exdate", .array(exdate.map { JSONValue.string($0) }))) }
            do throws(NextRequestError) { return try NextRequest.recurrence(.object(calendar)) } catch {
                throw dataError(error.message)
            }
        }
        let sets = try componentSets()
        do throws(RecurrenceError) {
            guard sets.needsRule else { return nil }
            let (rule, start) = try sets.rule()
            return try RecurrenceSchedule(rule, start: start)
        } catch {
            throw dataError("\(error)")
        }
    }

    /// Human and --json answers for a recurrence set; the first line is the rule as understood.
    func runRule(_ recurrence: RecurrenceSchedule, zone: ZoneRules) throws {
        let start = after?.instant ?? SystemClocks.wallNow()
        let fires = NextRequest.fires(of: recurrence, after: start, in: zone, count: count)
        let rule = "RRULE:\(recurrence.rule.text) DTSTART:\(RecurrenceText.basic(recurrence.start))"
            + (recurrence.exclusions.isEmpty ? "" : " EXDATE:" + recurrence.exclusions.texts.joined(separator: ","))
        if json {
            let answer: JSONValue = .object([
                ("rule", .string(rule)), ("zone", .string(zone.identifier)), ("after", .string(start.description)),
                ("next", .array(fires.map { JSONValue.string($0.description) })),
            ])
            return print(answer.serialized())
        }
        var lines = ["   Rule: \(rule)", "   Zone: \(zone.identifier)", "  After: \(HumanReport.local(start, in: zone)) = \(start)"]
        if fires.isEmpty { lines.append("   Next: none: the rule has no instance after \(start)") }
        for (k, fire) in fires.enumerated() {
            let name = fires.count == 1 ? "   Next" : "Next \(k + 1)"
            lines.append("\(name): \(HumanReport.local(fire, in: zone)) = \(fire) (in \(InstantText.duration(fire.secondsSinceEpoch - start.secondsSinceEpoch)))")
        }
        print(lines.joined(separator: "\n"))
    }

    func runScriptMode() throws {
        var handler = NextRequestHandler(zones: SystemZones(), tzVariable: SystemZones.environmentTZ())
        var writer = BufferedWriter(fd: .standardOutput)
        var reader = LineReader(fd: .standardInput)
        var now = SystemClocks.wallNow()
        let overlong = #"{"error":"line longer than \#(reader.splitter.maximumLineLength) bytes"}"# + "\n"
        do {
            try reader.run({ (event) throws(Errno) in
                switch event {
                case .line(let line): handler.handle(line: line, now: now, into: &writer.buffer)
                case .overlong: writer.buffer.append(contentsOf: overlong.utf8)
                }
                try writer.flushIfFull()
            }, afterChunk: { () throws(Errno) in
                try writer.flush()
                now = SystemClocks.wallNow()
            })
        } catch {
            writeErrorLine("fencepost next: \(error)")
            throw ExitCode(74)  // EX_IOERR
        }
    }

    /// Prints `message` to standard error and returns the exit code for a data error (65, EX_DATAERR).
    func dataError(_ message: String) -> ExitCode {
        writeErrorLine("fencepost next: \(message)")
        return ExitCode(65)
    }
}

func writeStandardError(_ text: String) { try? FileDescriptor.standardError.writeAll(text) }

/// `--weekday`: 1…7 (1 = Sunday) or an English weekday name or its first three letters.
struct WeekdayArgument: ExpressibleByArgument, Equatable {
    var value: Int
    init?(argument: String) {
        guard let n = CalendarMatch.weekday(named: argument) else { return nil }
        value = n
    }
    static var defaultCompletionKind: CompletionKind {
        .list(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])
    }
}

/// `--after`: an RFC 3339 timestamp.
struct InstantArgument: ExpressibleByArgument, Equatable {
    var instant: WallInstant
    init?(argument: String) {
        guard case .success(let t) = InstantText.parse(argument.utf8) else { return nil }
        instant = t
    }
}

/// The human-mode report, in the spirit of `systemd-analyze calendar --iterations`.
enum HumanReport {
    static func render(
        match: CalendarMatch, zone: ZoneRules, after: WallInstant, policy: MatchingPolicy,
        repeatedTime: RepeatedTimePolicy, fires: [WallInstant], requested: Int
    ) -> String {
        let width = String(fires.count).count
        let labelWidth = max(7, 5 + width)
        func label(_ text: String) -> String { String(repeating: " ", count: labelWidth - text.count) + text + ": " }
        var lines = [
            label("Trigger") + match.componentsDescription,
            label("Policy") + "\(policy.rawValue), repeated time \(repeatedTime.rawValue)",
            label("Zone") + zone.identifier,
            label("After") + "\(local(after, in: zone)) = \(after)",
        ]
        if fires.isEmpty {
            lines.append(label("Next") + "none: the trigger never fires after \(after)")
            return lines.joined(separator: "\n")
        }
        for (k, fire) in fires.enumerated() {
            let name = fires.count == 1 ? "Next" : "Next \(k + 1)"
            let relative = InstantText.duration(fire.secondsSinceEpoch - after.secondsSinceEpoch)
            lines.append(label(name) + "\(local(fire, in: zone)) = \(fire) (in \(relative))")
        }
        if fires.count < requested {
            lines.append(String(repeating: " ", count: labelWidth + 2) + "no more fires after \(fires.last!)")
        }
        return lines.joined(separator: "\n")
    }

    /// `Sat 2026-03-28 02:30:00 CET +01:00`
    static func local(_ t: WallInstant, in zone: ZoneRules) -> String {
        LocalTimeText.local(t, in: zone, withOffset: true)
    }
}

extension String {
    func replacingFirst(_ a: Character, with b: Character) -> String {
        guard let i = firstIndex(of: a) else { return self }
        var s = self
        s.replaceSubrange(i...i, with: String(b))
        return s
    }
}
