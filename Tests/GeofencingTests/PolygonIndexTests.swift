import Foundation
import Geofencing
import Position
import SeededRandom
import Testing

/// The polygon's edge index against brute force: the even-odd rule over every edge (a horizontal
/// ray, straight edges in longitude/latitude) and the nearest edge by scanning all of them, on
/// seeded random polygons of every kind: stars of up to 100k vertices, holes, several parts,
/// across the antimeridian, continent-sized.
struct PolygonIndexTests {
    static func c(_ lat: Double, _ lon: Double) -> Coordinate { Coordinate(latitude: lat, longitude: lon) }

    /// A star-shaped ring around (lat, lon): `n` vertices at random radii between rMin and rMax degrees.
    static func star(_ rng: inout SplitMix64, lat: Double, lon: Double, n: Int, rMin: Double, rMax: Double) -> [Coordinate] {
        (0 ..< n).map { k in
            let a = 2 * Double.pi * (Double(k) + rng.uniform(0, 0.5)) / Double(n)
            let r = rng.uniform(rMin, rMax)
            var x = lon + r * _cos(a)
            if x > 180 { x -= 360 } else if x < -180 { x += 360 }
            return c(max(-89.9, min(89.9, lat + r * _sin(a))), x)
        }
    }

    /// Working longitudes of a ring unwrapped edge by edge (the documented antimeridian rule).
    static func unwrapped(_ ring: [Coordinate]) -> [SIMD2<Double>] {
        var out = [SIMD2(ring[0].longitude, ring[0].latitude)]
        for i in 1 ..< ring.count {
            var d = ring[i].longitude - ring[i - 1].longitude
            if d > 180 { d -= 360 } else if d < -180 { d += 360 }
            out.append(SIMD2(out[i - 1].x + d, ring[i].latitude))
        }
        return out
    }

    /// Brute force: inside by a horizontal ray over every edge, at the point's longitude and ±360.
    static func bruteContains(_ rings: [[SIMD2<Double>]], _ p: Coordinate) -> Bool {
        for shift in [-360.0, 0, 360] {
            let q = SIMD2(p.longitude + shift, p.latitude)
            var inside = false
            for ring in rings {
                var j = ring.count - 1
                for i in 0 ..< ring.count {
                    let a = ring[j], b = ring[i]
                    if (b.y > q.y) != (a.y > q.y) {
                        let x = a.x + (q.y - a.y) * (b.x - a.x) / (b.y - a.y)
                        if q.x < x { inside.toggle() }
                    }
                    j = i
                }
            }
            if inside { return true }
        }
        return false
    }

    /// Brute force: metres to the nearest edge in the documented metric.
    static func bruteDistance(_ rings: [[SIMD2<Double>]], _ p: Coordinate) -> Double {
        let k = Geodesy.earthRadius * Double.pi / 180
        let scale = SIMD2(max(_cos(p.latitude * Double.pi / 180), 1e-9) * k, k)
        var best = Double.infinity
        for shift in [-360.0, 0, 360] {
            let q = SIMD2(p.longitude + shift, p.latitude)
            for ring in rings {
                var j = ring.count - 1
                for i in 0 ..< ring.count {
                    let a = (ring[j] - q) * scale, b = (ring[i] - q) * scale
                    let ab = b - a
                    let len2 = (ab * ab).sum()
                    let t = len2 > 0 ? min(1, max(0, -(a * ab).sum() / len2)) : 0
                    let d = a + ab * t
                    best = min(best, (d * d).sum().squareRoot())
                    j = i
                }
            }
        }
        return best
    }

    struct Case { var name: String; var parts: [[[Coordinate]]]; var lat: Double; var lon: Double; var spread: Double }

