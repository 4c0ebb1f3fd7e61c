import FencepostJSON
import FencepostTestSupport
import Foundation
import Testing

/// The reminders of the calendar-rules issue, each as people say it, through `fencepost next`
/// (options, --rrule, --jsonl), `fencepost add` to a running agent and `fencepost simulate`
/// across a year with DST in Berlin; "not on public holidays" as an iCalendar exclusion calendar
/// (Tests/Calendars, see its README).
@Suite(.processes) struct CalendarRuleExamplesTests {
    static let calendars = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Calendars")
    static func calendar(_ name: String) -> String { calendars.appendingPathComponent(name).path }

    /// The issue's four reminders and the holiday calendar as request lines.
    static var examples: String {
        """
        {"id":"check","content":{"title":"Vehicle check"},"except_ics":"\(calendar("berlin-holidays.ics"))","trigger":{"calendar":{"rrule":"FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=0","dtstart":"2026-01-05T07:00:00","tz":"Europe/Berlin"}}}
        {"id":"mileage","content":{"title":"Log the mileage"},"trigger":{"calendar":{"match":{"day":-1,"hour":18},"tz":"Europe/Berlin","repeats":true}}}
        {"id":"tyres","content":{"title":"Tyre check"},"trigger":{"calendar":{"match":{"weekday":"fri","weekdayOrdinal":-1,"hour":9},"tz":"Europe/Berlin","repeats":true}}}
        {"id":"break","content":{"title":"Take a break"},"trigger":{"calendar":{"match":{"hour":"8-18/2"},"tz":"Europe/Berlin","repeats":true}}}

        """
    }
    func fires(_ out: String) throws -> [String] {
        let v = try JSONValue.parse(out.trimmingCharacters(in: .whitespacesAndNewlines))
        guard case .array(let a)? = v["next"] else { return [] }
        return a.compactMap { $0.string }
    }

    /// "every weekday at 07:00, vehicle check": --weekday mon-fri and the RRULE agree.
    @Test func everyWeekdayAtSeven() throws {
        let sugar = try ChildProcess.run(["next", "--tz", "Europe/Berlin", "--after", "2026-03-27T00:00:00Z", "--weekday", "mon-fri",
                                          "--hour", "7", "--count", "4", "--json"])
        #expect(sugar.status == 0, "\(sugar.stderr)")
        // Fri 27 Mar CET, then Mon 30 Mar … in CEST (the clocks went forward on the 29th).
        #expect(try fires(sugar.stdout) == ["2026-03-27T06:00:00Z", "2026-03-30T05:00:00Z", "2026-03-31T05:00:00Z", "2026-04-01T05:00:00Z"])
        #expect(sugar.stdout.contains("FREQ=DAILY;BYMINUTE=0;BYSECOND=0;BYHOUR=7;BYDAY=MO,TU,WE,TH,FR") || sugar.stdout.contains("BYDAY=MO,TU,WE,TH,FR"), "\(sugar.stdout)")
        let rule = try ChildProcess.run(["next", "--tz", "Europe/Berlin", "--after", "2026-03-27T00:00:00Z",
                                         "--rrule", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=0", "--dtstart", "2026-01-05T07:00:00",
                                         "--count", "4", "--json"])
        #expect(rule.status == 0, "\(rule.stderr)")
        #expect(try fires(rule.stdout) == fires(sugar.stdout))
        // Repeating the option adds to the list.
        let repeated = try ChildProcess.run(["next", "--tz", "Europe/Berlin", "--after", "2026-03-27T00:00:00Z", "--weekday", "mon", "--weekday", "fri",
                                             "--hour", "7", "--count", "2", "--json"])
        #expect(try fires(repeated.stdout) == ["2026-03-27T06:00:00Z", "2026-03-30T05:00:00Z"], "\(repeated.stdout)\(repeated.stderr)")
    }

