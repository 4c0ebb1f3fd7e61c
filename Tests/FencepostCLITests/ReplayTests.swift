import FencepostJSON
import Foundation
import Testing
import FencepostTestSupport

/// `fencepost replay` end to end through the built binary: a synthetic drive written here.
@Suite(.processes) struct ReplayTests {
    /// A temporary folder with files; removed when the test ends.
    final class Folder {
        let url: URL
        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-replay-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        func write(_ name: String, _ text: String) throws -> String {
            let f = url.appendingPathComponent(name)
            try Data(text.utf8).write(to: f)
            return f.path
        }
        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    }

    static func sentence(_ body: String) -> String {
        let sum = body.utf8.reduce(UInt8(0), ^)
        return "$" + body + "*" + String(format: "%02X", sum)
    }

    static func nmeaLatitude(_ d: Double) -> String {
        let a = abs(d), deg = Int(a)
        return String(format: "%02d%09.6f,%@", deg, (a - Double(deg)) * 60, d < 0 ? "S" : "N")
    }

    static func nmeaLongitude(_ d: Double) -> String {
        let a = abs(d), deg = Int(a)
        return String(format: "%03d%09.6f,%@", deg, (a - Double(deg)) * 60, d < 0 ? "W" : "E")
    }

    /// Metres per degree of longitude at 51° N on the mean-radius sphere.
    static let metresPerDegreeLon = 6_371_008.8 * Double.pi / 180 * cos(51 * Double.pi / 180)

