import FencepostJSON
import FencepostTestSupport
import Foundation
import Testing

/// The replay map a person reads, rendered to PNG with librsvg; the GeoJSON export read back;
/// `--config` zones; events with lat/lon; a fixes dump without zones.
@Suite(.processes) struct ReplayMapTests {
    static let demoConfig = AgentProcess.root.appendingPathComponent("board/demo/fencepost.toml").path
    static let parisGaps = AgentProcess.root.deletingLastPathComponent()
        .appendingPathComponent("shared/testdata/tracks/paris-fr_2005-07-27_car_64min_gaps.gpx").path

    static func temporary(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("fp-map-\(UUID().uuidString.prefix(8))-\(name)").path
    }

    /// Width and height from a PNG's IHDR chunk.
    static func pngSize(_ data: Data) -> (width: Int, height: Int)? {
        let b = [UInt8](data.prefix(24))
        guard b.count == 24, b[0 ..< 8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], b[12 ..< 16] == [0x49, 0x48, 0x44, 0x52] else { return nil }
        func be(_ i: Int) -> Int { Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3]) }
        return (be(16), be(20))
    }

    /// The value of attribute `name` in an SVG element's text.
    static func attribute(_ name: String, in element: Substring) -> Double? {
        guard let r = element.range(of: " \(name)=\"") else { return nil }
        return Double(element[r.upperBound...].prefix { $0 != "\"" })
    }

    @Test func demoMapRendersToAReadablePNG() throws {
        let svg = Self.temporary("demo.svg"), png = Self.temporary("demo.png")
        defer { try? FileManager.default.removeItem(atPath: svg); try? FileManager.default.removeItem(atPath: png) }
        let out = try ChildProcess.run(["replay", AgentProcess.demoDrive, "--config", Self.demoConfig, "--jsonl", "--svg", svg])
        #expect(out.status == 0, "\(out.stderr)")
        let text = try String(contentsOfFile: svg, encoding: .utf8)
        // Structure: what a map needs.
        for id in ["scale-bar", "north-arrow", "start", "end", "legend", "direction", "labels"] {
            #expect(text.contains("id=\"\(id)\""), "no \(id)")
        }
        #expect(text.contains(">500 m</text>") || text.contains(" km</text>"), "no scale length")
        // Times beside the events (not only in hover titles).
        let labels = text[text.range(of: "<g id=\"labels\"")!.lowerBound ..< text.range(of: "<g id=\"zone-labels\"")!.lowerBound]
        for label in ["14:42:23 enter depot", "14:42:38 exit depot", "14:47:13 enter school-zone", "14:50:37 enter customer", "start 14:42:23", "end 14:52:18"] {
            #expect(labels.contains(">\(label)</text>"), "no label \(label)")
        }
        // The legend names only what occurs: no dwell, unknown or gap on this drive.
        let legend = text[text.range(of: "<g id=\"legend\"")!.lowerBound ..< text.range(of: "<g id=\"north-arrow\"")!.lowerBound]
        for present in [">enter</text>", ">exit</text>", ">start</text>", ">end</text>", ">zone</text>"] { #expect(legend.contains(present), "legend lacks \(present)") }
        for absent in [">dwell</text>", ">unknown</text>", "gap in the fixes"] { #expect(!legend.contains(absent), "legend has \(absent)") }
        // Labels collide with no other label, no event dot, and stay inside the picture.
        let width = try #require(Self.attribute("width", in: text[text.range(of: "<svg")!.lowerBound...]))
        let height = try #require(Self.attribute("height", in: text[text.range(of: "<svg")!.lowerBound...]))
        var boxes: [(Double, Double, Double, Double)] = []
        for line in text.split(separator: "\n") where line.hasPrefix("<text x=") && !line.contains("text-anchor") {
            guard let x = Self.attribute("x", in: line), let y = Self.attribute("y", in: line),
                  let open = line.firstIndex(of: ">"), let close = line.range(of: "</text>") else { continue }
            let count = line[line.index(after: open) ..< close.lowerBound].count
            boxes.append((x, y - 11, x + Double(count) * 6.4, y + 2))
        }
        #expect(boxes.count >= 9)
        for (i, a) in boxes.enumerated() {
            #expect(a.0 >= 0 && a.1 >= 0 && a.2 <= width && a.3 <= height, "label outside: \(a)")
            for b in boxes[(i + 1)...] { #expect(!(a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3), "labels overlap: \(a) \(b)") }
        }
        let events = text[text.range(of: "<g id=\"events\"")!.lowerBound ..< text.range(of: "<g id=\"labels\"")!.lowerBound]
        for dot in events.split(separator: "\n") where dot.hasPrefix("<circle") {
            guard let cx = Self.attribute("cx", in: dot), let cy = Self.attribute("cy", in: dot) else { continue }
            for b in boxes { #expect(!(cx + 5 > b.0 && cx - 5 < b.2 && cy + 5 > b.1 && cy - 5 < b.3), "a label covers the dot at \(cx), \(cy)") }
        }

        // Rendered with librsvg: a PNG of the SVG's size, with something drawn.
        guard let rsvg = RequiredTool.find("rsvg-convert", package: "librsvg2-bin") else { return }
        let r = try BoardSetupTests.exec(rsvg, ["-o", png, svg])
        #expect(r.status == 0, "\(r.output)")
        let data = try Data(contentsOf: URL(fileURLWithPath: png))
        let size = try #require(Self.pngSize(data), "not a PNG")
        #expect(size.width == Int(width.rounded(.up)) || size.width == Int(width.rounded(.down)), "\(size) vs \(width)")
        #expect(size.height == Int(height.rounded(.up)) || size.height == Int(height.rounded(.down)), "\(size) vs \(height)")
        #expect(size.width >= 800 && size.height >= 800)
        // A blank picture of this size compresses to a few kB; the map's lines and text do not.
        #expect(data.count > 25_000 && data.count < 5_000_000, "\(data.count) bytes")
    }

    @Test func gapsAreDrawnAsGapsAndExportedAsBrokenLines() throws {
        guard FileManager.default.fileExists(atPath: Self.parisGaps) else {
            if TestInputs.required { Issue.record("missing \(Self.parisGaps)") }
            else { print("../shared/testdata absent: gaps test skipped") }
            return
        }
        let svg = Self.temporary("gaps.svg"), geo = Self.temporary("gaps.geojson")
        defer { try? FileManager.default.removeItem(atPath: svg); try? FileManager.default.removeItem(atPath: geo) }
        let out = try ChildProcess.run(["replay", Self.parisGaps, "--fixes", "--jsonl", "--svg", svg, "--geojson", geo],
                                       input: "")
        // A map needs zones: --svg without them is refused; with an empty zone file it is drawn.
        #expect(out.status == 64, "\(out.stderr)")
        let zones = Self.temporary("none.geojson")
        try Data(#"{"type":"FeatureCollection","features":[]}"#.utf8).write(to: URL(fileURLWithPath: zones))
        defer { try? FileManager.default.removeItem(atPath: zones) }
        let drawn = try ChildProcess.run(["replay", Self.parisGaps, "--zones", zones, "--svg", svg, "--geojson", geo])
        #expect(drawn.status == 0, "\(drawn.stderr)")
        let text = try String(contentsOfFile: svg, encoding: .utf8)
        let gapLines = text.components(separatedBy: "<title>no usable fix for ").count - 1
        #expect(gapLines >= 1, "no gap drawn")
        #expect(text.contains("gap in the fixes"))
        #expect(!text.contains(">zone</text>") && !text.contains(">enter</text>"), "legend lists what does not occur")
        let polylines = text.components(separatedBy: "<polyline ").count - 1
        let doc = try JSONValue.parse(String(contentsOfFile: geo, encoding: .utf8))
        let track = try #require(doc["features"]?.array?.first { $0["id"] == "track" })
        let lines = try #require(track["geometry"]?["coordinates"]?.array)
        #expect(lines.count == gapLines + 1, "\(lines.count) runs, \(gapLines) gaps")
        #expect(polylines <= lines.count)
        #expect(track["properties"]?["gaps"]?.int64 == Int64(gapLines))
    }

    @Test func geoJSONExportReadsBack() throws {
        let geo = Self.temporary("demo.geojson")
        defer { try? FileManager.default.removeItem(atPath: geo) }
        let out = try ChildProcess.run(["replay", AgentProcess.demoDrive, "--config", Self.demoConfig, "--jsonl", "--geojson", geo])
        #expect(out.status == 0, "\(out.stderr)")
        let events = try out.stdoutLines.filter { !$0.isEmpty }.map { try JSONValue.parse($0) }
        #expect(events.count == 4)
        // Events carry lat/lon.
        for e in events { #expect(e["lat"]?.double != nil && e["lon"]?.double != nil, "\(e)") }
        let doc = try JSONValue.parse(String(contentsOfFile: geo, encoding: .utf8))
        #expect(doc["type"] == "FeatureCollection")
        let features = try #require(doc["features"]?.array)
        #expect(features.filter { $0["properties"]?["kind"] == "track" }.count == 1)
        let zones = features.filter { $0["properties"]?["kind"] == "zone" }
        #expect(Set(zones.compactMap { $0["id"]?.string }) == ["depot", "customer", "school-zone"])
        // The school zone, a TOML polygon in the config, is a closed GeoJSON ring.
        let school = try #require(zones.first { $0["id"] == "school-zone" })
        #expect(school["geometry"]?["type"] == "Polygon")
        let ring = try #require(school["geometry"]?["coordinates"]?[0]?.array)
        #expect(ring.count == 5 && ring.first == ring.last)
        let exported = features.filter { $0["properties"]?["kind"] == "event" }
        #expect(exported.count == events.count)
        for (e, f) in zip(events, exported) {
            #expect(f["properties"]?["event"] == e["event"] && f["properties"]?["region"] == e["region"] && f["properties"]?["t"] == e["t"])
            #expect(f["geometry"]?["coordinates"] == .array([e["lon"]!, e["lat"]!]))
        }
        // The zones read back through --zones give the same events as --config.
        let zoneFile = Self.temporary("zones.geojson")
        defer { try? FileManager.default.removeItem(atPath: zoneFile) }
        try Data(JSONValue.object([("type", "FeatureCollection"), ("features", .array(zones))]).serialized().utf8)
            .write(to: URL(fileURLWithPath: zoneFile))
        let again = try ChildProcess.run(["replay", AgentProcess.demoDrive, "--zones", zoneFile, "--jsonl"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout == out.stdout)
    }

    @Test func fixesDumpNeedsNoZonesButEventsDo() throws {
        let dump = try ChildProcess.run(["replay", AgentProcess.demoDrive, "--fixes", "--jsonl"])
        #expect(dump.status == 0, "\(dump.stderr)")
        #expect(dump.stdoutLines.count > 500)
        let events = try ChildProcess.run(["replay", AgentProcess.demoDrive])
        #expect(events.status == 64 && events.stderr.contains("--config"), "\(events.stderr)")
        let bad = try ChildProcess.run(["replay", AgentProcess.demoDrive, "--config", "/nonexistent.toml"])
        #expect(bad.status == 66, "\(bad.stderr)")
        let help = try ChildProcess.run(["replay", "--help"]).stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        #expect(help.contains("reports dwell instead of enter"), "dwell is not documented")
    }
}
