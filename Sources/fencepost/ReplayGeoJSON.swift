// `fencepost replay --geojson OUT`: the track, the zones and the events as one GeoJSON
// FeatureCollection (RFC 7946), for geojson.io or QGIS, which draw it over a basemap.
//
//   track   MultiLineString, one line per run (broken at gaps, as on the SVG map)
//   zones   a Point with properties.radius (metres) for a circle, a Polygon (with its holes) for
//           a polygon of one part, a MultiPolygon for several parts — the form `--zones` reads,
//           so the file's zones can be read back as zones
//   events  Points with properties.event (enter, exit, dwell, unknown), region and t
import FencepostJSON
import Position
import TrackFormats

enum ReplayGeoJSON {
    static func render(fixes: [Fix], zones: [ZoneDefinition], events: [ReplayEvent], title: String) -> String {
        func position(_ c: Coordinate) -> JSONValue { .array([.number(c.longitude), .number(c.latitude)]) }
        var features: [JSONValue] = []
        let track = ReplayTrack(fixes)
        if !track.runs.isEmpty {
            let lines = track.runs.map { run in JSONValue.array(run.map { position($0.coordinate) }) }
            var properties: [(String, JSONValue)] = [("kind", "track"), ("source", .string(title))]
            if let t = track.first?.time { properties.append(("start", .string(t.description))) }
            if let t = track.last?.time { properties.append(("end", .string(t.description))) }
            properties.append(("gaps", .integer(Int64(track.gaps.count))))
            features.append(.object([
                ("type", "Feature"), ("id", "track"),
                ("geometry", .object([("type", "MultiLineString"), ("coordinates", .array(lines))])),
                ("properties", .object(properties)),
            ]))
        }
        for z in zones {
            var properties: [(String, JSONValue)] = [("kind", "zone")]
            let geometry: JSONValue
            switch z.shape {
            case .circle(let c, let r):
                geometry = .object([("type", "Point"), ("coordinates", position(c))])
                properties.append(("radius", .number(r)))
            case .polygon(let parts):
                // Rings closed, as RFC 7946 asks.
                func polygon(_ rings: [[Coordinate]]) -> JSONValue { .array(rings.map { .array(($0 + $0.prefix(1)).map(position)) }) }
                geometry = parts.count == 1
                    ? .object([("type", "Polygon"), ("coordinates", polygon(parts[0]))])
                    : .object([("type", "MultiPolygon"), ("coordinates", .array(parts.map(polygon)))])
            }
            properties.append(("notifyOnEntry", .bool(z.notifyOnEntry)))
            properties.append(("notifyOnExit", .bool(z.notifyOnExit)))
            if let d = z.dwell { properties.append(("dwell", .number(d))) }
            if let c = z.cooldown { properties.append(("cooldown", .number(c))) }
            features.append(.object([("type", "Feature"), ("id", .string(z.id)), ("geometry", geometry),
                                     ("properties", .object(properties))]))
        }
        for e in events {
            guard let c = e.coordinate else { continue }
            features.append(.object([
                ("type", "Feature"),
                ("geometry", .object([("type", "Point"), ("coordinates", position(c))])),
                ("properties", .object([("kind", "event"), ("event", .string(e.kind.rawValue)), ("region", .string(e.region)),
                                        ("t", .string(ReplayOutput.timeText(e.time, nanoseconds: e.nanoseconds)))])),
            ]))
        }
        return JSONValue.object([("type", "FeatureCollection"), ("features", .array(features))]).serialized() + "\n"
    }
}