    /// 121 fixes, 1 Hz from 2011-09-15T05:12:00Z, due east along 51° N from 7° E at 10 m/s;
    /// gpsd-style '#' comments at the top; RMC + GGA + GSA per second, CRLF.
    /// `outage`: seconds in which the receiver has no fix (RMC status V, GGA quality 0, the last
    /// position repeated, as the Suwon log does in tunnels).
    static func drive(seconds: ClosedRange<Int> = 0...120, outage: Range<Int> = 0..<0) -> String {
        var lines = ["# Name: synthetic drive", "# Description: due east at 10 m/s, $GPRMC in a comment is ignored"]
        var lastGood = 0
        for s in seconds {
            let fixed = !outage.contains(s)
            if fixed { lastGood = s }
            let lon = 7.0 + Double(lastGood) * 10 / metresPerDegreeLon
            let time = String(format: "%02d%02d%02d.00", 5 + (12 + s / 60) / 60, (12 + s / 60) % 60, s % 60)
            let lat = nmeaLatitude(51.0), lonText = nmeaLongitude(lon)
            if fixed {
                lines.append(sentence("GPRMC,\(time),A,\(lat),\(lonText),19.438,90.0,150911,,,A"))
                lines.append(sentence("GPGGA,\(time),\(lat),\(lonText),1,08,1.0,50.0,M,47.0,M,,"))
                lines.append(sentence("GPGSA,A,3,01,02,03,04,05,06,07,08,,,,,2.0,1.0,1.7"))
            } else {
                lines.append(sentence("GPRMC,\(time),V,\(lat),\(lonText),0.0,0.0,150911,,,N"))
                lines.append(sentence("GPGGA,\(time),\(lat),\(lonText),0,00,,,M,,M,,"))
                lines.append(sentence("GPGSA,A,1,,,,,,,,,,,,,,,"))
            }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// A circle 100 m in radius 600 m east of the start (crossed from about 50 s to 70 s), a
    /// square that the drive enters at about 105 s and does not leave, and a square far away.
    static let zones = """
        {"type":"FeatureCollection","features":[
          {"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[\(7.0 + 600 / metresPerDegreeLon),51.0]},
           "properties":{"radius":100}},
          {"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[7.015,50.999],[7.03,50.999],[7.03,51.001],[7.015,51.001],[7.015,50.999]]]},
           "properties":{"id":"yard"}},
          {"type":"Feature","id":"elsewhere","geometry":{"type":"Polygon","coordinates":[[[8,52],[8.1,52],[8.1,52.1],[8,52]]]}}
        ]}
        """

    struct Event: Equatable { var region: String; var event: String }

    @Test func syntheticDriveGivesTheExpectedEventsInJSONL() throws {
        let folder = try Folder()
        let log = try folder.write("drive.nmea", Self.drive())
        let zones = try folder.write("zones.geojson", Self.zones)
        let out = try ChildProcess.run(["replay", log, "--zones", zones, "--jsonl"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr == "")
        let objects = try out.stdoutLines.map { try JSONValue.parse($0) }
        #expect(objects.map { Event(region: $0["region"]?.string ?? "?", event: $0["event"]?.string ?? "?") } == [
            Event(region: "depot", event: "enter"), Event(region: "depot", event: "exit"),
            Event(region: "yard", event: "enter"),
        ])
        #expect(objects.allSatisfy { $0.object?.map(\.key) == ["t", "region", "event", "lat", "lon"] })
        // Times: the boundary crossings at 50 s, 70 s and 105 s after 05:12:00, within 3 s.
        let expected: [Double] = [50, 70, 105]
        for (o, e) in zip(objects, expected) {
            let t = try #require(o["t"]?.string)
            #expect(t.hasPrefix("2011-09-15T05:1") && t.hasSuffix("Z"))
            let seconds = try #require(Self.secondsAfter0512(t))
            #expect(abs(seconds - e) <= 3, "\(t)")
        }
        let text = out.stdoutLines.joined(separator: "\n")
        #expect(out.stdoutLines.first?.hasPrefix(#"{"t":"2011-09-15T05:12:"#) == true, "\(text)")
    }

    /// Into the circle, then 160 s without a fix (a tunnel), then out: the monitor holds the
    /// state, reports `unknown` 120 s after the last good fix, and the first good fix resolves it.
    @Test func tunnelGivesUnknownThenExit() throws {
        let folder = try Folder()
        let log = try folder.write("tunnel.nmea", Self.drive(seconds: 0...240, outage: 55..<215))
        let zones = try folder.write("zones.geojson", """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[\(7.0 + 600 / Self.metresPerDegreeLon),51.0]},
               "properties":{"radius":100}}]}
            """)
        let out = try ChildProcess.run(["replay", log, "--zones", zones, "--jsonl"])
        #expect(out.status == 0, "\(out.stderr)")
        let objects = try out.stdoutLines.map { try JSONValue.parse($0) }
        #expect(objects.map { $0["event"]?.string ?? "?" } == ["enter", "unknown", "exit"], "\(out.stdout)")
        // The last good fix is at 05:12:54; the timeout is the monitor's (120 s by default).
        #expect(objects.dropFirst().first?["t"]?.string == "2011-09-15T05:14:54Z", "\(out.stdout)")
        let exit = try #require(objects.last?["t"]?.string)
        #expect(exit >= "2011-09-15T05:14:54Z", "the exit is decided at the first good fix after the outage: \(exit)")
    }

    static func secondsAfter0512(_ t: String) -> Double? {
        // 2011-09-15T05:MM:SS[.fff]Z
        let parts = t.dropFirst(14).dropLast().split(separator: ":")
        guard parts.count == 2, let m = Double(parts[0]), let s = Double(parts[1]) else { return nil }
        return (m - 12) * 60 + s
    }

    @Test func readableReport() throws {
        let folder = try Folder()
        let log = try folder.write("drive.nmea", Self.drive())
        let zones = try folder.write("zones.geojson", Self.zones)
        let out = try ChildProcess.run(["replay", log, "--zones", zones])
        #expect(out.status == 0, "\(out.stderr)")
        let lines = out.stdoutLines
        #expect(lines.first?.hasPrefix("Log:    \(log) (NMEA, 363 sentences), 121 fixes, 121 with a usable position") == true,
                "\(out.stdout)")
        #expect(lines.contains("Time:   2011-09-15T05:12:00Z … 2011-09-15T05:14:00Z (2min)"), "\(out.stdout)")
        #expect(lines.contains("Zones:  3 (1 circle, 2 polygons)"))
        #expect(lines.filter { $0.contains("  enter   depot  at 51.000000, 7.00") }.count == 1, "\(out.stdout)")
        #expect(lines.last == "3 events: 2 enter, 1 exit")
    }

