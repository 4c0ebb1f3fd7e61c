import FencepostLinux
import FencepostTestSupport
import Foundation
import SeededRandom
import Testing

/// The same seeded drive through `fencepost replay` and through the agent process: fed by its
/// replay source at 1×, 20× and 100×, and over a pseudo-terminal with the fixes in bursts (held
/// 5 s, then written at once). All must give the same events. The fix gate times fixes by their
/// GNSS time: timed by arrival, fixes that arrive close together would look like teleports, and
/// the fast passes through the small zones would be missed at speed and in bursts.
@Suite(.processes) struct ReplayAgreementTests {
    static let seed: UInt64 = 0x13_0001
    static let origin = (lat: 51.2, lon: 6.7)

    /// Metres east/north of the origin as (lat, lon).
    static func coordinate(_ x: Double, _ y: Double) -> (Double, Double) {
        (origin.lat + y / 6_371_008.8 * 180 / .pi, origin.lon + x / (6_371_008.8 * cos(origin.lat * .pi / 180)) * 180 / .pi)
    }


    static func nmeaAngle(_ v: Double, degreesWidth: Int) -> String {
        let a = abs(v)
        let d = Int(a)
        let m = (a - Double(d)) * 60
        return String(format: "%0\(degreesWidth)d%07.4f", d, m)
    }

