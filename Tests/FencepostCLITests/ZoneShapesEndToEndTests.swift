import FencepostJSON
import Foundation
import Testing
import FencepostTestSupport

/// Zones as files carry them, through the real binaries: a drive through a hole and across the
/// parts of a MultiPolygon in `replay` (exactly one exit and one enter per crossing), the map and
/// the GeoJSON export with holes and parts, ids from a named property in `replay`, `zones build`
/// and the agent, and the help that says so.
///
/// The drive is `ReplayTests.drive()`: due east along 51° N from 7° E at 10 m/s for 120 s, so
/// the track is at x = 10 m × seconds east of the start.
@Suite(.processes) struct ZoneShapesEndToEndTests {
    /// Longitude `metres` east of 7° E on 51° N.
    static func lon(_ metres: Double) -> Double { 7.0 + metres / ReplayTests.metresPerDegreeLon }

    /// A closed rectangle ring from `x0` to `x1` metres east, ±`half` degrees of latitude.
    static func box(_ x0: Double, _ x1: Double, half: Double) -> String {
        let a = lon(x0), b = lon(x1), s = 51 - half, n = 51 + half
        return "[[\(a),\(s)],[\(b),\(s)],[\(b),\(n)],[\(a),\(n)],[\(a),\(s)]]"
    }

    /// "ring": a polygon from 100 m to 700 m with a hole from 300 m to 500 m (a lake with the
    /// road through it); crossings at 10, 30, 50 and 70 s.
    static let ringFeature = #"{"type":"Feature","properties":{"NAME":"ring"},"geometry":{"type":"Polygon","coordinates":["# + box(100, 700, half: 0.001) + "," + box(300, 500, half: 0.0005) + "]}}"

    /// "pair": one zone of two parts, 800–900 m and 1000–1100 m; crossings at 80, 90, 100, 110 s.
    static let pairFeature = #"{"type":"Feature","properties":{"NAME":"pair"},"geometry":{"type":"MultiPolygon","coordinates":[["# + box(800, 900, half: 0.001) + "],[" + box(1000, 1100, half: 0.001) + "]]}}"

    static func collection(_ features: String...) -> String {
        #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",\n") + "]}"
    }

    struct Event: Equatable, CustomStringConvertible {
        var region: String, event: String, seconds: Double
        var description: String { "\(region) \(event) at \(seconds) s" }
    }

