import Position
import Testing
@testable import TrackFormats

/// Zones as files carry them: every geometry a zone can be, ids from a named property, and bad
/// input (all of it reported, BOM, float noise, crs). Each refusal is checked by its exact message,
/// through `GeoJSONZones.parse` and through the streaming reader the zone-set build uses.
@Suite struct GeoJSONZoneShapesTests {
    static func collection(_ features: String..., top: String = "") -> String {
        #"{"type":"FeatureCollection",\#(top)"features":["# + features.joined(separator: ",\n") + "]}"
    }

    static func parse(_ text: String, idProperty: String? = nil) -> Result<[ZoneDefinition], ZoneFileError> {
        Result { () throws(ZoneFileError) in try GeoJSONZones.parse(Array(text.utf8), idProperty: idProperty) }
    }

    /// What the streaming reader gives (bad features collected, repeated ids replaced as the
    /// zone-set builder replaces them).
    static func stream(_ bytes: [UInt8], idProperty: String? = nil) -> Result<[ZoneDefinition], ZoneFileError> {
        bytes.withUnsafeBufferPointer { b in
            Result { () throws(ZoneFileError) -> [ZoneDefinition] in
                var reader = try GeoJSONFeatureReader(b, idProperty: idProperty)
                var problems = ZoneFileError()
                var zones: [ZoneDefinition] = []
                while let z = reader.next(collecting: &problems) {
                    zones.removeAll { $0.id == z.id }
                    zones.append(z)
                }
                guard problems.isEmpty else { throw problems }
                return zones
            }
        }
    }

