import FencepostJSON
import FencepostLinux
import FencepostTestSupport
import Foundation
import Testing

/// The agent's GPS sources with real peers: gpsd fed by gpsfake, and a pseudo-terminal as the
/// serial receiver (closed and opened again).
@Suite(.serialized, .processes) struct DaemonGPSTests {
    /// The first `epochs` epochs of the demo drive (each starts with its GGA sentence).
    static func driveHead(epochs: Int) throws -> String {
        let text = try String(contentsOfFile: AgentProcess.demoDrive, encoding: .utf8)
        var out: [Substring] = []
        var seen = 0
        for line in text.split(separator: "\n") {
            if line.hasPrefix("$GPGGA") { seen += 1; if seen > epochs { break } }
            out.append(line)
        }
        return out.joined(separator: "\n") + "\n"
    }

    static let depot = """
        [[request]]
        id = "depot"
        content = { title = "Depot", sound = "chime" }
        trigger = { location = { region = { circle = { lat = 51.24363, lon = 6.74191, radius = 150 } }, notifyOnEntry = true, notifyOnExit = true, repeats = true } }

        """

    @Test func gpsdFedByGpsfakeDrivesTheBuzzer() throws {
        guard RequiredTool.find("gpsfake", package: "gpsd-clients") != nil else { return }
        let d = try AgentProcess()
        let log = d.dir.appendingPathComponent("drive.log")
        // GGA and RMC only, as the gpsd client's own gpsfake test feeds it, with the log's own HDOP
        // (4–5): gpsd's eph for it is ~90 m (its 95 % figure), which taken as is would hold every
        // fix as poor (limit 50 m); the client takes HDOP × UERE when gpsd reports the
        // HDOP (SKY), else half the eph (gpsd's figure is at 95 %): ~42 m here.
        let feed = try Self.driveHead(epochs: 40).split(separator: "\n")
            .filter { $0.hasPrefix("$GPGGA") || $0.hasPrefix("$GPRMC") }
        #expect(feed.contains { $0.hasPrefix("$GPGGA") && ($0.split(separator: ",", omittingEmptySubsequences: false)[8].first.map { $0 >= "4" } ?? false) },
                "the feed should keep the log's poor HDOP")
        try Data((feed.joined(separator: "\r\n") + "\r\n").utf8).write(to: log)
        let port = 30_000 + Int(getpid() % 5000)
        let tmp = d.dir.appendingPathComponent("gpsfake-tmp").path
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        // posix_spawn with an empty signal mask: gpsd must see the SIGTERM that ends gpsfake. Without
        // -n gpsfake waits for the agent's connection; without -1 it plays the log in a loop until
        // stopped. Its output (gpsd's D-Bus complaint) goes to a file, not into the test log.
        let gpsfake = try FencepostLinux.ChildProcess.spawn(
            ["/bin/sh", "-c", "exec /usr/bin/gpsfake -q -c 0.1 -W 5 -P \(port) '\(log.path)' > '\(tmp)/gpsfake.out' 2>&1"],
            environment: ["PATH=/usr/sbin:/usr/bin:/bin", "TMPDIR=\(tmp)"])
        defer {
            try? gpsfake.send(SIGTERM)
            for _ in 0 ..< 100 { if (try? gpsfake.reap()) != nil { break }; usleep(50_000) }
        }
        try d.writeConfig("""
            [gps]
            source = "gpsd"
            url = "gpsd://127.0.0.1:\(port)"

            """ + DaemonTests.gpio + Self.depot)
        try d.start()
        #expect(d.waitForLog("delivered depot/", timeout: 40), "log:\n\(d.stderr)\nstatus: \((try? d.cli(["status", "--json"]))?.stdout ?? "-")")
        #expect(d.waitForLog("on exit", timeout: 40), "log:\n\(d.stderr)")
        // The diagnostics of a gpsd source: gpsd's messages counted, the fix's mode and error.
        let status = try FencepostJSON.JSONValue.parse(try d.cli(["status", "--json"]).stdout)
        #expect((status["gps"]?["counters"]?["sentences"]?.int64 ?? 0) > 0, "\(status)")
        #expect(["2D", "3D"].contains(status["gps"]?["mode"]?.string ?? ""), "\(status)")
        #expect((status["gps"]?["error"]?.double ?? 0) > 0, "\(status)")

        // Pattern starts: a buzzer "on" more than 0.6 s after the previous one (a chime lasts 0.7 s
        // with its steps 0.2 s apart).
        var buzzer: [Double] = []
        for t in d.pinChanges.filter({ $0.name == "buzzer" && $0.on }).map(\.time) where (buzzer.last.map { t - $0 > 0.6 } ?? true) {
            buzzer.append(t)
        }
        #expect(buzzer.count >= 2, "\(d.stdout)")
        // Entry at the first fixes, exit about 15 fixes later (0.1 s a sentence, 2 sentences a fix: ≈ 3 s).
        if buzzer.count >= 2 { #expect(buzzer[1] - buzzer[0] > 1.5, "\(buzzer)") }
        // Entry at the first fixes, exit about 15 fixes later (0.1 s a sentence, 2 sentences a fix: ≈ 3 s).

        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 5)?.status == 0)
        #expect(d.allOutputsOffAtEnd)
    }

    @Test func serialPseudoTerminalClosedAndReopened() throws {
        let d = try AgentProcess()
        let link = d.gpsLink
        var pty = try d.startOnPseudoTerminal(after: Self.depot)
        let lines = try Self.driveHead(epochs: 40).split(separator: "\n")
        func feed(_ range: Range<Int>) throws {
            for line in lines[range] {
                let bytes = Array((line + "\r\n").utf8)
                try bytes.withUnsafeBytes { try pty.master.writeAll($0) }
                if line.hasPrefix("$GPGSA") { usleep(20_000) }
            }
        }
        try feed(0 ..< 60)
        #expect(d.waitForLog("delivered depot/"), "log:\n\(d.stderr)")
        // Unplug: the master side goes away.
        let old = pty
        pty = try PseudoTerminal()
        old.closeMaster()
        #expect(d.waitForLog("reconnecting"), "log:\n\(d.stderr)")
        try FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: pty.devicePath)
        // Opened again (it retries every 2 s); only then is the rest of the drive written.
        #expect(d.wait(timeout: 10) { d.stderr.components(separatedBy: "GPS: reading").count >= 3 }, "log:\n\(d.stderr)")
        try feed(60 ..< lines.count)
        #expect(d.waitForLog("on exit"), "log:\n\(d.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 5)?.status == 0)
    }
}
