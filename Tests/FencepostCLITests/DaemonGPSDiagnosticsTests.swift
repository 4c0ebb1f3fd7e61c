import FencepostJSON
import FencepostLinux
import FencepostTestSupport
import Foundation
import SeededRandom
import Testing

/// `fencepost status` GPS diagnostics against a real pseudo-terminal as the serial receiver: a
/// wrong baud rate (bytes, no sentence), no sky view (sentences, no fix), then a real drive with
/// the counters of each kind of rejected sentence — in `--json` and in the text.
@Suite(.serialized, .processes) struct DaemonGPSDiagnosticsTests {
    /// `$BODY*CS\r\n` with the right checksum.
    static func sentence(_ body: String) -> String { ReplayTests.sentence(body) + "\r\n" }

    func status(_ d: AgentProcess) throws -> JSONValue {
        let out = try d.cli(["status", "--json"])
        #expect(out.status == 0, "\(out.stderr)")
        return try JSONValue.parse(out.stdout)
    }

    @Test func diagnosticsFollowTheSerialStream() throws {
        let d = try AgentProcess()
        let pty = try d.startOnPseudoTerminal()
        func write(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try pty.master.writeAll($0) } }

        // 1. A wrong baud rate: bytes with the high bit set and no '$' (seeded).
        let seed: UInt64 = 14
        var rng = SplitMix64(seed: seed)
        try write((0 ..< 3000).map { _ in UInt8(0x80 | (rng.next() & 0x7F)) })
        #expect(d.wait(timeout: 10) { ((try? status(d))?["gps"]?["counters"]?["bytes"]?.int64 ?? 0) >= 3000 }, "seed \(seed)")
        var s = try status(d)
        #expect(s["gps"]?["counters"]?["sentences"]?.int64 == 0)
        #expect(s["gps"]?["counters"]?["garbageBytes"]?.int64 ?? 0 >= 2900, "\(s)")
        #expect(s["gps"]?["hint"]?.string?.contains("wrong baud rate?") == true, "\(s)")
        var text = try d.cli(["status"]).stdout
        #expect(text.contains("hint: bytes arrive but no NMEA sentence: wrong baud rate?"), "\(text)")

        // 2. No sky view: the receiver talks, but has no fix (GGA quality 0, RMC status V).
        var noFix = ""
        for i in 0 ..< 15 {
            let t = String(format: "1200%02d.00", i)
            noFix += Self.sentence("GPGGA,\(t),,,,,0,00,99.99,,,,,,")
            noFix += Self.sentence("GPRMC,\(t),V,,,,,,,070709,,,N")
            noFix += Self.sentence("GPGSV,1,1,00")
        }
        try write(Array(noFix.utf8))
        #expect(d.wait(timeout: 10) { ((try? status(d))?["gps"]?["counters"]?["sentences"]?.int64 ?? 0) >= 45 })
        s = try status(d)
        #expect(s["gps"]?["hint"]?.string?.contains("no sky view?") == true, "\(s)")
        #expect(s["gps"]?["satellitesSeen"]?.int64 == 0, "\(s)")

        // 3. A drive, with one sentence of each rejected kind.
        let head = try DaemonGPSTests.driveHead(epochs: 12).split(separator: "\n")
        // The last epoch's GGA: satellites used (field 7) and HDOP (field 8), e.g. 05 and 4.8.
        let gga = try #require(head.last { $0.hasPrefix("$GPGGA") }).split(separator: ",", omittingEmptySubsequences: false)
        let used = try #require(Int(gga[7])), hdop = try #require(Double(gga[8]))
        var drive = head.map { String($0) + "\r\n" }.joined()
        drive += "$GPGGA,144300.0,5114.617879,N,00644.514820,E,1,05,4.8,97.5,M,,,,*00\r\n"   // wrong checksum
        drive += Self.sentence("XXGGA,144300.0,5114.617879,N,00644.514820,E,1,05,4.8,97.5,M,,,,")   // unknown talker
        drive += Self.sentence("GPTXT," + String(repeating: "A", count: 150))   // overlong
        try write(Array(drive.utf8))
        #expect(d.wait(timeout: 10) { ((try? status(d))?["gps"]?["counters"]?["rejected"]?["overlong"]?.int64 ?? 0) >= 1 })
        s = try status(d)
        let g = s["gps"]
        #expect(g?["mode"]?.string == "3D", "\(s)")
        #expect(g?["satellitesUsed"]?.int64 == Int64(used), "\(s)")
        #expect(g?["satellitesSeen"]?.int64 == 10, "\(s)")
        #expect(g?["hdop"]?.double == hdop, "\(s)")
        #expect((g?["error"]?.double ?? 0) > 0, "\(s)")
        #expect((g?["fixAge"]?.double).map { $0 >= 0 && $0 < 30 } == true, "\(s)")
        let r = g?["counters"]?["rejected"]
        #expect(r?["checksum"]?.int64 == 1, "\(s)")
        #expect(r?["unknownTalker"]?.int64 == 1, "\(s)")
        #expect(r?["overlong"]?.int64 == 1, "\(s)")
        #expect(g?["hint"] == .null, "\(s)")
        text = try d.cli(["status"]).stdout
        #expect(text.contains("fix 3D, satellites \(used) used / 10 seen, HDOP \(hdop), error ±"), "\(text)")
        #expect(text.contains("rejected: 1 checksum, 0 framing, 1 unknown talker, 1 overlong"), "\(text)")
        #expect(!text.contains("hint:"), "\(text)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0)
    }

    /// `clock_trust = "always"`: the clock's source is "always" (it said "ntp").
    @Test func clockTrustAlwaysIsShownAsAlways() throws {
        let d = try AgentProcess()
        try d.writeConfig(DaemonTests.gpio)
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let s = try status(d)
        #expect(s["clock"]?["source"]?.string == "always", "\(s)")
        #expect(try d.cli(["status"]).stdout.contains("trusted (source always)"))
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0)
    }
}
