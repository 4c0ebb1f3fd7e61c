import Geofencing
import Position
import Testing

/// Zones that are not simple polygons are refused: the even-odd rule would give a bow-tie or a
/// flat ring an inside nobody drew.
struct DegenerateZoneTests {
    static func c(_ lat: Double, _ lon: Double) -> Coordinate { Coordinate(latitude: lat, longitude: lon) }

    @Test func bowTieIsRefused() {
        #expect(throws: RegionError.self) { try PolygonRegion(vertices: [Self.c(48, 11), Self.c(48.01, 11.01), Self.c(48, 11.01), Self.c(48.01, 11)]) }
        do { _ = try PolygonRegion(vertices: [Self.c(48, 11), Self.c(48.01, 11.01), Self.c(48, 11.01), Self.c(48.01, 11)]) } catch {
            #expect("\(error)".contains("crosses itself"), "\(error)")
        }
    }

    @Test func zeroAreaRingsAreRefused() {
        // Collinear, with and without the closing vertex; a spike that folds back; across the antimeridian.
        for ring in [[Self.c(48, 11), Self.c(48, 11.01), Self.c(48, 11.02)],
                     [Self.c(48, 11), Self.c(48.001, 11.001), Self.c(48.002, 11.002), Self.c(48, 11)],
                     [Self.c(-16.8, 179.999), Self.c(-16.8, -179.999), Self.c(-16.8, -179.99)]] {
            #expect(throws: RegionError.self, "\(ring)") { try PolygonRegion(vertices: ring) }
        }
        #expect(throws: RegionError.self) { try PolygonRegion(vertices: [Self.c(48, 11), Self.c(48, 11.01), Self.c(48.01, 11.01), Self.c(48, 11.01)]) }
    }

    /// Edges are straight in longitude/latitude (RFC 7946): a ring that reaches a pole along the
    /// ±180° meridian and the pole's line (Antarctica as Natural Earth draws it) is a real zone;
    /// a ring that winds around a pole at one latitude without reaching it is a band of zero
    /// area there, refused with the way to draw a cap.
    @Test func polarRings() throws {
        let antarctic = try PolygonRegion(vertices: [Self.c(-80, -180), Self.c(-78, -90), Self.c(-81, 0), Self.c(-79, 90),
                                                     Self.c(-80, 180), Self.c(-90, 180), Self.c(-90, -180)])
        #expect(antarctic.signedDistance(to: Self.c(-89, 0)) < -50_000)
        #expect(antarctic.contains(Self.c(-85, 179.9)) && antarctic.contains(Self.c(-85, -179.9)))
        #expect(!antarctic.contains(Self.c(-70, 0)))
        let wedge = try PolygonRegion(vertices: [Self.c(90, 0), Self.c(89.9, 0), Self.c(89.9, 90)])
        #expect(wedge.signedDistance(to: Self.c(89.92, 45)) < 0)
        #expect(wedge.signedDistance(to: Self.c(89.97, 45)) > 0)   // beyond the straight edge (0, 90)–(90, 89.9)
        for ring in [[Self.c(89, 0), Self.c(89, 90), Self.c(89, 180), Self.c(89, -90)],
                     [Self.c(-89.5, 10), Self.c(-89.5, 130), Self.c(-89.5, -110), Self.c(-89.5, 10)]] {
            do {
                _ = try PolygonRegion(vertices: ring)
                Issue.record("\(ring) accepted")
            } catch {
                #expect("\(error)".contains("winds around the"), "\(error)")
            }
        }
        // A bow-tie at the pole, along one parallel, is still refused.
        #expect(throws: RegionError.self) { try PolygonRegion(vertices: [Self.c(89, 0), Self.c(89, 180), Self.c(89, 90), Self.c(89, -90)]) }
    }

    /// A "ring" along one parallel is a line as drawn, however long (great-circle edges would make
    /// a sliver of it: 490 m wide at 150 km along 48° N), and so is one along a meridian.
    @Test func ringsAlongOneMapLineAreRefusedAtAnyLength() {
        for span in [0.02, 0.5, 2.0, 10.0] {
            #expect(throws: RegionError.self, "along 48° N over \(span)°") {
                try PolygonRegion(vertices: [Self.c(48, 11), Self.c(48, 11 + span / 2), Self.c(48, 11 + span)])
            }
            #expect(throws: RegionError.self, "along 11° E over \(span)°") {
                try PolygonRegion(vertices: [Self.c(48, 11), Self.c(48 + span / 2, 11), Self.c(48 + span, 11)])
            }
        }
    }

    @Test func simplePolygonsStillWork() throws {
        let square = try PolygonRegion(vertices: [Self.c(48, 11), Self.c(48, 11.01), Self.c(48.01, 11.01), Self.c(48.01, 11)])
        #expect(square.signedDistance(to: Self.c(48.005, 11.005)) < 0)
        // A repeated vertex is dropped, not refused; a concave ring is fine.
        _ = try PolygonRegion(vertices: [Self.c(48, 11), Self.c(48, 11), Self.c(48, 11.01), Self.c(48.01, 11.01), Self.c(48.005, 11.005), Self.c(48.01, 11)])
        _ = try PolygonRegion(vertices: [Self.c(-16.8, 179.999), Self.c(-16.8, -179.999), Self.c(-16.79, -179.999), Self.c(-16.79, 179.999)])
    }
}
