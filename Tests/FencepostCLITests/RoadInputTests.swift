import FencepostTestSupport
import Foundation
import Testing

/// Outside input through the real binary: invalid UTF-8 named by line and column,
/// degenerate zones refused naming the zone, durations and instants out of range named by field,
/// never a trap.
@Suite(.processes) struct RoadInputTests {
    static func folder(_ files: [String: [UInt8]]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-road-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, content) in files { try Data(content).write(to: dir.appendingPathComponent(name)) }
        return dir
    }

    /// A config with a Latin-1 byte in a comment, and one in a title, is refused naming the line
    /// and column (never read with U+FFFD in place and nothing said).
    @Test func invalidUTF8InTheConfigIsRefusedWithLineAndColumn() throws {
        let comment = Array("# ok\n# caf".utf8) + [0xE9] + Array("\n[gps]\nsource = \"none\"\n".utf8)
        let title = Array("[[request]]\nid = \"r\"\ncontent = { title = \"Stra".utf8) + [0xDF, 0x65] + Array("\" }\ntrigger.interval.seconds = 60\n".utf8)
        let dir = try Self.folder(["comment.toml": comment, "title.toml": title])
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = try ChildProcess.run(["check-config", dir.appendingPathComponent("comment.toml").path])
        #expect(a.status == 78, "\(a.stdout)")
        #expect(a.stderr.contains("comment.toml:2") && a.stderr.contains("line 2, column 6") && a.stderr.contains("invalid UTF-8"), "\(a.stderr)")
        let b = try ChildProcess.run(["check-config", dir.appendingPathComponent("title.toml").path])
        #expect(b.status == 78, "\(b.stdout)")
        #expect(b.stderr.contains("line 3, column 26") && b.stderr.contains("0xDF"), "\(b.stderr)")
        // `fencepost apply` reads the same file the same way: refused before any agent is asked
        // (it never sends the title with U+FFFD in place of the bad bytes).
        let c = try ChildProcess.run(["apply", dir.appendingPathComponent("title.toml").path, "--socket", dir.appendingPathComponent("none.sock").path])
        #expect(c.status == 65, "\(c.stdout)\(c.stderr)")
        #expect(c.stderr.contains("title.toml:3") && c.stderr.contains("line 3, column 26") && c.stderr.contains("invalid UTF-8"), "\(c.stderr)")
    }

    /// GPX with an invalid byte in a name; GeoJSON zones with one in an id.
    @Test func invalidUTF8InGPXAndGeoJSONIsRefused() throws {
        let gpx = Array("<?xml version=\"1.0\"?>\n<gpx version=\"1.1\"><trk><name>Fahrt ".utf8) + [0xFC]
            + Array("</name><trkseg><trkpt lat=\"48.1\" lon=\"11.5\"><time>2026-01-01T00:00:00Z</time></trkpt></trkseg></trk></gpx>\n".utf8)
        let zones = Array(#"{"type":"FeatureCollection","features":[{"type":"Feature","id":"M"#.utf8) + [0xFC]
            + Array(#"nchen","geometry":{"type":"Point","coordinates":[11.5,48.1]},"properties":{"radius":100}}]}"#.utf8)
        let good = Array(#"{"type":"FeatureCollection","features":[]}"#.utf8)
        let dir = try Self.folder(["drive.gpx": gpx, "zones.geojson": zones, "empty.geojson": good])
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = try ChildProcess.run(["replay", dir.appendingPathComponent("drive.gpx").path, "--zones", dir.appendingPathComponent("empty.geojson").path])
        #expect(a.status != 0)
        #expect(a.stderr.contains("line 2") && a.stderr.contains("UTF-8"), "\(a.stderr)")
        let b = try ChildProcess.run(["replay", dir.appendingPathComponent("drive.gpx").path, "--zones", dir.appendingPathComponent("zones.geojson").path])
        #expect(b.status != 0)
        #expect(b.stderr.contains("UTF-8"), "\(b.stderr)")
    }

    /// A bow-tie polygon and a zero-area ring are refused, naming the request or zone.
    @Test func degenerateZonesAreRefusedNamingThem() throws {
        let bowTie = "[[request]]\nid = \"bowtie\"\ntrigger.location.region.polygon = [[48.0, 11.0], [48.01, 11.01], [48.0, 11.01], [48.01, 11.0]]\n"
        let flat = #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"flat","geometry":{"type":"Polygon","coordinates":[[[11.0,48.0],[11.01,48.0],[11.02,48.0],[11.0,48.0]]]}}]}"#
        let dir = try Self.folder(["bowtie.toml": Array(bowTie.utf8), "zones.geojson": Array(flat.utf8),
                                   "zones.toml": Array("zones = \"zones.geojson\"\n".utf8)])
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = try ChildProcess.run(["check-config", dir.appendingPathComponent("bowtie.toml").path])
        #expect(a.status == 78)
        #expect(a.stderr.contains("bowtie") && a.stderr.contains("crosses itself"), "\(a.stderr)")
        let b = try ChildProcess.run(["check-config", dir.appendingPathComponent("zones.toml").path])
        #expect(b.status == 78)
        #expect(b.stderr.contains("\"flat\"") && b.stderr.contains("zero area"), "\(b.stderr)")
    }

    /// A replay file that is not a regular file (a folder, a device without end) is refused at
    /// start with exit 66 and the reason; it is never read without a bound (`/dev/zero` would
    /// fill the memory).
    @Test func aReplayFileThatCannotBeReadWholeIsRefused() throws {
        for file in ["/dev/zero", FileManager.default.temporaryDirectory.path] {
            let d = try AgentProcess()
            try d.writeConfig("[gps]\nsource = \"replay\"\nfile = \"\(file)\"\n" + DaemonTests.gpio)
            try d.start(agent: true)
            let end = try #require(d.waitForExit(timeout: 30), "still running on \(file); log:\n\(d.stderr)")
            #expect(end.status == 66, "log:\n\(d.stderr)")
            #expect(d.stderr.contains("gps replay: cannot read \(file): not a regular file"), "log:\n\(d.stderr)")
        }
    }

    /// Durations and instants out of range are refused naming the field — in the config, a
    /// category's snooze, GeoJSON — and `simulate` past 2262 says so instead of trapping.
    @Test func outOfRangeDurationsAreNamedNotTrapped() throws {
        let dwell = "[[request]]\nid = \"z\"\ntrigger.location = { region = { circle = { lat = 48.1, lon = 11.5, radius = 50 } }, dwell = 1e300 }\n"
        let radius = "[[request]]\nid = \"z\"\ntrigger.location = { region = { circle = { lat = 48.1, lon = 11.5, radius = 1e-300 } } }\n"
        let snooze = "[[category]]\nid = \"C\"\nactions = [{ id = \"later\", snoozeSeconds = 9223372036854775807 }]\n"
        let cooldown = #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"z","geometry":{"type":"Point","coordinates":[11.5,48.1]},"properties":{"radius":100,"cooldown":1e300}}]}"#
        let requests = #"{"id":"y","trigger":{"calendar":{"match":{"month":1,"day":1,"hour":0},"tz":"UTC","repeats":true}}}"#
        let dir = try Self.folder(["dwell.toml": Array(dwell.utf8), "radius.toml": Array(radius.utf8), "snooze.toml": Array(snooze.utf8),
                                   "zones.geojson": Array(cooldown.utf8), "zones.toml": Array("zones = \"zones.geojson\"\n".utf8),
                                   "r.jsonl": Array(requests.utf8)])
        defer { try? FileManager.default.removeItem(at: dir) }
        for (file, field) in [("dwell.toml", "trigger.location.dwell"), ("radius.toml", "radius"), ("snooze.toml", "snoozeSeconds"),
                              ("zones.toml", "properties.cooldown")] {
            let out = try ChildProcess.run(["check-config", dir.appendingPathComponent(file).path])
            #expect(out.status == 78, "\(file): \(out.stdout)")
            #expect(out.stderr.contains(field), "\(file): \(out.stderr)")
        }
        let sim = try ChildProcess.run(["simulate", "--requests", dir.appendingPathComponent("r.jsonl").path,
                                        "--start", "2026-01-01T00:00:00Z", "--end", "9999-01-01T00:00:00Z", "--tz", "UTC"])
        #expect(sim.status == 64, "\(sim.stdout) \(sim.stderr)")
        #expect(sim.stderr.contains("--end") && sim.stderr.contains("2262"), "\(sim.stderr)")
        // A yearly trigger whose next fires lie past 2262, in a run that ends before: no trap.
        let ok = try ChildProcess.run(["simulate", "--requests", dir.appendingPathComponent("r.jsonl").path,
                                       "--start", "2260-06-01T00:00:00Z", "--end", "2262-04-01T00:00:00Z", "--tz", "UTC"])
        #expect(ok.status == 0, "\(ok.stderr)")
    }
}
