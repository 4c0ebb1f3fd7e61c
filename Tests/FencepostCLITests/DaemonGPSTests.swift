import FencepostLinux
import Foundation
import Testing

/// The agent's GPS sources with real peers: a pseudo-terminal as the serial receiver (closed and
/// opened again). The gpsd client is tested against gpsd under gpsfake in FencepostGPIOTests; an
/// agent-level gpsd test is not in the suite yet (it was unreliable here, see the session note).
@Suite(.serialized) struct DaemonGPSTests {
    /// The first `epochs` epochs of the demo drive (each starts with its GGA sentence).
    static func driveHead(epochs: Int) throws -> String {
        let text = try String(contentsOfFile: DaemonProcess.demoDrive, encoding: .utf8)
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

    @Test func serialPseudoTerminalClosedAndReopened() throws {
        let d = try DaemonProcess()
        let link = d.dir.appendingPathComponent("gps").path
        var pty = try PseudoTerminal()
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: pty.devicePath)
        try d.writeConfig("""
            [gps]
            source = "serial"
            device = "\(link)"
            baud = 9600

            """ + DaemonTests.gpio + Self.depot)
        try d.start()
        #expect(d.waitForLog("GPS: reading"), "log:\n\(d.stderr)")
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