    static func cases(seed: UInt64) -> [Case] {
        var rng = SplitMix64(seed: seed)
        var out: [Case] = []
        // A city: 2,000 vertices, with a hole.
        let lat = rng.uniform(-60, 60), lon = rng.uniform(-170, 170)
        out.append(Case(name: "city with a hole", parts: [[star(&rng, lat: lat, lon: lon, n: 2_000, rMin: 0.05, rMax: 0.1),
                                                           star(&rng, lat: lat, lon: lon, n: 50, rMin: 0.01, rMax: 0.03)]],
                        lat: lat, lon: lon, spread: 0.12))
        // A country across the antimeridian: 5,000 vertices.
        out.append(Case(name: "across the antimeridian", parts: [[star(&rng, lat: -17, lon: 179.5, n: 5_000, rMin: 1, rMax: 3)]],
                        lat: -17, lon: 179.5, spread: 3.5))
        // A continent: wider than 80°, 5,000 vertices.
        out.append(Case(name: "continent", parts: [[star(&rng, lat: 50, lon: 90, n: 5_000, rMin: 20, rMax: 38)]],
                        lat: 50, lon: 90, spread: 40))
        // Three islands, one with a lake.
        let a = star(&rng, lat: 10, lon: 10, n: 300, rMin: 0.5, rMax: 1)
        let lake = star(&rng, lat: 10, lon: 10, n: 40, rMin: 0.1, rMax: 0.3)
        let b = star(&rng, lat: 10, lon: 13, n: 200, rMin: 0.3, rMax: 0.9)
        let d = star(&rng, lat: 12.5, lon: 11.5, n: 100, rMin: 0.2, rMax: 0.5)
        out.append(Case(name: "islands", parts: [[a, lake], [b], [d]], lat: 11, lon: 11.5, spread: 3))
        return out
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func indexAgreesWithBruteForce(seed: UInt64) throws {
        for test in Self.cases(seed: seed) {
            let polygon = try PolygonRegion(parts: test.parts)
            #expect(polygon.parts.count == test.parts.count)
            #expect(polygon.vertexCount == test.parts.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } })
            let rings = test.parts.flatMap { $0 }.map(Self.unwrapped)
            var rng = SplitMix64(seed: seed &* 31 &+ 7)
            var insideCount = 0
            for q in 0 ..< 500 {
                var lon = test.lon + rng.uniform(-test.spread, test.spread)
                if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
                let p = Self.c(max(-90, min(90, test.lat + rng.uniform(-test.spread, test.spread))), lon)
                let d = Self.bruteDistance(rings, p)
                let expected = Self.bruteContains(rings, p)
                if expected { insideCount += 1 }
                // Within rounding of an edge either answer is right.
                if d > 1e-3 {
                    #expect(polygon.contains(p) == expected, "seed \(seed) \(test.name) point \(q) \(p) at \(d) m")
                }
                let signed = polygon.signedDistance(to: p)
                #expect(abs(abs(signed) - d) <= 1e-6 * max(1, d), "seed \(seed) \(test.name) point \(q): \(signed) against \(d)")
                let margin = rng.uniform(-2 * d, 2 * d)
                if abs(abs(margin) - d) > 1e-6 * max(1, d), d > 1e-3 {
                    let within = (expected ? -d : d) <= margin
                    #expect(RegionShape.polygon(polygon).isWithin(p, margin: margin) == within,
                            "seed \(seed) \(test.name) point \(q) margin \(margin) distance \(d)")
                }
            }
            #expect(insideCount > 20, "seed \(seed) \(test.name): only \(insideCount) points inside")
        }
    }

    @Test func crossingsAndOverlapsAreRefusedWithTheirEdges() throws {
        // Two parts that cross.
        let a = [Self.c(0, 0), Self.c(0, 2), Self.c(2, 2), Self.c(2, 0)]
        let b = [Self.c(1, 1), Self.c(1, 3), Self.c(3, 3), Self.c(3, 1)]
        do { _ = try PolygonRegion(parts: [[a], [b]]); Issue.record("crossing parts accepted") } catch {
            #expect("\(error)".contains("part 0 ring 0 edge") && "\(error)".contains("meets part 1 ring 0 edge"), "\(error)")
        }
        // A hole that crosses its outer ring.
        do { _ = try PolygonRegion(rings: [a, [Self.c(1, 1), Self.c(1, 3), Self.c(1.5, 1.5)]]); Issue.record("crossing hole accepted") } catch {
            #expect("\(error)".contains("ring 0 edge") && "\(error)".contains("ring 1 edge"), "\(error)")
        }
        // A hole that shares a stretch of its outer ring's edge.
        do { _ = try PolygonRegion(rings: [a, [Self.c(0, 0.5), Self.c(0, 1), Self.c(1, 0.7)]]); Issue.record("overlap accepted") } catch {
            #expect("\(error)".contains("along a stretch"), "\(error)")
        }
        // A hole touching its outer ring at a vertex is a valid polygon.
        let touching = try PolygonRegion(rings: [a, [Self.c(0, 1), Self.c(1, 1.5), Self.c(1, 0.5)]])
        #expect(!touching.contains(Self.c(0.6, 1)))
        #expect(touching.contains(Self.c(1.5, 1)))
    }

    /// 30,000 vertices build in O(n log n) and answer like brute force.
    @Test func largeRingBuildsAndAnswers() throws {
        var rng = SplitMix64(seed: 99)
        let ring = Self.star(&rng, lat: 51, lon: 10, n: 30_000, rMin: 2, rMax: 3)
        let polygon = try PolygonRegion(vertices: ring)
        let rings = [Self.unwrapped(ring)]
        for q in 0 ..< 40 {
            let p = Self.c(51 + rng.uniform(-3.2, 3.2), 10 + rng.uniform(-3.2, 3.2))
            let d = Self.bruteDistance(rings, p)
            if d > 1e-3 { #expect(polygon.contains(p) == Self.bruteContains(rings, p), "point \(q) \(p)") }
            #expect(abs(abs(polygon.signedDistance(to: p)) - d) <= 1e-6 * max(1, d), "point \(q)")
        }
    }
}

private func _cos(_ x: Double) -> Double { Foundation.cos(x) }
private func _sin(_ x: Double) -> Double { Foundation.sin(x) }