    @Test func fixesAsJSONLines() throws {
        let folder = try Folder()
        let log = try folder.write("drive.nmea", Self.drive())
        let zones = try folder.write("zones.geojson", Self.zones)
        let out = try ChildProcess.run(["replay", log, "--zones", zones, "--fixes", "--jsonl"])
        #expect(out.status == 0, "\(out.stderr)")
        let lines = out.stdoutLines
        try #require(lines.count == 121)
        #expect(lines[0].hasPrefix(#"{"t":"2011-09-15T05:12:00Z","lat":51.0,"lon":7.0,"mode":3,"eph":5.0,"speed":"#), "\(lines[0])")
        for line in lines {
            let o = try JSONValue.parse(line)
            #expect(o.object?.map(\.key) == ["t", "lat", "lon", "mode", "eph", "speed"])
            #expect(abs((o["speed"]?.double ?? 0) - 10) < 0.01)
        }
        // Values the source did not give are null; a GPX fraction of a second is kept.
        let gpx = try folder.write("p.gpx", """
            <gpx version="1.0"><trk><trkseg><trkpt lat="51.5" lon="-0.25"/>
            <trkpt lat="51.5" lon="-0.26"><time>2010-02-01T12:31:38.545Z</time><fix>2d</fix><hdop>2</hdop><speed>3.5</speed></trkpt>
            </trkseg></trk></gpx>
            """)
        let g = try ChildProcess.run(["replay", gpx, "--zones", zones, "--fixes", "--jsonl"])
        #expect(g.status == 0, "\(g.stderr)")
        #expect(g.stdoutLines == [
            #"{"t":null,"lat":51.5,"lon":-0.25,"mode":3,"eph":null,"speed":null}"#,
            #"{"t":"2010-02-01T12:31:38.545Z","lat":51.5,"lon":-0.26,"mode":2,"eph":10.0,"speed":3.5}"#,
        ])
    }

    @Test func svgMap() throws {
        let folder = try Folder()
        let log = try folder.write("drive.nmea", Self.drive())
        let zones = try folder.write("zones.geojson", Self.zones)
        let svg = folder.path("map.svg")
        let out = try ChildProcess.run(["replay", log, "--zones", zones, "--jsonl", "--svg", svg])
        #expect(out.status == 0, "\(out.stderr)")
        let text = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(text.hasPrefix("<?xml"))
        #expect(text.contains("<polyline points="))
        #expect(text.contains("<title>depot (circle, 100 m)</title>"))
        #expect(text.contains("enter depot</title>"))
        #expect(text.contains("<path fill-rule=\"evenodd\" d=\"M "))
        #expect(text.hasSuffix("</svg>\n"))
    }

    // MARK: Errors

    @Test func missingFilesExit66() throws {
        let folder = try Folder()
        let zones = try folder.write("zones.geojson", Self.zones)
        let missing = folder.path("nope.nmea")
        let a = try ChildProcess.run(["replay", missing, "--zones", zones])
        #expect(a.status == 66)
        #expect(a.stderr == "fencepost replay: cannot open log \(missing): No such file or directory\n")
        #expect(a.stdout == "")
        let log = try folder.write("drive.nmea", Self.drive())
        let b = try ChildProcess.run(["replay", log, "--zones", folder.path("none.geojson")])
        #expect(b.status == 66)
        #expect(b.stderr.contains("cannot open zones file") && b.stderr.contains("none.geojson"))
        let c = try ChildProcess.run(["replay", folder.url.path, "--zones", zones])
        #expect(c.status == 66, "a directory: \(c.stderr)")
    }

    @Test func badGeoJSONSaysWhere() throws {
        let folder = try Folder()
        let log = try folder.write("drive.nmea", Self.drive())
        let zones = try folder.write("zones.geojson", "{\"type\":\"FeatureCollection\",\n \"features\": [1,]}")
        let out = try ChildProcess.run(["replay", log, "--zones", zones])
        #expect(out.status == 65)
        #expect(out.stderr.hasPrefix("fencepost replay: \(zones): line 2, column 17: not JSON: "), "\(out.stderr)")
        #expect(out.stdout == "")
    }

    @Test func zoneWithoutRadius() throws {
        let folder = try Folder()
        let log = try folder.write("drive.nmea", Self.drive())
        let zones = try folder.write("zones.geojson", """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[7,51]},"properties":{"radius":5}},
              {"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[7,51]},"properties":{"name":"Depot"}}]}
            """)
        let out = try ChildProcess.run(["replay", log, "--zones", zones, "--jsonl"])
        #expect(out.status == 65)
        #expect(out.stderr == "fencepost replay: \(zones): feature 1 (\"depot\"): a Point needs properties.radius in metres\n")
    }

    @Test func badLogs() throws {
        let folder = try Folder()
        let zones = try folder.write("zones.geojson", Self.zones)
        let text = try folder.write("notes.txt", "shopping list\n")
        let a = try ChildProcess.run(["replay", text, "--zones", zones])
        #expect(a.status == 65)
        #expect(a.stderr == "fencepost replay: \(text): not a GPS log: no NMEA sentence ($…*hh) and not GPX (XML)\n")
        let gpx = try folder.write("bad.gpx", "<gpx version=\"1.1\">\n<trk>\n</gpx>\n")
        let b = try ChildProcess.run(["replay", gpx, "--zones", zones])
        #expect(b.status == 65)
        #expect(b.stderr == "fencepost replay: \(gpx): line 3, column 1: expected </trk>, found </gpx>\n")
        let c = try ChildProcess.run(["replay", gpx, "--zones", zones, "--fixes"])
        #expect(c.status == 64, "--fixes without --jsonl is a usage error")
    }

    @Test func helpTeachesWithAnExample() throws {
        let out = try ChildProcess.run(["replay", "--help"])
        #expect(out.status == 0)
        #expect(out.stdout.contains("fencepost replay drive.nmea --zones zones.geojson"))
        #expect(out.stdout.contains("properties.radius"))
        #expect(out.stdout.contains("--fixes"))
    }
}
