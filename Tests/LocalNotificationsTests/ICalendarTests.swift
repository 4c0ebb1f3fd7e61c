import CivilTime
import FencepostJSON
import FencepostLinux
import Foundation
import LocalNotifications
import Testing

/// The iCalendar reader (`ICalendar`) on the files of Tests/Calendars (see its README: written in
/// Google's and Outlook's export shapes) and on broken input.
@Suite struct ICalendarTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Calendars")
    static func text(_ name: String) throws -> String {
        String(decoding: try Data(contentsOf: folder.appendingPathComponent(name)), as: UTF8.self)
    }
    static func isZone(_ name: String) -> Bool { (try? SystemZones().rules(named: name)) != nil }
    static func requests(_ text: String, id: String = "depot") throws(ICalendarError) -> ICalendarRequests {
        try ICalendar.requests(text, idPrefix: id, isZone: isZone)
    }
    static func calendar(_ r: JSONValue) -> JSONValue? { r["trigger"]?["calendar"] }

    /// RFC 5545 §3.1: a line break followed by a space or a tab continues the line (CRLF or LF);
    /// §3.3.11: \n \, \; \\ in TEXT.
    @Test func foldingAndEscapes() throws {
        let lines = try ICalendar.contentLines("BEGIN:VCALENDAR\r\nSUMMARY;LANGUAGE=de:Reifen\\, Lic\r\n ht\\; Öl\r\n\tstand\\nprüfen\\\\\nX-A;P=\"a;b:c\",d:v:w\nEND:VCALENDAR")
        #expect(lines.map(\.name) == ["BEGIN", "SUMMARY", "X-A", "END"])
        #expect(lines[1].line == 2 && lines[2].line == 5)
        #expect(lines[1].parameter("LANGUAGE") == "de")
        #expect(ICalendar.unescape(lines[1].value) == "Reifen, Licht; Ölstand\nprüfen\\")
        #expect(lines[2].parameter("P") == "a;b:c,d" && lines[2].value == "v:w")
    }

    /// A Google export: each VEVENT a request; TZID an IANA name; EXDATE lists; an edited
    /// instance; a UTC event; what is not used is named.
    @Test func googleExport() throws {
        let r = try Self.requests(try Self.text("depot-google.ics"))
        #expect(r.requests.count == 4, "\(r.requests)")
        let check = try #require(r.requests.first)
        #expect(check["id"]?.string == "depot-1")
        #expect(check["content"]?["title"]?.string == "Fahrzeugcheck")
        #expect(check["content"]?["body"]?.string == "Reifen, Licht, Ölstand prüfen.\nBei Mängeln: Werkstatt anrufen (Durchwahl 12).")
        let c = try #require(Self.calendar(check))
        #expect(c["rrule"]?.string == "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR")
        #expect(c["dtstart"]?.string == "2026-01-05T07:00:00" && c["tz"]?.string == "Europe/Berlin")
        #expect(c["exdate"]?.array?.compactMap(\.string) == ["2026-12-24T07:00:00", "2026-12-31T07:00:00", "2026-03-06T07:00:00"])
        // The edited instance is its own one-off request at its new time.
        let moved = try #require(r.requests.first { $0["content"]?["title"]?.string == "Fahrzeugcheck (später: Inventur)" })
        #expect(Self.calendar(moved)?["rrule"]?.string == "FREQ=DAILY;COUNT=1")
        #expect(Self.calendar(moved)?["dtstart"]?.string == "2026-03-06T09:30:00")
        let utc = try #require(r.requests.first { $0["content"]?["title"]?.string == "Kilometerstand melden" })
        #expect(Self.calendar(utc)?["tz"]?.string == "UTC" && Self.calendar(utc)?["dtstart"]?.string == "2026-03-31T16:00:00")
        #expect(r.notes.contains { $0.contains("\"Fahrzeugcheck\"") && $0.contains("DTEND") && $0.contains("LOCATION") && $0.contains("VALARM") }, "\(r.notes)")
        // Every request is one the control socket takes, and fires where the calendar says.
        let berlin = try SystemZones().rules(named: "Europe/Berlin")
        for json in r.requests {
            let request = try NotificationRequest(json: json)
            guard case .calendar(let t) = request.trigger, let s = t.recurrence else { Issue.record("\(json)"); continue }
            if request.identifier == "depot-1" {
                // Thu 5 March 07:00 CET, Fri 6 March moved away, Mon 9 March.
                let thu = try #require(s.nextDate(after: WallInstant(secondsSinceEpoch: 1_772_668_800), in: berlin))   // 2026-03-05T00:00Z
                #expect(thu.secondsSinceEpoch == 1_772_690_400)   // 2026-03-05T06:00:00Z
                let next = try #require(s.nextDate(after: thu, in: berlin))
                #expect(next.secondsSinceEpoch == 1_773_036_000)  // 2026-03-09T06:00:00Z
            }
        }
    }

    /// Outlook's VTIMEZONE with a Windows name is refused, saying so, at the line that uses it.
    @Test func outlookWindowsZoneIsRefused() throws {
        let text = try Self.text("shifts-outlook.ics")
        do throws(ICalendarError) {
            _ = try Self.requests(text)
            Issue.record("accepted")
        } catch {
            #expect(error.line == 27, "\(error)")
            #expect(error.message.contains("W. Europe Standard Time") && error.message.contains("VTIMEZONE") && error.message.contains("not supported"), "\(error)")
        }
    }

    /// An exclusion calendar: every day of its all-day events, a yearly series expanded.
    @Test func holidayCalendarDays() throws {
        let days = try ICalendar.exclusionDays(try Self.text("berlin-holidays.ics"))
        for d in ["2026-01-01", "2026-04-03", "2026-04-06", "2026-05-14", "2026-12-25", "2026-12-26", "2027-03-26", "2030-12-25", "2200-12-25"] {
            #expect(days.contains(d), "\(d)")
        }
        #expect(!days.contains("2026-12-24") && !days.contains("2026-04-05"))
        #expect(days.count == 18 + (2200 - 2025 + 1), "\(days.count)")
    }

    /// `except_ics` beside a rule: the holidays are skipped (through the request decoder).
    @Test func exceptICSAddsTheDays() throws {
        let holidays = try Self.text("berlin-holidays.ics")
        let request = try JSONValue.parse(#"{"id":"check","except_ics":"berlin-holidays.ics","trigger":{"calendar":{"match":{"weekday":"mon-fri","hour":7},"tz":"Europe/Berlin","repeats":true}}}"#)
        let resolved = try ICalendar.resolve(request, read: { (name: String) throws(ICalendarKeyError) -> String in
            guard name == "berlin-holidays.ics" else { throw ICalendarKeyError(key: "ics", "\(name): no such file") }
            return holidays
        }, isZone: Self.isZone)
        let r = try NotificationRequest(json: try #require(resolved.requests.first))
        guard case .calendar(let t) = r.trigger, let s = t.recurrence else { Issue.record("not a recurrence"); return }
        let berlin = try SystemZones().rules(named: "Europe/Berlin")
        // Thu 2 April 07:00 CEST, then Good Friday and Easter Monday skipped: Tue 7 April.
        let thu = try #require(s.nextDate(after: WallInstant(secondsSinceEpoch: 1_775_088_000), in: berlin))   // 2026-04-02T00:00Z
        #expect(thu.secondsSinceEpoch == 1_775_106_000)
        #expect(s.nextDate(after: thu, in: berlin)?.secondsSinceEpoch == 1_775_538_000)   // 2026-04-07T05:00:00Z
        // A plain match (no sets) takes exdate too.
        let plain = try NotificationRequest(json: try JSONValue.parse(#"{"id":"p","trigger":{"calendar":{"match":{"hour":7,"minute":0},"exdate":["2026-04-03"],"tz":"UTC","repeats":true}}}"#))
        guard case .calendar(let pt) = plain.trigger, let ps = pt.recurrence else { Issue.record("plain match with exdate is not a recurrence"); return }
        #expect(ps.nextDate(after: WallInstant(secondsSinceEpoch: 1_775_174_400), in: try SystemZones().rules(named: "UTC"))?.secondsSinceEpoch == 1_775_286_000)   // 3 Apr 00:00Z → 4 Apr 07:00Z
    }

    /// Broken files: the line and what is wrong.
    @Test(arguments: [
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20260105T070000\nEND:VCALENDAR\n", 4, "closes BEGIN:VEVENT"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20260105T070000\n", 2, "has no END:VEVENT"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART 20260105\nEND:VEVENT\nEND:VCALENDAR\n", 3, "DTSTART: no \":\""),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20260105T070000\nEXRULE:FREQ=DAILY\nEND:VEVENT\nEND:VCALENDAR\n", 4, "EXRULE is not supported"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:2026-13-05\nEND:VEVENT\nEND:VCALENDAR\n", 3, "is not a date"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20260105T070000\nRRULE:FREQ=SECONDLY\nEND:VEVENT\nEND:VCALENDAR\n", 4, "FREQ"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;TZID=Mars/Olympus:20260105T070000\nEND:VEVENT\nEND:VCALENDAR\n", 3, "not a known IANA time zone"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:x\nEND:VEVENT\nEND:VCALENDAR\n", 2, "no DTSTART"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20260105T070000\nRDATE;VALUE=PERIOD:20260105T070000/PT1H\nEND:VEVENT\nEND:VCALENDAR\n", 4, "VALUE=PERIOD is not supported"),
        (" folded:first\n", 1, "continuation line"),
        ("BEGIN:VEVENT\nEND:VEVENT\n", 1, "must start with BEGIN:VCALENDAR"),
    ])
    func brokenFilesNameTheLine(text: String, line: Int, words: String) throws {
        do throws(ICalendarError) {
            _ = try Self.requests(text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.message.contains(words), "\(error)")
        }
    }

    /// An exclusion calendar lists days: a timed event is refused with its line.
    @Test func exclusionCalendarRefusesTimes() throws {
        do throws(ICalendarError) {
            _ = try ICalendar.exclusionDays("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261225T090000\nEND:VEVENT\nEND:VCALENDAR\n")
            Issue.record("accepted")
        } catch {
            #expect(error.line == 3 && error.message.contains("all-day"), "\(error)")
        }
    }
}
