import Geofencing
import SeededRandom
import Position
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a random region set lives.
enum Layout: String, CaseIterable, Sendable {
    /// Centres uniform on the sphere.
    case world
    /// Centres within 10 km of one point.
    case cluster
    /// Centres within 2° of the antimeridian or above 80° (north or south).
    case edges
}

/// A seeded random region: a circle, or (one in five) a star-shaped polygon of 3–12 vertices.
func randomShape(_ rng: inout SplitMix64, layout: Layout) -> RegionShape {
    let center: Coordinate
    let size: Double
    switch layout {
    case .world:
        center = rng.pointOnSphere()
        size = exp(rng.uniform(log(10), log(50_000)))
    case .cluster:
        center = destination(Coordinate(latitude: 52.52, longitude: 13.405),
                             bearing: rng.uniform(0, 360), distance: 10_000 * rng.uniform(0, 1).squareRoot())
        size = rng.uniform(10, 300)
    case .edges:
        if rng.uniform(0, 1) < 0.5 {
            center = Coordinate(latitude: rng.uniform(-70, 70), longitude: rng.uniform(178, 182).wrappedLongitude)
        } else {
            let lat = rng.uniform(80, 90)
            center = Coordinate(latitude: rng.uniform(0, 1) < 0.5 ? lat : -lat, longitude: rng.uniform(-180, 180))
        }
        size = exp(rng.uniform(log(10), log(200_000)))
    }
    if rng.uniform(0, 1) < 0.8 {
        return .circle(try! CircularRegion(center: center, radius: size))
    }
    let n = Int(rng.uniform(3, 13))
    var bearings = (0 ..< n).map { _ in rng.uniform(0, 360) }
    bearings.sort()
    let ring = bearings.map { destination(center, bearing: $0, distance: size * rng.uniform(0.3, 1)) }
    // Sorted by bearing, a ring with a gap over 180° can cross itself; such rings are refused
    // (not simple polygons), and a circle stands in (the same random numbers are drawn).
    if let p = try? PolygonRegion(vertices: ring) { return .polygon(p) }
    return .circle(try! CircularRegion(center: center, radius: size))
}

/// A query point: uniform on the sphere, near a random region, or near the antimeridian / poles.
func randomQuery(_ rng: inout SplitMix64, shapes: [RegionShape], layout: Layout) -> Coordinate {
    let r = rng.uniform(0, 1)
    if r < 0.6, let s = shapes.randomElement(using: &rng) {
        let (c, size): (Coordinate, Double) = switch s {
        case .circle(let c): (c.center, c.radius)
        case .polygon(let p): (p.center, p.rings[0].map { Geodesy.distance(p.center, $0) }.max()!)
        }
        return destination(c, bearing: rng.uniform(0, 360), distance: size * rng.uniform(0, 1.5))
    }
    if r < 0.8 {
        switch layout {
        case .world: return rng.pointOnSphere()
        case .cluster:
            return destination(Coordinate(latitude: 52.52, longitude: 13.405), bearing: rng.uniform(0, 360),
                               distance: 11_000 * rng.uniform(0, 1).squareRoot())
        case .edges: break
        }
    }
    if rng.uniform(0, 1) < 0.5 {
        return Coordinate(latitude: rng.uniform(-75, 75), longitude: rng.uniform(177, 183).wrappedLongitude)
    }
    let lat = rng.uniform(79, 90)
    return Coordinate(latitude: rng.uniform(0, 1) < 0.5 ? lat : -lat, longitude: rng.uniform(-180, 180))
}

extension Double {
    var wrappedLongitude: Double { self > 180 ? self - 360 : self < -180 ? self + 360 : self }
}

/// Region sets of 20 … 1M against a brute-force scan of the same exact predicate.
struct RegionIndexTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var regions: Int
        var queries: Int
        var testDescription: String { "\(regions) regions × \(queries) queries" }
    }

    // 89,000 + 10,000 + 1,000 + 150 + 12 ≥ 100,000 queries in all (few for the large sets: the
    // brute-force scan is 1M exact tests per query in a debug build).
    static let cases = [
        Case(regions: 20, queries: 89_000), Case(regions: 1_000, queries: 10_000),
        Case(regions: 10_000, queries: 1_000), Case(regions: 100_000, queries: 150),
        Case(regions: 1_000_000, queries: 12),
    ]

    @Test(arguments: cases)
    func indexMatchesBruteForce(_ c: Case) {
        // Each region and query picks a layout at random: worldwide, clustered (10 km) or at the
        // edges (antimeridian, above 80°), so one set mixes all three.
        let seed: UInt64 = 0x1DE5_0000 &+ UInt64(c.regions)
        var rng = SplitMix64(seed: seed)
        let layouts = Layout.allCases
        let shapes = (0 ..< c.regions).map { _ in randomShape(&rng, layout: layouts.randomElement(using: &rng)!) }
        let index = RegionIndex(shapes.enumerated().map { (slot: Int32($0.offset), shape: $0.element) })
        #expect(index.count == c.regions)
        var got: [Int32] = []
        var mismatches = 0
        var hits = 0
        for q in 0 ..< c.queries {
            let p = randomQuery(&rng, shapes: shapes, layout: layouts.randomElement(using: &rng)!)
            let margin = q % 3 == 0 ? rng.uniform(0, 200) : 0
            index.query(p, margin: margin, into: &got)
            var expected: [Int32] = []
            for i in shapes.indices where shapes[i].isWithin(p, margin: margin) { expected.append(Int32(i)) }
            hits += expected.count
            if got.sorted() != expected {
                mismatches += 1
                if mismatches <= 3 {
                    Issue.record("seed \(seed) query \(q) at \(p) margin \(margin): index \(got.sorted()) brute force \(expected)")
                }
            }
        }
        #expect(mismatches == 0, "seed \(seed)")
        #expect(hits > 0, "the queries should hit some regions (seed \(seed))")
    }

    @Test func emptyIndexAndPoles() throws {
        var out: [Int32] = [1, 2]
        RegionIndex().query(Coordinate(latitude: 1, longitude: 2), into: &out)
        #expect(out.isEmpty)
        // A circle around the North Pole, one across the antimeridian, a polygon across it.
        let pole = try CircularRegion(center: Coordinate(latitude: 89.99, longitude: 10), radius: 5_000)
        let date = try CircularRegion(center: Coordinate(latitude: -16.8, longitude: 179.999), radius: 2_000)
        let fiji = try PolygonRegion(vertices: [
            Coordinate(latitude: -16.7, longitude: 179.9), Coordinate(latitude: -16.7, longitude: -179.9),
            Coordinate(latitude: -16.9, longitude: -179.9), Coordinate(latitude: -16.9, longitude: 179.9),
        ])
        let index = RegionIndex([(0, .circle(pole)), (1, .circle(date)), (2, .polygon(fiji))])
        index.query(Coordinate(latitude: 90, longitude: -170), into: &out)
        #expect(out == [0])
        index.query(Coordinate(latitude: -16.8, longitude: -179.995), into: &out)
        #expect(out.sorted() == [1, 2])
        index.query(Coordinate(latitude: -16.8, longitude: -179.95), into: &out)
        #expect(out == [2])
        #expect(fiji.signedDistance(to: Coordinate(latitude: -16.8, longitude: 180)) < -10_000)
        #expect(fiji.signedDistance(to: Coordinate(latitude: -16.8, longitude: 179.8)) > 10_000)
    }
}
