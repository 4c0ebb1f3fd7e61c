import Geofencing
import Position
import Testing

/// Zones that are not simple polygons are refused (issue 13, defect 4): the even-odd rule would
/// give a bow-tie or a flat ring an inside nobody drew.
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

    @Test func simplePolygonsStillWork() throws {
        let square = try PolygonRegion(vertices: [Self.c(48, 11), Self.c(48, 11.01), Self.c(48.01, 11.01), Self.c(48.01, 11)])
        #expect(square.signedDistance(to: Self.c(48.005, 11.005)) < 0)
        // A repeated vertex is dropped, not refused; a concave ring is fine.
        _ = try PolygonRegion(vertices: [Self.c(48, 11), Self.c(48, 11), Self.c(48, 11.01), Self.c(48.01, 11.01), Self.c(48.005, 11.005), Self.c(48.01, 11)])
        _ = try PolygonRegion(vertices: [Self.c(-16.8, 179.999), Self.c(-16.8, -179.999), Self.c(-16.79, -179.999), Self.c(-16.79, 179.999)])
    }
}
