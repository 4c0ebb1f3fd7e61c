import Position
import Testing
import TrackFormats

/// Zones from GeoJSON: a good file, and every kind of refusal with its message.
@Suite struct GeoJSONZonesTests {
    @Test func goodFile() throws {
        let text = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[6.7735,51.2277,40]},
               "properties":{"radius":150,"dwell":60,"name":"ignored"}},
              {"type":"Feature","geometry":{"type":"Polygon","coordinates":[
                 [[6.77,51.22],[6.78,51.22],[6.78,51.23],[6.77,51.22]],
                 [[6.771,51.221],[6.772,51.221],[6.772,51.222],[6.771,51.221]]]},
               "properties":{"id":"yard","notifyOnExit":false,"cooldown":300}},
              {"type":"Feature","id":7,"geometry":{"type":"Polygon","coordinates":[[[0,1],[1,1],[1,2]]]},"properties":null}
            ]}
            """
        let zones = try GeoJSONZones.parse(Array(text.utf8))
        #expect(zones == [
            ZoneDefinition(
                id: "depot", shape: .circle(center: Coordinate(latitude: 51.2277, longitude: 6.7735), radius: 150),
                dwell: 60),
            ZoneDefinition(
                id: "yard",
                shape: .polygon([[
                    [Coordinate(latitude: 51.22, longitude: 6.77), Coordinate(latitude: 51.22, longitude: 6.78),
                     Coordinate(latitude: 51.23, longitude: 6.78)],
                    [Coordinate(latitude: 51.221, longitude: 6.771), Coordinate(latitude: 51.221, longitude: 6.772),
                     Coordinate(latitude: 51.222, longitude: 6.772)],
                ]]),
                notifyOnExit: false, cooldown: 300),
            ZoneDefinition(
                id: "7",
                shape: .polygon([[[
                    Coordinate(latitude: 1, longitude: 0), Coordinate(latitude: 1, longitude: 1),
                    Coordinate(latitude: 2, longitude: 1),
                ]]])),
        ])
    }

    @Test func theSameIdReplaces() throws {
        let text = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":1}},
              {"type":"Feature","id":"b","geometry":{"type":"Point","coordinates":[2,2]},"properties":{"radius":2}},
              {"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[3,3]},"properties":{"radius":3}}]}
            """
        let zones = try GeoJSONZones.parse(Array(text.utf8))
        #expect(zones.map(\.id) == ["b", "a"])
        #expect(zones[1].shape == .circle(center: Coordinate(latitude: 3, longitude: 3), radius: 3))
    }

    func message(_ text: String) -> String? {
        do { _ = try GeoJSONZones.parse(Array(text.utf8)); return nil } catch { return error.description }
    }

    func collection(_ features: String...) -> String {
        #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",\n") + "]}"
    }

    static let good = #"{"type":"Feature","id":"ok","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":5}}"#

    /// `report` (the fleet's transitions): off unless the zone says true; anything else refused.
    @Test func reportIsOffUnlessAsked() throws {
        func zone(_ properties: String) -> String {
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"z","geometry":{"type":"Point","coordinates":[6.7,51.2]},"properties":{"radius":50\#(properties)}}]}"#
        }
        #expect(try GeoJSONZones.parse(Array(zone("").utf8)).map(\.report) == [false])
        #expect(try GeoJSONZones.parse(Array(zone(#","report":true"#).utf8)).map(\.report) == [true])
        #expect(try GeoJSONZones.parse(Array(zone(#","report":false"#).utf8)).map(\.report) == [false])
        do {
            _ = try GeoJSONZones.parse(Array(zone(#","report":"yes""#).utf8))
            Issue.record("report \"yes\" accepted")
        } catch {
            #expect(error.description.contains("properties.report must be true or false"), "\(error)")
        }
    }

    @Test func errorsSayWhere() {
        #expect(message("{\"type\":\n  \"FeatureCollection\",,}")?.hasPrefix("line 2, column 23: not JSON: ") == true)
        #expect(message(#"{"type":"Feature"}"#)
            == #"expected a GeoJSON FeatureCollection ("type": "FeatureCollection"), found type "Feature""#)
        #expect(message(#"{"type":"FeatureCollection"}"#) == #""features" must be an array of Feature objects"#)
        #expect(message(collection(Self.good, Self.good, Self.good,
            #"{"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[6.7,51.2]},"properties":{}}"#))
            == #"feature 3 ("depot"): a Point needs properties.radius in metres"#)
        #expect(message(collection(
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[6.7,51.2]},"properties":{"id":"x","radius":-1}}"#))
            == #"feature 0 ("x"): properties.radius must be a positive number of metres, found -1"#)
        #expect(message(collection(
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[6.7,51.2]},"properties":{"radius":3}}"#))
            == #"feature 0: a zone needs an id: the feature's "id" or properties.id"#)
        #expect(message(collection(
            #"{"type":"Feature","id":"l","geometry":{"type":"LineString","coordinates":[[1,1],[2,2]]}}"#))
            == #"feature 0 ("l"): geometry.type "LineString" is not a zone: use a Point with properties.radius, a Polygon or a MultiPolygon"#)
        #expect(message(collection(
            #"{"type":"Feature","id":"p","geometry":{"type":"Polygon","coordinates":[[[1,1],[2,2],[1,1]]]}}"#))
            == #"feature 0 ("p"): geometry.coordinates[0]: a ring needs at least 3 distinct vertices, found 2"#)
        #expect(message(collection(
            #"{"type":"Feature","id":"p","geometry":{"type":"Polygon","coordinates":[[[1,1],[2,2],[200,1]]]}}"#))
            == #"feature 0 ("p"): geometry.coordinates[0][2]: longitude 200.0 is outside -180...180"#)
        #expect(message(collection(
            #"{"type":"Feature","id":"q","geometry":{"type":"Point","coordinates":[51.2,100]},"properties":{"radius":1}}"#))?
            .hasPrefix(#"feature 0 ("q"): geometry.coordinates: latitude 100.0 is outside"#) == true)
        #expect(message(collection(
            #"{"type":"Feature","id":"f","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":1,"notifyOnEntry":"yes"}}"#))
            == #"feature 0 ("f"): properties.notifyOnEntry must be true or false, found "yes""#)
        #expect(message(collection(
            #"{"type":"Feature","id":"d","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"radius":1,"dwell":-5}}"#))
            == #"feature 0 ("d"): properties.dwell must be a number of seconds ≥ 0, found -5"#)
        #expect(message(collection(#"{"type":"Feature","id":"g"}"#))
            == #"feature 0 ("g"): geometry must be a Point, Polygon or MultiPolygon object"#)
        #expect(message(collection("[1]")) == "feature 0: expected a Feature object, found an array")
        #expect(message(collection(#"{"type":"Feature","id":true}"#))
            == "feature 0: id must be a non-empty string or an integer, found a boolean")
    }
}

