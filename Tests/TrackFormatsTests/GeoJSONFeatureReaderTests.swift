import Position
import SeededRandom
import Testing
@testable import TrackFormats

/// The streaming reader gives what `GeoJSONZones.parse` gives: the same zones, the same refusals.
@Suite struct GeoJSONFeatureReaderTests {
    static func readAll(_ text: String) -> Result<[ZoneDefinition], ZoneFileError> {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { b in
            Result { () throws(ZoneFileError) -> [ZoneDefinition] in
                var reader = try GeoJSONFeatureReader(b)
                var zones: [ZoneDefinition] = []
                var position: [String: Int] = [:]
                var problems = ZoneFileError()
                while let z = reader.next(collecting: &problems) {
                    // The same id replaces (what the zone-set builder does).
                    if let earlier = position[z.id] {
                        zones.remove(at: earlier)
                        for (id, p) in position where p > earlier { position[id] = p - 1 }
                    }
                    position[z.id] = zones.count
                    zones.append(z)
                }
                guard problems.isEmpty else { throw problems }
                return zones
            }
        }
    }

    static func parsed(_ text: String) -> Result<[ZoneDefinition], ZoneFileError> {
        Result { () throws(ZoneFileError) in try GeoJSONZones.parse(Array(text.utf8)) }
    }

    static func collection(_ features: [String], spacing: String = "\n") -> String {
        #"{"type":"FeatureCollection","features":["# + spacing + features.joined(separator: "," + spacing) + "]}"
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func seededFilesReadAlike(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var features: [String] = []
        for k in 0 ..< 300 {
            let id = rng.chance(0.05) ? "dup\(rng.int(0 ... 3))" : "z\(k)\\u00e9\\\"q"
            let lon = rng.uniform(-180, 180), lat = rng.uniform(-89, 89)
            if rng.chance(0.7) {
                features.append(#"{"type":"Feature","id":"\#(id)","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":\#(rng.uniform(1, 900)),"name":"a]}{[","cooldown":\#(rng.int(0 ... 99))}}"#)
            } else {
                features.append(#"{"properties":{"id":"\#(id)","notifyOnExit":false},"type":"Feature","geometry":{"coordinates":[[[\#(lon),\#(lat)],[\#(lon + 0.01),\#(lat)],[\#(lon),\#(lat + 0.01)],[\#(lon),\#(lat)]]],"type":"Polygon"}}"#)
            }
        }
        let spacing = rng.pick(["", "\n", " \r\n\t "])
        let text = rng.chance(0.5) ? Self.collection(features, spacing: spacing)
            : #"{"features":["# + features.joined(separator: ",") + #"],"name":{"x":[1,2]},"type":"FeatureCollection"}"#
        let a = Self.readAll(text), b = Self.parsed(text)
        #expect(a == b, "seed \(seed)")
        if case .success(let zones) = a { #expect(zones.count > 200, "seed \(seed)") }
    }

    static let good = #"{"type":"Feature","id":"ok","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":5}}"#

    /// Each refusal of GeoJSONZonesTests, and top-level damage: the same message.
    @Test func refusalsAreTheSame() {
        let bad = [
            "{\"type\":\n  \"FeatureCollection\",,}",
            #"{"type":"Feature"}"#,
            #"{"type":"FeatureCollection"}"#,
            #"{"type":"FeatureCollection","features":{}}"#,
            #"{"type":"FeatureCollection","features":[]"#,
            #"{"type":"FeatureCollection","features":[],"type":"FeatureCollection"}"#,
            #"{"type":"FeatureCollection","features":[\#(Self.good),]}"#,
            #"{"type":"FeatureCollection","features":[] } x"#,
            #"[]"#,
            "",
            Self.collection([Self.good, Self.good, #"{"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[6.7,51.2]},"properties":{}}"#]),
            Self.collection([#"{"type":"Feature","geometry":{"type":"Point","coordinates":[6.7,51.2]},"properties":{"id":"x","radius":-1}}"#]),
            Self.collection([#"{"type":"Feature","geometry":{"type":"Point","coordinates":[6.7,51.2]},"properties":{"radius":3}}"#]),
            Self.collection([#"{"type":"Feature","id":"l","geometry":{"type":"LineString","coordinates":[[1,1],[2,2]]}}"#]),
            Self.collection([#"{"type":"Feature","id":"p","geometry":{"type":"Polygon","coordinates":[[[1,1],[2,2],[1,1]]]}}"#]),
            Self.collection([Self.good, #"{"type":"Feature","id":"p","geometry":{"type":"Polygon","coordinates":[[[1,1],[2,2],[200,1]]]}}"#]),
            Self.collection([#"{"type":"Feature","id":"f","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":1,"notifyOnEntry":"yes"}}"#]),
            Self.collection([#"{"type":"Feature","id":"g"}"#]),
            Self.collection(["[1]"]),
            Self.collection([#"{"type":"Feature","id":true}"#]),
            Self.collection([Self.good, #"{"type":"Feature","id":"s","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":1,}}"#]),
            Self.collection([Self.good, #"{"type":"Feature","id":"s","id":"t"}"#]),
        ]
        for text in bad {
            let a = Self.readAll(text), b = Self.parsed(text)
            guard case .failure(let ea) = a, case .failure(let eb) = b else {
                Issue.record("not refused by both: \(text)"); continue
            }
            #expect(ea.description == eb.description, "\(text)")
        }
    }
}
