import FencepostLinux
import FencepostTestSupport
import Foundation
import SeededRandom
import Testing

/// A drive across a border and through an enclave, on Natural Earth's 1:110m borders: South Africa
/// (a Polygon with Lesotho as its hole) and Lesotho, from `ne_110m_south_africa_lesotho.geojson`,
/// which `Tests/Oracles/make_zone_testdata.py` writes from PyPI's geopandas wheel (see
/// Tests/Oracles/README.md).
///
/// The route, straight lines between four towns, 101.7 km: Ladybrand (South Africa) → Maseru →
/// Mafeteng (Lesotho) → Wepener (South Africa). On these borders (checked with shapely) it crosses
/// Lesotho's border exactly twice, 1.1 km before Maseru and near Van Rooyen's Gate, and its
/// distance to the border grows steadily away from each crossing (no other local minimum). Driven
/// at 25 m/s, a fix every 5 s (GGA + RMC, seeded noise of σ 3 m), through `fencepost replay` and
/// through `fencepost-agent` (replay source at 200×): each must report, per zone, South Africa
/// enter, exit, enter and Lesotho enter, exit: exactly one exit and one enter per crossing.
@Suite(.enabled(if: EnclaveDrive.available || EnclaveDrive.required, EnclaveDrive.skipMessage), .processes)
struct EnclaveDriveTests {
    static let seed: UInt64 = 0x23_0E4C

    @Test func replayReportsOneExitAndOneEnterPerCrossing() throws {
        let dir = try EnclaveDrive.prepare(seed: Self.seed)
        defer { try? FileManager.default.removeItem(at: dir) }
        let events = try EnclaveDrive.replayEvents(dir)
        EnclaveDrive.expectCrossings(events, "replay, seed \(Self.seed)")
    }

    @Test func agentReportsOneExitAndOneEnterPerCrossing() throws {
        let d = try AgentProcess()
        let dir = try EnclaveDrive.prepare(seed: Self.seed)
        defer { try? FileManager.default.removeItem(at: dir) }
        try d.writeConfig("""
            zones = "\(dir.appendingPathComponent("zones.geojson").path)"
            [gps]
            source = "replay"
            file = "\(dir.appendingPathComponent("drive.nmea").path)"
            speed = 200
            exit_at_end = true

            """ + DaemonTests.gpio)
        try d.start(agent: true)
        let exit = d.waitForExit(timeout: 120)
        #expect(exit?.status == 0, "seed \(Self.seed): log:\n\(d.stderr)")
        let events = ReplayAgreementTests.agentEvents(d.stderr)
        EnclaveDrive.expectCrossings(events, "agent, seed \(Self.seed)\nlog:\n\(d.stderr.suffix(4000))")
        #expect(events == (try EnclaveDrive.replayEvents(dir)), "agent and replay disagree, seed \(Self.seed)")
    }
}

enum EnclaveDrive {
    static let repository = AgentProcess.root

    /// The zone files' folder: `FENCEPOST_ZONE_TESTDATA`, else `.build/testdata/zones` in the
    /// repository, where `Tests/Oracles/make_zone_testdata.py` writes them.
    static let folder: URL = {
        if let named = ProcessInfo.processInfo.environment["FENCEPOST_ZONE_TESTDATA"], !named.isEmpty {
            return URL(fileURLWithPath: named).standardizedFileURL
        }
        return repository.appendingPathComponent(".build/testdata/zones")
    }()

    static let file = folder.appendingPathComponent("ne_110m_south_africa_lesotho.geojson")

    /// Why the file is missing after the script ran (its exit status and stderr), or nil. The first
    /// use runs the script, which does nothing when the files are there.
    static let problem: String? = {
        let script = repository.appendingPathComponent("Tests/Oracles/make_zone_testdata.py").path
        let run = try? ChildProcess.run(["python3", script, folder.path], executable: URL(fileURLWithPath: "/usr/bin/env"), timeLimit: 300)
        if FileManager.default.fileExists(atPath: file.path) { return nil }
        return "\(file.path) is missing: python3 \(script) " + (run.map { "exited \($0.status): \($0.stderr)" } ?? "could not be run")
    }()

    static var available: Bool { problem == nil }
    static var required: Bool { TestInputs.required }
    static var skipMessage: Comment {
        "needs \(file.path), written by python3 and pip from PyPI\(problem.map { " (\($0))" } ?? "") (set FENCEPOST_REQUIRE_SHARED_TESTDATA to make this a failure)"
    }