    /// Both readers' zones, which must agree.
    static func zones(_ text: String, idProperty: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> [ZoneDefinition] {
        let a = parse(text, idProperty: idProperty), b = stream(Array(text.utf8), idProperty: idProperty)
        #expect(a == b, "the streaming reader disagrees", sourceLocation: sourceLocation)
        return try a.get()
    }

    /// Both readers' refusal, which must be the same text.
    static func refusal(_ text: String, idProperty: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        refusal(bytes: Array(text.utf8), idProperty: idProperty, sourceLocation: sourceLocation)
    }

    static func refusal(bytes: [UInt8], idProperty: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        guard case .failure(let a) = parse(String(decoding: bytes, as: UTF8.self), idProperty: idProperty) else { return nil }
        guard case .failure(let b) = stream(bytes, idProperty: idProperty) else {
            Issue.record("the streaming reader accepts what parse refuses: \(a)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(a.description == b.description, "the streaming reader words it otherwise", sourceLocation: sourceLocation)
        return a.description
    }

    static func c(_ lon: Double, _ lat: Double) -> Coordinate { Coordinate(latitude: lat, longitude: lon) }

    // MARK: Geometries

    /// A Polygon keeps its holes; a MultiPolygon is one zone of several parts (holes in each);
    /// 3D positions lose their altitude.
    @Test func polygonWithHolesAndMultiPolygonKeepEveryPartAndHole() throws {
        let text = Self.collection(
            #"{"type":"Feature","id":"lake","geometry":{"type":"Polygon","coordinates":[[[0,0,5],[4,0,5],[4,4,5],[0,4,5],[0,0,5]],[[1,1],[2,1],[2,2],[1,1]]]}}"#,
            #"{"type":"Feature","id":"islands","geometry":{"type":"MultiPolygon","coordinates":[[[[10,0],[11,0],[11,1],[10,0]]],[[[20,0],[24,0],[24,4],[20,4],[20,0]],[[21,1],[22,1],[22,2],[21,1]]]]}}"#)
        let zones = try Self.zones(text)
        #expect(zones.map(\.id) == ["lake", "islands"])
        #expect(zones[0].shape == .polygon([[[Self.c(0, 0), Self.c(4, 0), Self.c(4, 4), Self.c(0, 4)],
                                            [Self.c(1, 1), Self.c(2, 1), Self.c(2, 2)]]]))
        #expect(zones[1].shape == .polygon([
            [[Self.c(10, 0), Self.c(11, 0), Self.c(11, 1)]],
            [[Self.c(20, 0), Self.c(24, 0), Self.c(24, 4), Self.c(20, 4)], [Self.c(21, 1), Self.c(22, 1), Self.c(22, 2)]],
        ]))
        #expect(Self.refusal(Self.collection(#"{"type":"Feature","id":"m","geometry":{"type":"MultiPolygon","coordinates":[]}}"#))
            == #"feature 0 ("m"): geometry.coordinates of a MultiPolygon must be a non-empty array of polygons (arrays of rings)"#)
        #expect(Self.refusal(Self.collection(#"{"type":"Feature","id":"m","geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],[[[5,5],[6,6],[5,5]]]]}}"#))
            == #"feature 0 ("m"): geometry.coordinates[1][0]: a ring needs at least 3 distinct vertices, found 2"#)
        #expect(Self.refusal(Self.collection(#"{"type":"Feature","id":"h","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]],[[0.1,0.1],[0.2,0.1],[0.1,0.1]]]}}"#))
            == #"feature 0 ("h"): geometry.coordinates[1]: a ring needs at least 3 distinct vertices, found 2"#)
    }

    /// A GeometryCollection of Polygons and MultiPolygons is one zone of all their parts; any other
    /// member is refused by its type and place.
    @Test func geometryCollectionOfPolygonsIsOneZoneOtherMembersRefused() throws {
        let good = Self.collection(#"""
            {"type":"Feature","id":"gc","geometry":{"type":"GeometryCollection","geometries":[
              {"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]},
              {"type":"MultiPolygon","coordinates":[[[[5,5],[6,5],[6,6],[5,5]]],[[[8,8],[9,8],[9,9],[8,8]]]]}]}}
            """#)
        let zones = try Self.zones(good)
        #expect(zones == [ZoneDefinition(id: "gc", shape: .polygon([
            [[Self.c(0, 0), Self.c(1, 0), Self.c(1, 1)]],
            [[Self.c(5, 5), Self.c(6, 5), Self.c(6, 6)]],
            [[Self.c(8, 8), Self.c(9, 8), Self.c(9, 9)]],
        ]))])
        #expect(Self.refusal(Self.collection(#"""
            {"type":"Feature","id":"gc","geometry":{"type":"GeometryCollection","geometries":[
              {"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]},
              {"type":"LineString","coordinates":[[0,0],[1,1]]}]}}
            """#)) == #"feature 0 ("gc"): geometry.geometries[1] is a "LineString": a GeometryCollection is a zone only when every member is a Polygon or MultiPolygon"#)
        #expect(Self.refusal(Self.collection(#"{"type":"Feature","id":"e","geometry":{"type":"GeometryCollection","geometries":[]}}"#))
            == #"feature 0 ("e"): geometry.geometries of a GeometryCollection must be a non-empty array of geometries"#)
    }

    /// Lines and point sets are not zones, and neither is a Point without a radius: each is refused
    /// naming the type and the feature.
    @Test func linesPointSetsAndBarePointsAreRefusedByTypeAndFeature() {
        let reason = "is not a zone: use a Point with properties.radius, a Polygon or a MultiPolygon"
        #expect(Self.refusal(Self.collection(#"{"type":"Feature","id":"road","geometry":{"type":"LineString","coordinates":[[6.7,51.2],[6.8,51.3]]}}"#))
            == #"feature 0 ("road"): geometry.type "LineString" "# + reason)
        #expect(Self.refusal(Self.collection(Self.ok, #"{"type":"Feature","id":"roads","geometry":{"type":"MultiLineString","coordinates":[[[6.7,51.2],[6.8,51.3]]]}}"#))
            == #"feature 1 ("roads"): geometry.type "MultiLineString" "# + reason)
        #expect(Self.refusal(Self.collection(#"{"type":"Feature","properties":{"id":"stops"},"geometry":{"type":"MultiPoint","coordinates":[[6.7,51.2]]}}"#))
            == #"feature 0 ("stops"): geometry.type "MultiPoint" "# + reason)
        #expect(Self.refusal(Self.collection(#"{"type":"Feature","id":"pin","geometry":{"type":"Point","coordinates":[6.7,51.2]},"properties":{"name":"x"}}"#))
            == #"feature 0 ("pin"): a Point needs properties.radius in metres"#)
    }

    static let ok = #"{"type":"Feature","id":"ok","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":5}}"#

    // MARK: Ids

    /// With an id property named, a feature's id is that property when it has it (over its "id"),
    /// else its "id", else properties.id; integers become their decimal text. Without one: "id",
    /// else properties.id. A feature with none of them is refused naming all three.
    @Test func idsComeFromTheNamedPropertyThenIdThenPropertiesId() throws {
        let text = Self.collection(
            #"{"type":"Feature","id":"f-1","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":5,"ADM0_A3":"ZAF","id":"p-1"}}"#,
            #"{"type":"Feature","id":7,"geometry":{"type":"Point","coordinates":[2,2]},"properties":{"radius":5}}"#,
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[3,3]},"properties":{"radius":5,"ADM0_A3":716}}"#,
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[4,4]},"properties":{"radius":5,"ADM0_A3":null,"id":"p-4"}}"#)
        #expect(try Self.zones(text, idProperty: "ADM0_A3").map(\.id) == ["ZAF", "7", "716", "p-4"])
        // Without a named property, feature 2 has no id.
        #expect(Self.refusal(text) == #"feature 2: a zone needs an id: the feature's "id" or properties.id"#)
        let none = Self.collection(#"{"type":"Feature","geometry":{"type":"Point","coordinates":[3,3]},"properties":{"radius":5,"NAME":"x"}}"#)
        #expect(Self.refusal(none, idProperty: "fid")
            == #"feature 0: a zone needs an id: properties.fid, the feature's "id" or properties.id"#)
        let wrong = Self.collection(#"{"type":"Feature","geometry":{"type":"Point","coordinates":[3,3]},"properties":{"radius":5,"fid":[1]}}"#)
        #expect(Self.refusal(wrong, idProperty: "fid")
            == "feature 0: properties.fid must be a non-empty string or an integer, found an array")
        // A QGIS export: fid as the id; a repeated one replaces the earlier zone, as "id" does.
        let qgis = Self.collection(
            #"{"type":"Feature","properties":{"fid":1,"radius":5},"geometry":{"type":"Point","coordinates":[1,1]}}"#,
            #"{"type":"Feature","properties":{"fid":2,"radius":5},"geometry":{"type":"Point","coordinates":[2,2]}}"#,
            #"{"type":"Feature","properties":{"fid":1,"radius":9},"geometry":{"type":"Point","coordinates":[3,3]}}"#)
        let zones = try Self.zones(qgis, idProperty: "fid")
        #expect(zones.map(\.id) == ["2", "1"])
        #expect(zones[1].shape == .circle(center: Self.c(3, 3), radius: 9))
    }

    // MARK: Bad input

    /// Every bad feature is reported, each with its index, id and reason: the first 20, then a
    /// count. The good features between them do not hide them.
    @Test func everyBadFeatureIsReportedUpTo20ThenACount() {
        var features: [String] = []
        for k in 0 ..< 30 {
            if k % 6 == 5 { features.append(#"{"type":"Feature","id":"ok\#(k)","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":5}}"#); continue }
            switch k % 3 {
            case 0: features.append(#"{"type":"Feature","id":"r\#(k)","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":-\#(k + 1)}}"#)
            case 1: features.append(#"{"type":"Feature","id":"l\#(k)","geometry":{"type":"LineString","coordinates":[[1,1],[2,2]]}}"#)
            default: features.append(#"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":3}}"#)
            }
        }
        let text = #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"
        var expected: [String] = []
        for k in 0 ..< 30 where k % 6 != 5 {
            switch k % 3 {
            case 0: expected.append(#"feature \#(k) ("r\#(k)"): properties.radius must be a positive number of metres, found -\#(k + 1)"#)
            case 1: expected.append(#"feature \#(k) ("l\#(k)"): geometry.type "LineString" is not a zone: use a Point with properties.radius, a Polygon or a MultiPolygon"#)
            default: expected.append(#"feature \#(k): a zone needs an id: the feature's "id" or properties.id"#)
            }
        }
        #expect(expected.count == 25)
        let message = Self.refusal(text)
        #expect(message == (expected.prefix(20) + ["and 5 more bad features (25 in all)"]).joined(separator: "\n"), "\(message ?? "accepted")")
        // Two bad features: both, no count.
        #expect(Self.refusal(Self.collection(features[0], features[1], Self.ok)) == expected[0] + "\n" + expected[1])
    }

    /// A UTF-8 byte-order mark (Windows editors write one) is skipped; a syntax error after it
    /// is still placed by line and column of the file's bytes.
    @Test func byteOrderMarkIsAccepted() throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let text = Self.collection(Self.ok)
        let bytes = bom + Array(text.utf8)
        #expect(try GeoJSONZones.parse(bytes).map(\.id) == ["ok"])
        #expect(try Self.stream(bytes).get().map(\.id) == ["ok"])
        #expect(Self.refusal(bytes: bom + Array(#"{"type":"FeatureCollection",,}"#.utf8))
            == "line 1, column 29: not JSON: expected a string key, found ','")
    }

    /// Float noise past ±180/±90 (Natural Earth has 180.00000000000017) is clamped, up to 1e-9°;
    /// anything further is refused with the position's place.
    @Test func floatNoisePastTheAntimeridianAndPolesIsClamped() throws {
        let noisy = Self.collection(
            #"{"type":"Feature","id":"fiji","geometry":{"type":"Polygon","coordinates":[[[179.5,-16],[180.00000000000017,-16],[180.00000000000017,-17],[179.5,-16]]]}}"#,
            #"{"type":"Feature","id":"pole","geometry":{"type":"Point","coordinates":[-180.0000000005,-90.0000000005]},"properties":{"radius":10}}"#)
        let zones = try Self.zones(noisy)
        #expect(zones[0].shape == .polygon([[[Self.c(179.5, -16), Self.c(180, -16), Self.c(180, -17)]]]))
        #expect(zones[1].shape == .circle(center: Self.c(-180, -90), radius: 10))
        #expect(Self.refusal(Self.collection(#"{"type":"Feature","id":"far","geometry":{"type":"Polygon","coordinates":[[[179.5,-16],[180.000001,-16],[180,-17],[179.5,-16]]]}}"#))
            == #"feature 0 ("far"): geometry.coordinates[0][1]: longitude 180.000001 is outside -180...180"#)
        #expect(Self.refusal(Self.collection(#"{"type":"Feature","id":"n","geometry":{"type":"Point","coordinates":[0,90.00001]},"properties":{"radius":1}}"#))
            == #"feature 0 ("n"): geometry.coordinates: latitude 90.00001 is outside -90...90 (positions are [longitude, latitude])"#)
    }

    /// A `crs` naming WGS 84 longitude/latitude (CRS84, EPSG:4326, in their URN forms) is
    /// accepted; a projected one is refused by name, never read as degrees.
    @Test func crsOtherThanCRS84OrEPSG4326IsRefusedByName() throws {
        for name in ["urn:ogc:def:crs:OGC:1.3:CRS84", "urn:ogc:def:crs:OGC::CRS84", "urn:ogc:def:crs:EPSG::4326", "EPSG:4326"] {
            let text = Self.collection(Self.ok, top: #""crs":{"type":"name","properties":{"name":"\#(name)"}},"#)
            #expect(try Self.zones(text).map(\.id) == ["ok"], "\(name)")
        }
        let reproject = "is not longitude/latitude on WGS 84: reproject the file to EPSG:4326 (e.g. ogr2ogr -t_srs EPSG:4326 out.geojson in.geojson)"
        #expect(Self.refusal(Self.collection(Self.ok, top: #""crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::25832"}},"#))
            == #"crs "urn:ogc:def:crs:EPSG::25832" "# + reproject)
        #expect(Self.refusal(Self.collection(Self.ok, top: #""crs":{"type":"EPSG","properties":{"code":25832}},"#))
            == #"crs "EPSG:25832" "# + reproject)
        #expect(Self.refusal(Self.collection(Self.ok, top: #""crs":"EPSG:25832","#))
            == #"crs "EPSG:25832" is not understood: zones are longitude/latitude on WGS 84 (leave out crs, or name urn:ogc:def:crs:OGC:1.3:CRS84)"#)
    }
}
