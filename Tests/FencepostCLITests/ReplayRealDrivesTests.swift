import FencepostJSON
import FencepostTestSupport
import Foundation
import Testing

/// The real recorded drives in `../shared/testdata/tracks` (NMEA and GPX; see the README there)
/// replay without error: exit 0, fixes, and zones placed on the route produce entries.
///
/// The folder is found from this file: Tests/FencepostCLITests → repository root → ../shared.
/// When it is missing the suite is skipped with a message naming it, unless
/// `FENCEPOST_REQUIRE_SHARED_TESTDATA` is set: then the suite runs and fails naming it.
@Suite(.enabled(if: RealDrives.available || RealDrives.required, RealDrives.skipMessage), .processes)
struct ReplayRealDrivesTests {
    @Test(arguments: RealDrives.files)
    func replaysWithoutError(_ name: String) throws {
        try #require(RealDrives.available, "missing test data folder \(RealDrives.folder.path)")
        let log = RealDrives.folder.appendingPathComponent(name).path
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-drive-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        // 1. The fixes, with an empty zone list.
        let empty = dir.appendingPathComponent("none.geojson")
        try Data(#"{"type":"FeatureCollection","features":[]}"#.utf8).write(to: empty)
        let fixesRun = try ChildProcess.run(["replay", log, "--zones", empty.path, "--fixes", "--jsonl"])
        #expect(fixesRun.status == 0, "\(name): \(fixesRun.stderr)")
        #expect(fixesRun.stderr == "")
        let fixes = try fixesRun.stdoutLines.map { try JSONValue.parse($0) }
        let usable = fixes.filter { ($0["mode"]?.int ?? 1) >= 2 && $0["lat"]?.double != nil && $0["t"]?.string != nil }
        #expect(usable.count > 100, "\(name): \(fixes.count) fixes, \(usable.count) usable")
        try #require(usable.count >= 10)

        // 2. Three circles of 150 m on the route (at 25, 50 and 75 % of the usable fixes), and one
        //    polygon around the middle one: each must be entered.
        var features: [String] = []
        var ids: [String] = []
        for (k, fraction) in [0.25, 0.5, 0.75].enumerated() {
            let f = usable[Int(Double(usable.count - 1) * fraction)]
            let lat = f["lat"]!.double!, lon = f["lon"]!.double!
            ids.append("c\(k)")
            features.append(#"{"type":"Feature","id":"c\#(k)","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":150}}"#)
            if k == 1 {
                let d = 0.002
                let ring = [[lon - d, lat - d], [lon + d, lat - d], [lon + d, lat + d], [lon - d, lat + d], [lon - d, lat - d]]
                ids.append("box")
                features.append(#"{"type":"Feature","id":"box","geometry":{"type":"Polygon","coordinates":[\#(ring)]},"properties":{"dwell":5}}"#)
            }
        }
        let zones = dir.appendingPathComponent("zones.geojson")
        try Data((#"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}").utf8).write(to: zones)
        let svg = dir.appendingPathComponent("map.svg")
        let clock = ContinuousClock.now
        let run = try ChildProcess.run(["replay", log, "--zones", zones.path, "--jsonl", "--svg", svg.path])
        let elapsed = ContinuousClock.now - clock
        #expect(run.status == 0, "\(name): \(run.stderr)")
        #expect(run.stderr == "")
        let events = try run.stdoutLines.map { try JSONValue.parse($0) }
        for id in ["c0", "c1", "c2"] {
            #expect(events.contains { $0["region"]?.string == id && $0["event"]?.string == "enter" },
                    "\(name): no entry into \(id); events: \(run.stdout)")
        }
        #expect(events.contains { $0["region"]?.string == "box" && $0["event"]?.string == "dwell" },
                "\(name): no dwell in box; events: \(run.stdout)")
        // Time order.
        let times = events.compactMap { $0["t"]?.string }
        #expect(times == times.sorted(), "\(name): events out of order")
        #expect(FileManager.default.fileExists(atPath: svg.path))
        print("\(name): \(fixes.count) fixes, \(usable.count) usable, \(events.count) events, replay \(elapsed)")
    }
}

enum RealDrives {
    static let folder: URL = AgentProcess.root.appendingPathComponent("../shared/testdata/tracks").standardizedFileURL

    static let files: [String] = {
        let all = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let logs = all.filter { $0.hasSuffix(".nmea") || $0.hasSuffix(".gpx") }.sorted()
        return logs.isEmpty ? ["(no logs in \(folder.path))"] : logs
    }()

    static var available: Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .contains { $0.hasSuffix(".nmea") || $0.hasSuffix(".gpx") }
    }

    static var required: Bool { TestInputs.required }

    static var skipMessage: Comment {
        "real drives not found in \(folder.path) (set FENCEPOST_REQUIRE_SHARED_TESTDATA to make this a failure)"
    }
}
