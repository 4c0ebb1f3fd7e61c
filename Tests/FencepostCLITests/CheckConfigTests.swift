import FencepostTestSupport
import Foundation
import Testing

/// `fencepost check-config` through the real binary, on real files.
@Suite(.processes) struct CheckConfigTests {
    /// A fresh folder holding `files` (name → content).
    static func folder(_ files: [String: String]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, content) in files { try Data(content.utf8).write(to: dir.appendingPathComponent(name)) }
        return dir
    }

    static let boardConfig = AgentProcess.root.appendingPathComponent("board/fencepost.toml")

    @Test func validFileIsSummarised() throws {
        let zones = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[6.77,51.22]},"properties":{"radius":150}},
              {"type":"Feature","id":"yard","geometry":{"type":"Point","coordinates":[6.78,51.23]},"properties":{"radius":90}}]}
            """
        let config = """
            zones = "zones.geojson"
            [gps]
            source = "gpsd"
            url = "gpsd://127.0.0.1:2947"
            [gpio.badge]
            enabled = false
            [alerts]
            quiet_hours = "22:00-06:30"
            [hook]
            command = ["/bin/true", "x"]
            [[category]]
            id = "C"
            [[request]]
            id = "w"
            trigger.interval.seconds = 60
            """
        let dir = try Self.folder(["fencepost.toml": config, "zones.geojson": zones])
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("fencepost.toml").path
        let out = try ChildProcess.run(["check-config", path])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr.isEmpty)
        let lines = out.stdoutLines
        #expect(lines.first == "\(path): OK")
        #expect(lines.contains("gps: gpsd 127.0.0.1:2947"))
        #expect(lines.contains("gpio: console; buzzer BCM 18, led BCM 23, button BCM 17 (active low, pull-up); long press 1000 ms, debounce 30 ms"))
        #expect(lines.contains("requests: 1"))
        #expect(lines.contains("zones: 2"))
        #expect(lines.contains("categories: 1"))
        #expect(lines.contains("quiet hours: 22:00-06:30"))
        #expect(lines.contains("hook: /bin/true x (timeout 5 s)"))
    }

    @Test func errorIsFileLineMessageWithExit78() throws {
        let config = "# comment\n\n[gpio.buzzer]\npin = 99\n"
        let dir = try Self.folder(["bad.toml": config])
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("bad.toml").path
        let out = try ChildProcess.run(["check-config", path])
        #expect(out.status == 78)
        #expect(out.stdout.isEmpty)
        #expect(out.stderr == "\(path):4: gpio.buzzer.pin: 99 is not a BCM pin (0…27)\n")
    }

    @Test func unknownKeyAndZonesErrors() throws {
        let dir = try Self.folder(["a.toml": "[gps]\nsorce = \"serial\"\n", "b.toml": "\nzones = \"missing.geojson\"\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = try ChildProcess.run(["check-config", dir.appendingPathComponent("a.toml").path])
        #expect(a.status == 78)
        #expect(a.stderr.hasSuffix("a.toml:2: gps: unknown key `sorce` (did you mean `source`?)\n"))
        let b = try ChildProcess.run(["check-config", dir.appendingPathComponent("b.toml").path])
        #expect(b.status == 78)
        #expect(b.stderr.contains("b.toml:2: zones: "))
        #expect(b.stderr.contains("missing.geojson"))
    }

    @Test func unknownTimeZonesAreErrorsAtTheirLine() throws {
        let request = "[[request]]\nid = \"r\"\ntrigger.calendar.match = { hour = 7 }\ntrigger.calendar.tz = \"Mars/Olympus\"\n"
        let dir = try Self.folder(["zone.toml": "\ntime_zone = \"Europe/Atlantis\"\n", "tz.toml": request])
        defer { try? FileManager.default.removeItem(at: dir) }
        let zone = try ChildProcess.run(["check-config", dir.appendingPathComponent("zone.toml").path])
        #expect(zone.status == 78)
        #expect(zone.stderr.contains("zone.toml:2: time_zone: "), "\(zone.stderr)")
        #expect(zone.stderr.contains("Europe/Atlantis"), "\(zone.stderr)")
        let tz = try ChildProcess.run(["check-config", dir.appendingPathComponent("tz.toml").path])
        #expect(tz.status == 78)
        #expect(tz.stderr.contains("tz.toml:4: request[0] (id \"r\"): trigger.calendar.tz: "), "\(tz.stderr)")
    }

    /// Two events, each a request of its own from one `ics` table (daily, so never over).
    static let twoEvents = """
        BEGIN:VCALENDAR
        VERSION:2.0
        BEGIN:VEVENT
        UID:one
        DTSTART:20260105T070000
        RRULE:FREQ=DAILY
        SUMMARY:One
        END:VEVENT
        BEGIN:VEVENT
        UID:two
        DTSTART:20260105T080000
        RRULE:FREQ=DAILY
        SUMMARY:Two
        END:VEVENT
        END:VCALENDAR

        """

    /// An `ics` table gives two requests from one table: the time zone error of the table after
    /// it names that table (the second, `request[1]`) at its `tz` line, as the parse counted it.
    @Test func anUnknownTimeZoneAfterAnICSTableIsAtItsLine() throws {
        let config = """
            [[request]]
            id = "shifts"
            ics = "two.ics"

            [[request]]
            id = "r"
            trigger.calendar.match = { hour = 7 }
            trigger.calendar.tz = "Mars/Olympus"

            """
        let dir = try Self.folder(["two.ics": Self.twoEvents, "ics.toml": config])
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = try ChildProcess.run(["check-config", dir.appendingPathComponent("ics.toml").path])
        #expect(out.status == 78, "\(out.stdout)\(out.stderr)")
        #expect(out.stderr.contains("ics.toml:8: request[1] (id \"r\"): trigger.calendar.tz: "), "\(out.stderr)")
    }

    @Test func missingFileExits66() throws {
        let out = try ChildProcess.run(["check-config", "/nonexistent/fencepost.toml"])
        #expect(out.status == 66)
        #expect(out.stderr.contains("/nonexistent/fencepost.toml"))
    }

    /// The example shipped in board/ is valid and says what it claims: serial GPS on the Pi's UART,
    /// libgpiod with the wiring picture's BCM pins.
    @Test func boardExampleIsValid() throws {
        let out = try ChildProcess.run(["check-config", Self.boardConfig.path])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdoutLines.contains("gps: serial /dev/serial0 at 9600 baud"))
        #expect(out.stdoutLines.contains(
            "gpio: libgpiod gpiochip0; buzzer BCM 18, led BCM 23, badge BCM 24, button BCM 17 (active low, pull-up); long press 1000 ms, debounce 30 ms"))
    }
}