    /// `replay --jsonl` events with their time in seconds after 05:12:00.
    static func events(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [Event] {
        let out = try ChildProcess.run(["replay"] + arguments + ["--jsonl"])
        #expect(out.status == 0, "\(out.stderr)", sourceLocation: sourceLocation)
        return try out.stdoutLines.map { line in
            let o = try JSONValue.parse(line)
            return Event(region: o["region"]?.string ?? "?", event: o["event"]?.string ?? "?",
                         seconds: ReplayTests.secondsAfter0512(o["t"]?.string ?? "") ?? -1)
        }
    }

    static func expect(_ events: [Event], _ expected: [(String, String, Double)], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(events.map { "\($0.region) \($0.event)" } == expected.map { "\($0.0) \($0.1)" }, "\(events)", sourceLocation: sourceLocation)
        for (e, x) in zip(events, expected) {
            #expect(abs(e.seconds - x.2) <= 3, "\(e): expected at \(x.2) s", sourceLocation: sourceLocation)
        }
    }

    /// Through a hole: exit when the road enters the hole, enter when it leaves it — one event per
    /// crossing (without the hole: one enter and one exit at the outer ring).
    @Test func aDriveThroughAHoleExitsAndEntersAgain() throws {
        let folder = try ReplayTests.Folder()
        let log = try folder.write("drive.nmea", ReplayTests.drive())
        let zones = try folder.write("zones.geojson", Self.collection(Self.ringFeature))
        let events = try Self.events([log, "--zones", zones, "--id-property", "NAME"])
        Self.expect(events, [("ring", "enter", 10), ("ring", "exit", 30), ("ring", "enter", 50), ("ring", "exit", 70)])
    }

    /// Across the two parts of one MultiPolygon zone: enter, exit, enter, exit. Needs the
    /// geometry's multi-part polygons (PolygonRegion(parts:) with more than one part).
    @Test func aDriveAcrossTwoPartsOfAMultiPolygonEntersEachPart() throws {
        let folder = try ReplayTests.Folder()
        let log = try folder.write("drive.nmea", ReplayTests.drive())
        let zones = try folder.write("zones.geojson", Self.collection(Self.ringFeature, Self.pairFeature))
        let svg = folder.path("map.svg"), geojson = folder.path("out.geojson")
        let events = try Self.events([log, "--zones", zones, "--id-property", "NAME", "--svg", svg, "--geojson", geojson])
        Self.expect(events, [("ring", "enter", 10), ("ring", "exit", 30), ("ring", "enter", 50), ("ring", "exit", 70),
                             ("pair", "enter", 80), ("pair", "exit", 90), ("pair", "enter", 100), ("pair", "exit", 110)])
        // The map draws both parts in one even-odd path; the export is a MultiPolygon again.
        let map = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(map.contains("<title>pair (polygon, 2 parts)</title>"), "\(map)")
        let export = try JSONValue.parse(String(contentsOfFile: geojson, encoding: .utf8))
        let pair = export["features"]?.array?.first { $0["id"]?.string == "pair" }
        #expect(pair?["geometry"]?["type"]?.string == "MultiPolygon")
        #expect(pair?["geometry"]?["coordinates"]?.array?.count == 2)
    }

    /// The SVG map draws a polygon's holes (one path, even-odd fill) and the GeoJSON export
    /// writes them back; the zone reads back the same from the export.
    @Test func mapAndExportKeepHoles() throws {
        let folder = try ReplayTests.Folder()
        let log = try folder.write("drive.nmea", ReplayTests.drive())
        let zones = try folder.write("zones.geojson", Self.collection(Self.ringFeature))
        let svg = folder.path("map.svg"), geojson = folder.path("out.geojson")
        let out = try ChildProcess.run(["replay", log, "--zones", zones, "--id-property", "NAME", "--svg", svg, "--geojson", geojson])
        #expect(out.status == 0, "\(out.stderr)")
        let map = try String(contentsOfFile: svg, encoding: .utf8)
        let path = try #require(map.split(separator: "\n").first { $0.hasPrefix("<path fill-rule=\"evenodd\"") }, "\(map)")
        #expect(path.components(separatedBy: "M ").count - 1 == 2, "two rings: \(path)")
        #expect(path.components(separatedBy: " Z").count - 1 == 2, "\(path)")
        #expect(path.contains("<title>ring (polygon, 1 hole)</title>"), "\(path)")
        let export = try JSONValue.parse(String(contentsOfFile: geojson, encoding: .utf8))
        let ring = try #require(export["features"]?.array?.first { $0["id"]?.string == "ring" })
        #expect(ring["geometry"]?["type"]?.string == "Polygon")
        #expect(ring["geometry"]?["coordinates"]?.array?.count == 2, "outer ring and hole")
        // Its zone features read back as zones: the same events.
        let zoneFeatures = export["features"]?.array?.filter { $0["properties"]?["kind"]?.string == "zone" } ?? []
        let readBack = try folder.write("back.geojson", JSONValue.object([("type", "FeatureCollection"), ("features", .array(zoneFeatures))]).serialized())
        let again = try Self.events([log, "--zones", readBack])
        Self.expect(again, [("ring", "enter", 10), ("ring", "exit", 30), ("ring", "enter", 50), ("ring", "exit", 70)])
    }

    /// `replay --help` says what each geometry becomes (holes are kept) and how ids are chosen.
    @Test func replayHelpSaysHolesAreKeptAndHowIdsAreChosen() throws {
        let out = try ChildProcess.run(["replay", "--help"])
        #expect(out.status == 0)
        let text = out.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(!text.contains("holes are ignored"), "\(out.stdout)")
        #expect(text.contains("a Polygon is a polygon with its holes (a point in a hole is outside)"), "\(out.stdout)")
        #expect(text.contains("a MultiPolygon is one zone of several parts"), "\(out.stdout)")
        #expect(text.contains("The id is properties.NAME when --id-property NAME is given and the feature has it, else the feature's \"id\", else properties.id."), "\(out.stdout)")
        #expect(text.contains("--id-property <name>"), "\(out.stdout)")
    }

    /// One `zones build` in both executables: the same help, the same options (the id property
    /// among them), the same messages with every bad feature.
    @Test func zonesBuildIsOneCommandInBothExecutables() throws {
        let folder = try ReplayTests.Folder()
        let agent = try #require(ChildProcess.agentBinary, "fencepost-agent not built")
        let cliHelp = try ChildProcess.run(["zones", "build", "--help"])
        let agentHelp = try ChildProcess.run(["zones", "build", "--help"], executable: agent)
        #expect(cliHelp.status == 0 && agentHelp.status == 0)
        for help in [cliHelp.stdout, agentHelp.stdout] {
            let text = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(text.contains("--id-property NAME"), "\(text)")
            #expect(text.contains("--retain-replaced"), "\(text)")
            #expect(text.contains("properties.NAME when the feature has it, else the feature's \"id\""), "\(text)")
        }
        #expect(agentHelp.stdout.hasPrefix("usage: fencepost-agent zones build IN.geojson -o OUT"))
        #expect(cliHelp.stdout.contains("fencepost zones build IN.geojson -o OUT"))

        // QGIS-style: no "id", the zone's name in "fid".
        let input = try folder.write("qgis.geojson", #"""
            {"type":"FeatureCollection","name":"zones","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:OGC:1.3:CRS84"}},
             "features":[
              {"type":"Feature","properties":{"fid":1,"radius":50},"geometry":{"type":"Point","coordinates":[6.77,51.22]}},
              {"type":"Feature","properties":{"fid":2},"geometry":{"type":"Polygon","coordinates":[[[6.5,51.5],[6.51,51.5],[6.51,51.51],[6.5,51.5]]]}},
              {"type":"Feature","properties":{"fid":1,"radius":60},"geometry":{"type":"Point","coordinates":[6.77,51.22]}}]}
            """#)
        for executable in [nil, agent] as [URL?] {
            let output = folder.path("set-\(executable == nil ? "cli" : "agent")")
            let noID = try ChildProcess.run(["zones", "build", input, "-o", output], executable: executable)
            #expect(noID.status == 65)
            let program = executable == nil ? "fencepost" : "fencepost-agent"
            #expect(noID.stderr == """
                \(program) zones build: \(input): feature 0: a zone needs an id: the feature's "id" or properties.id
                \(program) zones build: \(input): feature 1: a zone needs an id: the feature's "id" or properties.id
                \(program) zones build: \(input): feature 2: a zone needs an id: the feature's "id" or properties.id

                """, "\(noID.stderr)")
            let built = try ChildProcess.run(["zones", "build", input, "-o", output, "--id-property", "fid", "--retain-replaced"], executable: executable)
            #expect(built.status == 0, "\(built.stderr)")
            #expect(built.stdout.contains(": 2 zones (1 feature replaced an earlier zone of the same id), "), "\(built.stdout)")
            let unchanged = try ChildProcess.run(["zones", "build", input, "--output=\(output)", "--id-property=fid", "--if-changed"], executable: executable)
            #expect(unchanged.status == 3, "\(unchanged.stderr)")
            // Another id property is another set.
            let other = try ChildProcess.run(["zones", "build", input, "-o", output, "--id-property", "radius", "--if-changed"], executable: executable)
            #expect(other.status == 65, "\(other.stderr)")
            let near = try ChildProcess.run(["zones", "near", "51.503", "6.507", "--set", output, "--radius", "0"])
            #expect(near.stdout.contains("  2  inside"), "\(near.stdout)")
            let usage = try ChildProcess.run(["zones", "build", input, "-o", output, "--id-property"], executable: executable)
            #expect(usage.status == 64)
            #expect(usage.stderr.hasPrefix("\(program) zones build: --id-property needs a property name: --id-property ADM0_A3\n"), "\(usage.stderr)")
        }
    }
}