    /// "the last day of the month, log the mileage" and "the last Friday, tyre check".
    @Test func lastDayAndLastFriday() throws {
        let last = try ChildProcess.run(["next", "--tz", "UTC", "--after", "2026-01-01T00:00:00Z", "--day", "-1", "--hour", "18", "--count", "3", "--json"])
        #expect(last.status == 0, "\(last.stderr)")
        #expect(try fires(last.stdout) == ["2026-01-31T18:00:00Z", "2026-02-28T18:00:00Z", "2026-03-31T18:00:00Z"])
        let friday = try ChildProcess.run(["next", "--tz", "UTC", "--after", "2026-01-01T00:00:00Z", "--weekday", "fri", "--weekday-ordinal", "-1",
                                           "--hour", "9", "--count", "3", "--json"])
        #expect(friday.status == 0, "\(friday.stderr)")
        #expect(try fires(friday.stdout) == ["2026-01-30T09:00:00Z", "2026-02-27T09:00:00Z", "2026-03-27T09:00:00Z"])
        #expect(friday.stdout.contains("BYDAY=-1FR"), "\(friday.stdout)")
    }

    /// "every 2 hours from 08:00 to 18:00, take a break": six fires a day; the human mode prints the rule.
    @Test func everyTwoHoursFromEightToSix() throws {
        let r = try ChildProcess.run(["next", "--tz", "UTC", "--after", "2026-01-05T00:00:00Z", "--hour", "8-18/2", "--count", "7"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("BYHOUR=8,10,12,14,16,18"), "\(r.stdout)")
        #expect(r.stdout.contains("2026-01-05T18:00:00Z"))
        #expect(r.stdout.contains("2026-01-06T08:00:00Z"))
        #expect(!r.stdout.contains("2026-01-05T20:00:00Z"))
    }

    /// Script mode takes rrule, dtstart and exdate in place of match; errors name the RFC part.
    @Test func scriptModeRules() throws {
        let input = """
            {"after":"2026-12-20T00:00:00Z","tz":"Europe/Berlin","rrule":"FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=0","dtstart":"2026-01-05T07:00:00","exdate":["2026-12-24","2026-12-25"],"count":3}
            {"rrule":"FREQ=SECONDLY","dtstart":"2026-01-05T07:00:00"}
            {"rrule":"FREQ=DAILY;BYSETPOS=1","dtstart":"2026-01-05T07:00:00"}
            {"rrule":"FREQ=DAILY;UNTIL=20250101T000000","dtstart":"2026-01-05T07:00:00"}
            {"rrule":"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30","dtstart":"2026-01-05T07:00:00"}
            """
        let r = try ChildProcess.run(["next", "--jsonl"], input: input + "\n", environment: ["TZ": "UTC"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        // Mon 21, Tue 22, Wed 23; 24 and 25 are excluded, so the third is the 28th.
        #expect(lines[0] == #"{"next":["2026-12-21T06:00:00Z","2026-12-22T06:00:00Z","2026-12-23T06:00:00Z"]}"#, "\(lines[0])")
        #expect(lines[1].contains("FREQ") && lines[1].contains("SECONDLY"), "\(lines[1])")
        #expect(lines[2].contains("BYSETPOS"), "\(lines[2])")
        #expect(lines[3].contains("UNTIL") && lines[3].contains("before DTSTART"), "\(lines[3])")
        #expect(lines[4].contains("no instance in the 400 years"), "\(lines[4])")
    }

    /// `fencepost simulate` of the requests in `file` over 2026 in Europe/Berlin: the UTC times
    /// of the deliveries by request id, and what it wrote to standard error (it must exit 0).
    static func simulate2026InBerlin(_ file: String, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> (byID: [String: [String]], stderr: String) {
        let r = try ChildProcess.run(["simulate", "--requests", file, "--start", "2026-01-01T00:00:00Z", "--end", "2027-01-01T00:00:00Z",
                                      "--tz", "Europe/Berlin", "--jsonl"])
        #expect(r.status == 0, "\(r.stderr)", sourceLocation: sourceLocation)
        var byID: [String: [String]] = [:]
        for line in r.stdout.split(separator: "\n") {
            let v = try JSONValue.parse(String(line))
            if v["event"]?.string == "delivered" { byID[v["id"]!.string!, default: []].append(v["t"]!.string!) }
        }
        return (byID, r.stderr)
    }

    /// A year in Berlin through the engine: the weekday check, the last-day log, the last-Friday
    /// tyre check and the two-hourly break, with Christmas excluded.
    @Test func aYearThroughSimulate() throws {
        let folder = try ReplayTests.Folder()
        let requests = """
            {"id":"check","trigger":{"calendar":{"rrule":"FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=0","dtstart":"2026-01-05T07:00:00","tz":"Europe/Berlin","exdate":["2026-12-24","2026-12-25"]}}}
            {"id":"mileage","trigger":{"calendar":{"match":{"day":-1,"hour":18},"tz":"Europe/Berlin","repeats":true}}}
            {"id":"tyres","trigger":{"calendar":{"match":{"weekday":"fri","weekdayOrdinal":-1,"hour":9},"tz":"Europe/Berlin","repeats":true}}}
            {"id":"break","trigger":{"calendar":{"match":{"hour":"8-18/2"},"tz":"Europe/Berlin","repeats":true}}}
            """
        let file = try folder.write("r.jsonl", requests)
        let (byID, _) = try Self.simulate2026InBerlin(file)
        // 2026 has 261 weekdays from Jan 5 (Jan 1–2 are before DTSTART: 259), less the two excluded.
        #expect(byID["check"]?.count == 259 - 2, "\(byID["check"]?.count ?? 0)")
        #expect(byID["check"]?.contains("2026-03-27T06:00:00Z") == true)   // CET
        #expect(byID["check"]?.contains("2026-03-30T05:00:00Z") == true)   // CEST
        #expect(byID["check"]?.contains("2026-10-26T06:00:00Z") == true)   // CET again
        #expect(byID["check"]?.contains { $0.hasPrefix("2026-12-24") || $0.hasPrefix("2026-12-25") } == false)
        #expect(byID["mileage"]?.count == 12)
        #expect(byID["mileage"]?.first == "2026-01-31T17:00:00Z")
        #expect(byID["mileage"]?.contains("2026-02-28T17:00:00Z") == true)
        #expect(byID["tyres"]?.count == 12)
        #expect(byID["tyres"]?.contains("2026-10-30T08:00:00Z") == true)
        #expect(byID["break"]?.count == 365 * 6)
    }

    /// "Not on public holidays": the weekday check with the Berlin holidays as an exclusion
    /// calendar, a year through `simulate`; the depot's Google export as requests.
    @Test func holidaysAndICSThroughSimulate() throws {
        let folder = try ReplayTests.Folder()
        let file = try folder.write("r.jsonl", Self.examples + #"{"id":"depot","ics":"\#(Self.calendar("depot-google.ics"))","except_ics":"\#(Self.calendar("berlin-holidays.ics"))"}"# + "\n")
        let (byID, stderr) = try Self.simulate2026InBerlin(file)
        // 259 weekdays from 5 January; Good Friday, Easter Monday, 1 May, Ascension, Whit Monday
        // and Christmas Day fall on weekdays (New Year's Day is before DTSTART).
        #expect(byID["check"]?.count == 259 - 6, "\(byID["check"]?.count ?? 0)")
        for holiday in ["2026-04-03", "2026-04-06", "2026-05-01", "2026-05-14", "2026-05-25", "2026-12-25"] {
            #expect(byID["check"]?.contains { $0.hasPrefix(holiday) } == false, "\(holiday)")
        }
        #expect(byID["check"]?.contains("2026-04-02T05:00:00Z") == true && byID["check"]?.contains("2026-04-07T05:00:00Z") == true)
        #expect(byID["mileage"]?.count == 12 && byID["tyres"]?.count == 12 && byID["break"]?.count == 365 * 6)
        // depot-1: the Google weekday series less its two EXDATEs, the moved 6 March and the holidays.
        #expect(byID["depot-1"]?.count == 259 - 2 - 1 - 6, "\(byID["depot-1"]?.count ?? 0)")
        #expect(byID["depot-2"] == ["2026-03-06T08:30:00Z"], "\(byID["depot-2"] ?? [])")   // the edited instance, 09:30 CET
        // The last Friday at 09:00; 25 December 2026 is the last Friday and a holiday.
        #expect(byID["depot-3"]?.count == 11 && byID["depot-3"]?.contains("2026-10-30T08:00:00Z") == true && byID["depot-3"]?.last == "2026-11-27T08:00:00Z")
        #expect(byID["depot-4"] == ["2026-03-31T16:00:00Z"])   // the UTC one-off
        #expect(stderr.contains("DTEND") && stderr.contains("VALARM"), "\(stderr)")
    }

    /// The days `berlin-holidays.ics` excludes, as `YYYY-MM-DD`, read by the test itself rather
    /// than by the reader under test: each all-day VEVENT's days from DTSTART to DTEND exclusive,
    /// and the file's one yearly series (25 December, see Tests/Calendars/README.md) for each year
    /// to two years after `instant`.
    static func holidayDates(through instant: Date) throws -> [String] {
        let text = String(decoding: try Data(contentsOf: calendars.appendingPathComponent("berlin-holidays.ics")), as: UTF8.self)
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n ", with: "")
            .split(separator: "\n").map(String.init)
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let day = DateFormatter()
        day.calendar = utc; day.timeZone = utc.timeZone; day.locale = Locale(identifier: "en_US_POSIX")
        day.dateFormat = "yyyyMMdd"
        let lastYear = utc.component(.year, from: instant) + 2
        var dates: [String] = []
        var start: Date?, end: Date?, rule: String?
        for line in lines {
            if line == "BEGIN:VEVENT" { start = nil; end = nil; rule = nil }
            else if line.hasPrefix("DTSTART;VALUE=DATE:") { start = day.date(from: String(line.dropFirst(19))) }
            else if line.hasPrefix("DTEND;VALUE=DATE:") { end = day.date(from: String(line.dropFirst(17))) }
            else if line.hasPrefix("RRULE:") { rule = String(line.dropFirst(6)) }
            else if line == "END:VEVENT" {
                let first = try #require(start, "an all-day DTSTART"), last = try #require(end, "an all-day DTEND")
                var firsts = [first]
                if let rule {
                    try #require(rule == "FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=25", "the file's one yearly series: \(rule)")
                    let year = utc.component(.year, from: first)
                    firsts = (year...max(year, lastYear)).map { utc.date(byAdding: .year, value: $0 - year, to: first)! }
                }
                let length = utc.dateComponents([.day], from: first, to: last).day!
                for f in firsts {
                    for k in 0..<length { dates.append(day.string(from: utc.date(byAdding: .day, value: k, to: f)!)) }
                }
            }
        }
        return dates.map { "\($0.prefix(4))-\($0.dropFirst(4).prefix(2))-\($0.suffix(2))" }.sorted()
    }

    /// `fencepost add` to a running agent (a real child process and its socket): the four
    /// reminders and the depot's calendar; each pending next fire is the one `next` computes.
    @Test func addToARunningAgent() throws {
        let d = try AgentProcess()
        try d.writeConfig("")
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let before = Date()
        var out = try d.cli(["add", "-"], input: Self.examples)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("added check, mileage, tyres, break"), "\(out.stdout)")
        out = try d.cli(["add", "--ics", Self.calendar("depot-google.ics"), "--except-ics", Self.calendar("berlin-holidays.ics"), "--id", "depot"])
        #expect(out.status == 0, "\(out.stderr)")
        // The edited 6 March instance and the 31 March one-off are over: named, not added.
        #expect(out.stdout.contains("added depot-1, depot-3"), "\(out.stdout)")
        #expect(out.stderr.contains("LOCATION") && out.stderr.contains("VALARM"), "\(out.stderr)")
        #expect(out.stderr.contains("\"Kilometerstand melden\": over before"), "\(out.stderr)")
        let status = try JSONValue.parse(try d.cli(["status", "--json"]).stdout)
        let after = Date()
        var pending: [String: String] = [:]
        for p in status["pending"]?.array ?? [] { if let id = p["id"]?.string, let n = p["nextFire"]?.string { pending[id] = n } }
        // The same triggers through `next --jsonl`, after the instants before and after the adds.
        func iso(_ d: Date) -> String { ISO8601DateFormatter().string(from: d) }
        // The requests added with --except-ics skip the holidays; their `next` gets them as EXDATEs,
        // read from the file by holidayDates (the pending fire moves with the wall clock, and the
        // last Friday of a month can be 25 December).
        let holidays = "[" + (try Self.holidayDates(through: after).map { "\"\($0)\"" }.joined(separator: ",")) + "]"
        let triggers: [(String, String)] = [
            ("check", #""rrule":"FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=0","dtstart":"2026-01-05T07:00:00","tz":"Europe/Berlin","exdate":\#(holidays)"#),
            ("mileage", #""match":{"day":-1,"hour":18},"tz":"Europe/Berlin""#),
            ("tyres", #""match":{"weekday":"fri","weekdayOrdinal":-1,"hour":9},"tz":"Europe/Berlin""#),
            ("break", #""match":{"hour":"8-18/2"},"tz":"Europe/Berlin""#),
            ("depot-3", #""rrule":"FREQ=MONTHLY;BYDAY=-1FR","dtstart":"2026-01-30T09:00:00","tz":"Europe/Berlin","exdate":\#(holidays)"#),
        ]
        for (id, trigger) in triggers {
            let input = [before, after].map { #"{"after":"\#(iso($0))",\#(trigger)}"# }.joined(separator: "\n") + "\n"
            let n = try ChildProcess.run(["next", "--jsonl"], input: input)
            let answers = try n.stdout.split(separator: "\n").map { try fires(String($0)).first }
            #expect(answers.contains(pending[id]), "\(id): pending \(pending[id] ?? "none"), next \(answers) \(n.stderr)")
        }
        // Outlook's Windows zone name is refused, and nothing is added.
        out = try d.cli(["add", "--ics", Self.calendar("shifts-outlook.ics")])
        #expect(out.status == 65 && out.stderr.contains("W. Europe Standard Time") && out.stderr.contains("not supported"), "\(out.stderr)")
    }

    /// A config's `[[request]] ics = …` and `except_ics = …` (relative to the config's folder),
    /// read by the agent's own config reader through `check-config`.
    @Test func configICSKeys() throws {
        let folder = try ReplayTests.Folder()
        for name in ["depot-google.ics", "berlin-holidays.ics", "shifts-outlook.ics"] {
            _ = try folder.write(name, String(decoding: try Data(contentsOf: Self.calendars.appendingPathComponent(name)), as: UTF8.self))
        }
        let good = try folder.write("good.toml", """
            [[request]]
            id = "depot"
            ics = "depot-google.ics"
            except_ics = "berlin-holidays.ics"
            content = { sound = "chime" }

            [[request]]
            id = "check"
            except_ics = "berlin-holidays.ics"
            trigger = { calendar = { match = { weekday = "mon-fri", hour = 7 }, tz = "Europe/Berlin", repeats = true } }

            """)
        var r = try ChildProcess.run(["check-config", good])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("LOCATION"), "\(r.stderr)")
        let bad = try folder.write("bad.toml", "\n[[request]]\nid = \"shifts\"\nics = \"shifts-outlook.ics\"\n")
        r = try ChildProcess.run(["check-config", bad])
        #expect(r.status == 78, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains(":4:") && r.stderr.contains("W. Europe Standard Time") && r.stderr.contains("not supported"), "\(r.stderr)")
    }

    /// A rule's DTSTART and EXDATE are read once, by the request decoder: `next --rrule` (and its
    /// script mode) refuses a bad one with the words `add` uses, less the `trigger.calendar.`
    /// prefix. `add` checks requests before it connects, so no agent is needed.
    @Test(arguments: [("2026-01-05T07:00:00Z", "2026-12-24"), ("2026-01-05T07:00:00", "Christmas")])
    func aBadRuleDateGetsOneMessageThroughNextAndAdd(_ dtstart: String, _ exdate: String) throws {
        let rule = "FREQ=DAILY;BYHOUR=7"
        let add = try ChildProcess.run(["add", "-", "--socket", "/nonexistent/fencepost.sock"], input: """
            {"id":"r","content":{"title":"T"},"trigger":{"calendar":{"rrule":"\(rule)","dtstart":"\(dtstart)","exdate":["\(exdate)"]}}}
            """)
        #expect(add.status == 65, "\(add.stderr)")
        let said = try #require(add.stderr.range(of: "trigger.calendar.").map { String(add.stderr[$0.upperBound...]) }, "\(add.stderr)")
        let message = try #require(said.components(separatedBy: " [rule:").first?.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(message.contains(dtstart.hasSuffix("Z") ? dtstart : exdate), "\(add.stderr)")
        let next = try ChildProcess.run(["next", "--tz", "UTC", "--rrule", rule, "--dtstart", dtstart, "--exdate", exdate])
        #expect(next.status == 65, "\(next.stderr)")
        #expect(next.stderr == "fencepost next: \(message)\n", "add said: \(add.stderr)")
        let script = try ChildProcess.run(["next", "--jsonl"], input: """
            {"tz":"UTC","rrule":"\(rule)","dtstart":"\(dtstart)","exdate":["\(exdate)"]}
            """)
        #expect(script.stdout == JSONValue.object([("error", .string(message))]).serialized() + "\n", "add said: \(add.stderr)")
    }
}
