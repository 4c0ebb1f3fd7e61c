import FencepostJSON
import FencepostLinux
import FencepostTestSupport
import Foundation
import Testing

/// The board's clock with real agent processes: GNSS time as the wall clock on a board whose
/// system clock is off, the receiver's week rollover, one agent per state file.
@Suite(.serialized, .processes) struct BoardClockTests {
    static let utc: TimeZone = TimeZone(identifier: "UTC")!

    static func format(_ date: Date, _ pattern: String) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = utc
        f.dateFormat = pattern
        return f.string(from: date)
    }

    /// RMC + GGA at 1 Hz for `seconds` epochs from `start` (whole seconds), parked at the depot, CRLF.
    static func parked(from start: Date, seconds: Int) -> String {
        var text = ""
        for k in 0 ..< seconds {
            let t = start.addingTimeInterval(Double(k))
            let hms = format(t, "HHmmss") + ".00"
            text += ReplayTests.sentence("GPRMC,\(hms),A,5114.6178,N,00644.5146,E,0.0,0.0,\(format(t, "ddMMyy")),,,A") + "\r\n"
            text += ReplayTests.sentence("GPGGA,\(hms),5114.6178,N,00644.5146,E,1,08,0.9,40.0,M,47.0,M,,") + "\r\n"
        }
        return text
    }

    /// A one-time calendar request for the UTC second `at`.
    static func calendarRequest(_ id: String, at: Date) -> String {
        let c = Calendar(identifier: .gregorian)
        var cal = c
        cal.timeZone = utc
        let d = cal.dateComponents([.year, .month, .day, .hour, .minute, .second], from: at)
        return """
            [[request]]
            id = "\(id)"
            content = { title = "Vehicle check" }
            trigger = { calendar = { match = { year = \(d.year!), month = \(d.month!), day = \(d.day!), hour = \(d.hour!), minute = \(d.minute!), second = \(d.second!) }, tz = "UTC" } }

            """
    }

    static func json(_ text: String) throws -> JSONValue { try JSONValue.parse(text) }

    /// The GPIO section and a floating daily 12:00 reminder, `noon`: where it next fires says
    /// which time zone the agent uses.
    static let noonRequest = DaemonTests.gpio + """
            [[request]]
            id = "noon"
            content = { title = "Lunch break" }
            trigger = { calendar = { match = { hour = 12, minute = 0 }, repeats = true } }

            """

    /// Replaces the device zone file with `zone`'s as a whole (a rename, as dpkg and timedatectl
    /// do); the running agent must say within a minute that the device zone changed.
    static func replaceDeviceZone(_ zoneFile: URL, with zone: String, noticedBy d: AgentProcess,
                                  sourceLocation: SourceLocation = #_sourceLocation) throws {
        let staged = zoneFile.deletingLastPathComponent().appendingPathComponent(zoneFile.lastPathComponent + ".new")
        try FileManager.default.copyItem(atPath: "/usr/share/zoneinfo/" + zone, toPath: staged.path)
        let changed = Date()
        #expect(rename(staged.path, zoneFile.path) == 0, sourceLocation: sourceLocation)
        #expect(d.waitForLog("the device zone changed", timeout: 65), "log:\n\(d.stderr)", sourceLocation: sourceLocation)
        #expect(Date().timeIntervalSince(changed) < 61, sourceLocation: sourceLocation)
    }

    /// `noon`'s next fire (RFC 3339 UTC) from the running agent's status.
    static func nextFire(_ d: AgentProcess) throws -> String? {
        let s = try json(try d.cli(["status", "--json"]).stdout)
        return s["pending"]?.array?.first { $0["id"]?.string == "noon" }?["nextFire"]?.string
    }

    /// `clock_trust = "gnss"` on a board whose system clock is a year behind the receiver's time:
    /// a replay whose GNSS time is a year ahead delivers a calendar request for 8 s after its first
    /// fix at that GNSS time, 8 s after the first fix in real time; `status` names GNSS as the
    /// source and the offset of the system clock.
    @Test func calendarRequestFiresAtGNSSTimeAYearAheadOfTheSystemClock() throws {
        let d = try AgentProcess()
        d.clockTrust = "gnss"
        let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 365 * 86_400).rounded(.down))
        let due = start.addingTimeInterval(8)
        let log = d.dir.appendingPathComponent("ahead.nmea")
        try Data(Self.parked(from: start, seconds: 40).utf8).write(to: log)
        try d.writeConfig("""
            [gps]
            source = "replay"
            file = "\(log.path)"
            speed = 1
            exit_at_end = false

            """ + DaemonTests.gpio + Self.calendarRequest("check", at: due))
        try d.start()
        #expect(d.waitForLog("wall clock: GNSS time"), "log:\n\(d.stderr)")
        let firstFix = Date()
        #expect(d.waitForLog("delivered check/", timeout: 30), "log:\n\(d.stderr)")
        let elapsed = Date().timeIntervalSince(firstFix)
        // 8 s of GNSS time after the first fix; the test polls the log every 20 ms.
        #expect(elapsed > 7.0 && elapsed < 9.5, "delivered \(elapsed) s after the first fix; log:\n\(d.stderr)")
        let delivered = try Self.json(try d.cli(["delivered", "--json"]).stdout).array ?? []
        let dueText = Self.format(due, "yyyy-MM-dd'T'HH:mm:ss'Z'")
        #expect(delivered.count == 1 && delivered.first?["scheduled"]?.string == dueText, "\(delivered)")
        #expect(delivered.first?["outcome"]?.string == "delivered", "\(delivered)")
        // The delivery's date is the GNSS time it was made at: the scheduled second.
        #expect(delivered.first?["date"]?.string == dueText, "\(delivered)")

        let status = try Self.json(try d.cli(["status", "--json"]).stdout)
        #expect(status["clock"]?["source"]?.string == "gnss", "\(status)")
        #expect(status["clock"]?["trusted"] == .bool(true), "\(status)")
        let offset = try #require(status["clock"]?["offsetToSystem"]?.double, "\(status)")
        #expect(abs(offset - 365 * 86_400) < 5, "\(offset)")
        let text = try d.cli(["status"]).stdout
        #expect(text.contains("source gnss") && text.contains("the system clock is") && text.contains("behind GNSS time"), "\(text)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0)
    }

    /// A serial receiver with the week-rollover bug reports today's date 1024 weeks back: the agent
    /// moves it forward (said once in the log), and GNSS time becomes the trusted wall clock.
    @Test func weekRolloverDatesFromASerialReceiverAreCorrected() throws {
        let d = try AgentProcess()
        d.clockTrust = "gnss"
        let pty = try d.startOnPseudoTerminal()
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let reported = now.addingTimeInterval(-1024 * 7 * 86_400)
        let text = Self.parked(from: reported, seconds: 6)
        for line in text.split(separator: "\n") {
            let bytes = Array((line + "\n").utf8)
            try bytes.withUnsafeBytes { try pty.master.writeAll($0) }
            if line.contains("GPGGA") { usleep(100_000) }
        }
        #expect(d.waitForLog("wall clock: GNSS time"), "log:\n\(d.stderr)")
        #expect(d.stderr.components(separatedBy: "weeks in the past").count == 2, "the rollover is said once; log:\n\(d.stderr)")
        #expect(d.stderr.contains("1024 weeks in the past"), "log:\n\(d.stderr)")
        let status = try Self.json(try d.cli(["status", "--json"]).stdout)
        #expect(status["clock"]?["source"]?.string == "gnss", "\(status)")
        #expect(status["clock"]?["trusted"] == .bool(true), "\(status)")
        // The receiver's time, corrected, is this machine's time (within the feed's few seconds).
        let offset = try #require(status["clock"]?["offsetToSystem"]?.double, "\(status)")
        #expect(abs(offset) < 10, "\(offset)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0)
    }

    /// A second agent on the same state file refuses to start, naming the first one's pid; the
    /// first goes on serving.
    @Test func secondAgentOnTheSameStateFileIsRefused() throws {
        let d = try AgentProcess()
        try d.writeConfig(DaemonTests.gpio)
        try d.start(agent: true)
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let first = try #require(d.process?.pid)
        let agent = try #require(ChildProcess.agentBinary)
        // Its own socket, the same state file: it must not get as far as serving.
        let config = try String(contentsOfFile: d.configPath, encoding: .utf8)
            .replacingOccurrences(of: d.socketPath, with: d.dir.appendingPathComponent("second.sock").path)
        let secondConfig = d.dir.appendingPathComponent("second.toml").path
        try Data(config.utf8).write(to: URL(fileURLWithPath: secondConfig))
        let second = try ChildProcess.run(["--config", secondConfig], executable: agent, timeLimit: 10)
        #expect(second.status == 73, "status \(second.status); stderr:\n\(second.stderr)")
        #expect(second.stderr.contains("another agent (pid \(first))") && second.stderr.contains(d.statePath + ".lock"),
                "stderr:\n\(second.stderr)")
        // The first still owns its socket and answers.
        let status = try d.cli(["status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0)
        // Once the first has ended, the lock is free: a restart starts.
        try d.start(agent: true)
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0)
    }

    /// The device zone changes while the agent runs (here the file `TZ` names is replaced, as a
    /// package upgrade or `timedatectl set-timezone` replace /etc/localtime): noticed within a
    /// minute, and a floating daily 12:00 reminder moves from Tokyo's noon to Berlin's.
    @Test func deviceZoneChangeIsNoticedWhileRunning() throws {
        let d = try AgentProcess()
        d.timeZone = nil
        let zoneFile = d.dir.appendingPathComponent("device-zone")
        try FileManager.default.copyItem(atPath: "/usr/share/zoneinfo/Asia/Tokyo", toPath: zoneFile.path)
        try d.writeConfig(Self.noonRequest)
        try d.start(agent: true, environment: ["TZ": ":" + zoneFile.path])
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let tokyo = try #require(try Self.nextFire(d))
        #expect(tokyo.hasSuffix("T03:00:00Z"), "\(tokyo)")
        try Self.replaceDeviceZone(zoneFile, with: "Europe/Berlin", noticedBy: d)
        let berlin = try #require(try Self.nextFire(d))
        // Noon in Berlin: 11:00Z in winter, 10:00Z in summer.
        #expect(berlin.hasSuffix("T11:00:00Z") || berlin.hasSuffix("T10:00:00Z"), "\(berlin)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0)
    }

    /// New rules under the same `time_zone` name (a tzdata update: a country changes its offset)
    /// are taken by SIGHUP: the reload compares the rules, not only the name.
    @Test func newRulesUnderTheSameZoneNameAreTakenBySighup() throws {
        let d = try AgentProcess()
        let zoneDirectory = d.dir.appendingPathComponent("zoneinfo")
        let zoneFile = zoneDirectory.appendingPathComponent("Fleet/Depot")
        try FileManager.default.createDirectory(at: zoneFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "/usr/share/zoneinfo/Asia/Tokyo", toPath: zoneFile.path)
        d.timeZone = "Fleet/Depot"
        try d.writeConfig(Self.noonRequest)
        try d.start(agent: true, environment: ["TZDIR": zoneDirectory.path])
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let tokyo = try Self.nextFire(d)
        #expect(tokyo?.hasSuffix("T03:00:00Z") == true, "\(tokyo ?? "none"); log:\n\(d.stderr)")
        // The zone file replaced as a whole, as dpkg does.
        let staged = zoneDirectory.appendingPathComponent("Depot.new")
        try FileManager.default.copyItem(atPath: "/usr/share/zoneinfo/Europe/Berlin", toPath: staged.path)
        #expect(rename(staged.path, zoneFile.path) == 0)
        d.signal(SIGHUP)
        #expect(d.wait(timeout: 20) { d.stderr.contains("SIGHUP: configuration reloaded") }, "log:\n\(d.stderr)")
        let berlin = try Self.nextFire(d)
        #expect(berlin.map { $0.hasSuffix("T11:00:00Z") || $0.hasSuffix("T10:00:00Z") } == true, "\(berlin ?? "none"); log:\n\(d.stderr)")
        #expect(d.stderr.contains("(new rules)"), "log:\n\(d.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0)
    }

    /// `time_zone` changed by SIGHUP takes effect at once, both ways, with a floating daily 12:00
    /// reminder moving at each reload. An agent started without it follows the device zone (here
    /// the file `TZ` names); given one by SIGHUP, the device zone's periodic read (every 30 s)
    /// leaves it alone. An agent started with it and then reloaded without it follows the device
    /// zone from then on: a change of it is noticed within a minute.
    @Test func timeZoneChangedBySighupMovesFloatingTriggersAtOnce() throws {
        let d = try AgentProcess()
        let zoneFile = d.dir.appendingPathComponent("device-zone")
        try FileManager.default.copyItem(atPath: "/usr/share/zoneinfo/Asia/Tokyo", toPath: zoneFile.path)
        func reload(timeZone: String?) throws {
            d.timeZone = timeZone
            try d.writeConfig(Self.noonRequest)
            let reloads = d.stderr.components(separatedBy: "SIGHUP: configuration reloaded").count
            d.signal(SIGHUP)
            #expect(d.wait(timeout: 20) { d.stderr.components(separatedBy: "SIGHUP: configuration reloaded").count > reloads },
                    "log:\n\(d.stderr)")
        }
        // Noon in Tokyo is 03:00Z; in Berlin 11:00Z in winter, 10:00Z in summer; in New York
        // 17:00Z or 16:00Z.
        func isTokyo(_ t: String?) -> Bool { t?.hasSuffix("T03:00:00Z") == true }
        func isBerlin(_ t: String?) -> Bool { t.map { $0.hasSuffix("T11:00:00Z") || $0.hasSuffix("T10:00:00Z") } ?? false }
        func isNewYork(_ t: String?) -> Bool { t.map { $0.hasSuffix("T17:00:00Z") || $0.hasSuffix("T16:00:00Z") } ?? false }
        let environment = ["TZ": ":" + zoneFile.path]

        // 1. Started without time_zone: the device zone.
        d.timeZone = nil
        try d.writeConfig(Self.noonRequest)
        try d.start(agent: true, environment: environment)
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        var next = try Self.nextFire(d)
        #expect(isTokyo(next), "\(next ?? "none")")
        // time_zone set: Berlin at once, and still Berlin after the device zone was read again.
        try reload(timeZone: "Europe/Berlin")
        next = try Self.nextFire(d)
        #expect(isBerlin(next), "\(next ?? "none"); log:\n\(d.stderr)")
        Thread.sleep(forTimeInterval: 31)
        next = try Self.nextFire(d)
        #expect(isBerlin(next), "after the device zone's next read: \(next ?? "none"); log:\n\(d.stderr)")
        #expect(!d.stderr.contains("the device zone changed"), "log:\n\(d.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0)

        // 2. Started with time_zone: removed by SIGHUP, the device zone (Tokyo) at once ...
        try d.start(agent: true, environment: environment)
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        next = try Self.nextFire(d)
        #expect(isBerlin(next), "\(next ?? "none")")
        try reload(timeZone: nil)
        next = try Self.nextFire(d)
        #expect(isTokyo(next), "\(next ?? "none"); log:\n\(d.stderr)")
        // ... and followed when it changes.
        try Self.replaceDeviceZone(zoneFile, with: "America/New_York", noticedBy: d)
        next = try Self.nextFire(d)
        #expect(isNewYork(next), "\(next ?? "none"); log:\n\(d.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0)
    }
}
