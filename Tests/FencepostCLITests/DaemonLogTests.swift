import FencepostTestSupport
import Foundation
import Testing

/// The agent's log as journald reads it: every line with an sd-daemon priority prefix, a missing
/// GPS as one line (not one every 2 s), `[log] level`.
@Suite(.serialized, .processes) struct DaemonLogTests {
    static let prefixes = ["<3>", "<4>", "<6>", "<7>"]

    /// A serial GPS on a device that does not exist: retried every 2 s; over ~7 s that is four
    /// attempts and one warning line. Every line starts with a priority prefix.
    @Test(arguments: [false, true])
    func missingGPSIsOneWarningAndEveryLineHasAPriority(leanAgent: Bool) throws {
        let d = try AgentProcess()
        try d.writeConfig("""
            [gps]
            source = "serial"
            device = "\(d.dir.path)/no-such-tty"
            baud = 9600

            """)
        try d.start(agent: leanAgent)
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        Thread.sleep(forTimeInterval: 7)
        d.signal(SIGTERM)
        _ = try #require(d.waitForExit(timeout: 30), "no exit after SIGTERM; log:\n\(d.stderr)")
        let lines = d.stderr.split(separator: "\n").map(String.init)
        #expect(!lines.isEmpty)
        for line in lines { #expect(Self.prefixes.contains { line.hasPrefix($0) }, "no priority prefix: \(line)") }
        let gps = lines.filter { $0.contains("GPS: ") && $0.contains("no-such-tty") }
        #expect(gps.count == 1, "GPS lines:\n\(gps.joined(separator: "\n"))")
        #expect(gps.first?.hasPrefix("<4>") == true)
        #expect(lines.contains { $0.hasPrefix("<6>") && $0.contains("stopped; outputs off") })
    }

    /// `[log] level = "warning"`: no info lines; the warning still comes.
    @Test func levelWarningDropsInfoLines() throws {
        let d = try AgentProcess()
        try d.writeConfig("""
            [log]
            level = "warning"
            [gps]
            source = "serial"
            device = "\(d.dir.path)/no-such-tty"

            """)
        try d.start()
        #expect(d.waitForLog("no-such-tty"), "log:\n\(d.stderr)")
        let gpsLine = d.stderr
        let added = try d.cli(["status"])
        #expect(added.status == 0, "\(added.stderr)")
        d.signal(SIGTERM)
        _ = try #require(d.waitForExit(timeout: 30), "no exit after SIGTERM; log:\n\(d.stderr)")
        #expect(gpsLine.hasPrefix("<4>"), "\(gpsLine)")
        #expect(!d.stderr.contains("<6>"), "info lines at level warning:\n\(d.stderr)")
    }

    /// A fatal start-up error (a bad file) is a `<3>` line too.
    @Test func aStartupErrorIsPriorityThree() throws {
        let d = try AgentProcess()
        try d.writeConfig("[log]\nlevel = \"loud\"\n")
        try d.start(agent: true)
        let end = try #require(d.waitForExit(timeout: 10))
        #expect(end.status == 78)
        #expect(d.stderr.hasPrefix("<3>fencepost-agent: "), "\(d.stderr)")
        #expect(d.stderr.contains("fencepost.toml:5: log.level: \"loud\""), "\(d.stderr)")
    }
}