    /// The drive (one epoch of GGA + RMC a second, the last followed by a no-fix GGA that closes
    /// it) and the zones: circles and a square along a road driven at 130 km/h, two of them small
    /// (12–14 m) and between two fixes, so that no fix is inside them.
    static func drive() -> (nmea: [String], zones: String) {
        var rng = SplitMix64(seed: seed)
        let speed = 36.1
        var epochs: [String] = []
        let start = 1_780_315_200 + Int(rng.next() % 3600)
        let count = 52
        for i in 0 ... count {
            let t = start + i
            let hh = (t / 3600) % 24, mm = (t / 60) % 60, ss = t % 60
            let time = String(format: "%02d%02d%02d.00", hh, mm, ss)
            if i == count {
                let body = "GPGGA,\(time),,,,,0,00,99.9,,M,,M,,"
                epochs.append(ReplayTests.sentence(body))
                break
            }
            let x = -100 + speed * Double(i) + rng.gaussian() * 3, y = 4 + rng.gaussian() * 3
            let (lat, lon) = coordinate(x, y)
            let latText = nmeaAngle(lat, degreesWidth: 2), lonText = nmeaAngle(lon, degreesWidth: 3)
            let gga = "GPGGA,\(time),\(latText),N,\(lonText),E,1,09,0.8,100.0,M,47.0,M,,"
            let knots = String(format: "%.1f", (speed + rng.gaussian() * 0.2) / 0.514444)
            let course = String(format: "%.1f", 90 + rng.gaussian())
            let rmc = "GPRMC,\(time),A,\(latText),N,\(lonText),E,\(knots),\(course),070726,,,A"
            epochs.append(ReplayTests.sentence(gga) + "\r\n" + ReplayTests.sentence(rmc))
        }
        func circle(_ id: String, _ x: Double, _ y: Double, _ r: Double) -> String {
            let (lat, lon) = coordinate(x, y)
            return #"{"type":"Feature","id":"\#(id)","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":\#(r)}}"#
        }
        let (a, b) = (coordinate(700, -40), coordinate(780, 40))
        let square = #"{"type":"Feature","id":"square","geometry":{"type":"Polygon","coordinates":[[[\#(a.1),\#(a.0)],[\#(b.1),\#(a.0)],[\#(b.1),\#(b.0)],[\#(a.1),\#(b.0)],[\#(a.1),\#(a.0)]]]}}"#
        // "gate" and "pump" lie between two fixes (36 m apart, the nearest ~18 m from the centre):
        // only the segment test between consecutive fixes finds them, and only with their true interval.
        let zones = [circle("depot", 150, 0, 80), circle("gate", -100 + speed * 12.5, 4, 12), square,
                     circle("pump", -100 + speed * 31.5, 4, 14), circle("yard", 1500, 0, 120)]
        return (epochs, #"{"type":"FeatureCollection","features":["# + zones.joined(separator: ",") + "]}")
    }

    /// `fencepost replay`'s events as "zone event" lines, in order.
    static func replayEvents(_ dir: URL) throws -> [String] {
        let out = try ChildProcess.run(["replay", dir.appendingPathComponent("drive.nmea").path,
                                        "--zones", dir.appendingPathComponent("zones.geojson").path, "--jsonl"])
        #expect(out.status == 0, "\(out.stderr)")
        return out.stdoutLines.compactMap { line in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let r = o["region"] as? String, let e = o["event"] as? String, e != "unknown" else { return nil }
            return "\(r) \(e)"
        }
    }

    /// The agent's deliveries (`delivered ZONE/N "…" on EVENT`) as "zone event" lines, in order.
    static func agentEvents(_ log: String) -> [String] {
        log.split(separator: "\n").compactMap { line in
            guard let d = line.range(of: "delivered "), let on = line.range(of: " on ", options: .backwards) else { return nil }
            let id = line[d.upperBound...].prefix { $0 != "/" }
            // A location delivery's line ends with the time of the fix that caused it: " (fix …)".
            let event = line[on.upperBound...].prefix { $0 != " " }
            return "\(id) \(event)"
        }
    }

    static func prepare(_ d: AgentProcess) throws -> [String] {
        let (nmea, zones) = drive()
        try Data((nmea.joined(separator: "\r\n") + "\r\n").utf8).write(to: d.dir.appendingPathComponent("drive.nmea"))
        try Data(zones.utf8).write(to: d.dir.appendingPathComponent("zones.geojson"))
        return nmea
    }

    static func runReplaySource(speed: Double) throws -> (replay: [String], agent: [String]) {
        let d = try AgentProcess()
        _ = try prepare(d)
        let replay = try replayEvents(d.dir)
        try d.writeConfig("""
            zones = "\(d.dir.appendingPathComponent("zones.geojson").path)"
            [gps]
            source = "replay"
            file = "\(d.dir.appendingPathComponent("drive.nmea").path)"
            speed = \(speed)
            exit_at_end = true

            """ + DaemonTests.gpio)
        try d.start()
        let exit = d.waitForExit(timeout: 120)
        #expect(exit?.status == 0, "speed \(speed): log:\n\(d.stderr)")
        return (replay, agentEvents(d.stderr))
    }

    @Test func replaySourceAtSpeedGivesReplaysEvents() throws {
        for speed in [20.0, 100.0] {
            let (replay, agent) = try Self.runReplaySource(speed: speed)
            #expect(replay.count >= 8, "seed \(Self.seed): the drive passes the zones: \(replay)")
            #expect(agent == replay, "seed \(Self.seed), \(speed)×: agent \(agent) vs replay \(replay)")
        }
    }

    @Test func replaySourceAtRealTimeGivesReplaysEvents() throws {
        let (replay, agent) = try Self.runReplaySource(speed: 1)
        #expect(replay.count >= 8, "seed \(Self.seed): \(replay)")
        #expect(agent == replay, "seed \(Self.seed), 1×: agent \(agent) vs replay \(replay)")
    }

    /// Over a pseudo-terminal: the fixes of 5 s held, then written at once.
    @Test func burstsOverAPseudoTerminalGiveReplaysEvents() throws {
        let d = try AgentProcess()
        let epochs = try Self.prepare(d)
        let replay = try Self.replayEvents(d.dir)
        let pty = try d.startOnPseudoTerminal(baud: 115200, before: "zones = \"\(d.dir.appendingPathComponent("zones.geojson").path)\"\n")
        var i = 0
        while i < epochs.count {
            usleep(5_000_000)
            let burst = epochs[i ..< min(i + 5, epochs.count)].joined(separator: "\r\n") + "\r\n"
            let bytes = Array(burst.utf8)
            try bytes.withUnsafeBytes { try pty.master.writeAll($0) }
            i += 5
        }
        d.wait(timeout: 10) { Self.agentEvents(d.stderr).count >= replay.count }
        usleep(500_000)
        let agent = Self.agentEvents(d.stderr)
        #expect(replay.count >= 8, "seed \(Self.seed): \(replay)")
        #expect(agent == replay, "seed \(Self.seed), bursts: agent \(agent) vs replay \(replay); log:\n\(d.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 5)?.status == 0)
    }
}