    /// (longitude, latitude) of the route's towns.
    static let route: [(Double, Double)] = [(27.455, -29.195), (27.485, -29.315), (27.237, -29.823), (27.03, -29.73)]

    /// A folder with `zones.geojson` (the two countries, their geometry as in the file, with ids
    /// `ZAF` and `LSO` from their `iso_a3`) and `drive.nmea`.
    static func prepare(seed: UInt64) throws -> URL {
        try #require(available, "\(problem ?? "")")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-enclave-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let source = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        let features = try #require(source["features"] as? [[String: Any]])
        let zones: [[String: Any]] = try features.map { feature in
            let properties = try #require(feature["properties"] as? [String: Any])
            let id = try #require(properties["iso_a3"] as? String)
            return ["type": "Feature", "id": id, "geometry": try #require(feature["geometry"]), "properties": [String: Any]()]
        }
        try JSONSerialization.data(withJSONObject: ["type": "FeatureCollection", "features": zones])
            .write(to: dir.appendingPathComponent("zones.geojson"))
        try Data(nmea(seed: seed).utf8).write(to: dir.appendingPathComponent("drive.nmea"))
        return dir
    }

    /// The route at 25 m/s, a fix every 5 s, with seeded noise of σ 3 m; the last epoch a no-fix GGA.
    static func nmea(seed: UInt64) -> String {
        var rng = SplitMix64(seed: seed)
        let metresPerDegree = 6_371_008.8 * Double.pi / 180
        let speed = 25.0, step = 5.0
        var lines: [String] = []
        var t = 1_780_315_200   // 2026-06-01 12:00:00 UTC
        func time() -> String { String(format: "%02d%02d%02d.00", (t / 3600) % 24, (t / 60) % 60, t % 60) }
        func emit(_ lon: Double, _ lat: Double, course: Double) {
            let k = cos(lat * .pi / 180)
            let y = lat + rng.gaussian() * 3 / metresPerDegree, x = lon + rng.gaussian() * 3 / (metresPerDegree * k)
            let latText = ReplayAgreementTests.nmeaAngle(y, degreesWidth: 2) + (y < 0 ? ",S" : ",N")
            let lonText = ReplayAgreementTests.nmeaAngle(x, degreesWidth: 3) + (x < 0 ? ",W" : ",E")
            lines.append(ReplayTests.sentence("GPGGA,\(time()),\(latText),\(lonText),1,09,0.8,1500.0,M,20.0,M,,"))
            let knots = String(format: "%.1f", speed / 0.514444), bearing = String(format: "%.1f", course)
            lines.append(ReplayTests.sentence("GPRMC,\(time()),A,\(latText),\(lonText),\(knots),\(bearing),010626,,,A"))
            t += Int(step)
        }
        var carried = 0.0   // metres already driven into the current leg
        for leg in 0 ..< route.count - 1 {
            let (x0, y0) = route[leg], (x1, y1) = route[leg + 1]
            let k = cos((y0 + y1) / 2 * .pi / 180)
            let dx = (x1 - x0) * k * metresPerDegree, dy = (y1 - y0) * metresPerDegree
            let length = (dx * dx + dy * dy).squareRoot()
            let course = (atan2(dx, dy) * 180 / .pi + 360).truncatingRemainder(dividingBy: 360)
            var s = carried
            while s < length {
                let f = s / length
                emit(x0 + f * (x1 - x0), y0 + f * (y1 - y0), course: course)
                s += speed * step
            }
            carried = s - length
        }
        let (xe, ye) = route[route.count - 1]
        emit(xe, ye, course: 0)
        lines.append(ReplayTests.sentence("GPGGA,\(time()),,,,,0,00,99.9,,M,,M,,"))
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// `fencepost replay`'s entries and exits as "zone event" lines, in order.
    static func replayEvents(_ dir: URL) throws -> [String] {
        try ReplayAgreementTests.replayEvents(dir).filter { $0.hasSuffix(" enter") || $0.hasSuffix(" exit") }
    }

    static func expectCrossings(_ events: [String], _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let zaf = events.filter { $0.hasPrefix("ZAF ") }, lso = events.filter { $0.hasPrefix("LSO ") }
        #expect(zaf == ["ZAF enter", "ZAF exit", "ZAF enter"], "South Africa: \(events); \(context)", sourceLocation: sourceLocation)
        #expect(lso == ["LSO enter", "LSO exit"], "Lesotho: \(events); \(context)", sourceLocation: sourceLocation)
    }
}