/// Repeated ids are replaced in one pass, linear in the features: the file is read on SIGHUP
/// inside the agent's loop (a quadratic pass takes 47 s for 50k features with 25k ids).
@Suite struct GeoJSONZonesScaleTests {
    @Test func manyRepeatedIdsAreLinear() throws {
        let features = 40_000, ids = 20_000
        var parts: [String] = []
        parts.reserveCapacity(features)
        for i in 0..<features {
            let id = i % ids
            parts.append(#"{"type":"Feature","id":"z\#(id)","geometry":{"type":"Point","coordinates":[\#(6 + Double(i) / 1e5),51]},"properties":{"radius":\#(10 + i % 7)}}"#)
        }
        let text = #"{"type":"FeatureCollection","features":["# + parts.joined(separator: ",") + "]}"
        let clock = ContinuousClock()
        var zones: [ZoneDefinition] = []
        let took = try clock.measure { zones = try GeoJSONZones.parse(Array(text.utf8)) }
        #expect(zones.count == ids)
        // The later feature of each id wins and takes the later place: z0 … z19999 in order, each
        // with the radius of its second feature.
        #expect(zones.first?.id == "z0" && zones.last?.id == "z\(ids - 1)")
        #expect(zones[0].shape == .circle(center: Coordinate(latitude: 51, longitude: 6 + Double(ids) / 1e5), radius: Double(10 + ids % 7)))
        // The same file with every id distinct: the repeats may not cost much more (a quadratic
        // pass takes minutes here).
        let unique = #"{"type":"FeatureCollection","features":["# + (0..<features).map { i in
            #"{"type":"Feature","id":"u\#(i)","geometry":{"type":"Point","coordinates":[\#(6 + Double(i) / 1e5),51]},"properties":{"radius":\#(10 + i % 7)}}"#
        }.joined(separator: ",") + "]}"
        let baseline = try clock.measure { _ = try GeoJSONZones.parse(Array(unique.utf8)) }
        #expect(took < baseline * 3 + .seconds(1), "\(features) features: \(ids) ids took \(took), all distinct \(baseline)")
    }
}
