import FencepostJSON
import Foundation
import Testing

/// The reminders of the calendar-rules issue, each as people say it, through `fencepost next`
/// (options, --rrule, --jsonl) and `fencepost simulate` across a year with DST in Berlin.
@Suite struct CalendarRuleExamplesTests {
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
        let r = try ChildProcess.run(["simulate", "--requests", file, "--start", "2026-01-01T00:00:00Z", "--end", "2027-01-01T00:00:00Z",
                                      "--tz", "Europe/Berlin", "--jsonl"])
        #expect(r.status == 0, "\(r.stderr)")
        var byID: [String: [String]] = [:]
        for line in r.stdout.split(separator: "\n") {
            let v = try JSONValue.parse(String(line))
            if v["event"]?.string == "delivered" { byID[v["id"]!.string!, default: []].append(v["t"]!.string!) }
        }
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
}
