@testable import Geofencing
import Position
import SeededRandom
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Circles decided from their 16-bit leaf boxes (LeafDecision.swift) against the exact test,
/// where the bounds are tightest: points a hair inside or outside a circle's boundary.
@Suite struct LeafDecisionTests {
    /// Where the circles of a case lie.
    enum Place: CaseIterable {
        /// 1°×1° near Kassel: leaves of moderate size, most circles decidable.
        case dense
        /// Within 1.5 km of one point: small leaves, boxes near Float's resolution.
        case cluster
        /// 70°–85° north or south: large |tan φ|, wide longitude extents.
        case polar
        /// 2–6.4 km circles packed in 80°–85° N, 0°–5° E: the sphere-against-plane band (large
        /// |tan φ| × radius) is wider than the boxes' rounding there.
        case polarLarge
        /// Anywhere on the sphere, 5 m–50 km (many not decidable: too large, too coarse).
        case world
    }

    static func circles(_ rng: inout SplitMix64, place: Place, count: Int) -> [CircularRegion] {
        (0 ..< count).map { _ in
            let center: Coordinate
            let radius: Double
            switch place {
            case .dense:
                center = Coordinate(latitude: rng.uniform(51, 52), longitude: rng.uniform(9, 10))
                radius = exp(rng.uniform(log(1), log(8000)))
            case .cluster:
                center = destination(Coordinate(latitude: 48.137, longitude: 11.575), bearing: rng.uniform(0, 360),
                                     distance: 1500 * rng.uniform(0, 1).squareRoot())
                radius = rng.uniform(2, 300)
            case .polar:
                let lat = rng.uniform(70, 85)
                center = Coordinate(latitude: rng.chance(0.5) ? lat : -lat, longitude: rng.uniform(-170, 170))
                radius = exp(rng.uniform(log(5), log(7000)))
            case .polarLarge:
                center = Coordinate(latitude: rng.uniform(80, 85), longitude: rng.uniform(0, 5))
                radius = rng.uniform(2000, 6400)
            case .world:
                center = rng.pointOnSphere()
                radius = exp(rng.uniform(log(5), log(50_000)))
            }
            return try! CircularRegion(center: center, radius: radius)
        }
    }

    /// The distance from a circle's centre of a test point: the radius changed by a relative
    /// amount, an absolute one, or both, each either way; a few points well inside or outside.
    static func offsetDistance(_ rng: inout SplitMix64, radius: Double) -> Double {
        let relative: [Double] = [0, 1e-12, 1e-9, 1e-7, 1e-5, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.5]
        let absolute: [Double] = [0, 1e-6, 1e-3, 1e-2, 0.1, 0.5, 2]
        let sign: Double = rng.chance(0.5) ? 1 : -1
        let r = relative[rng.int(0 ... relative.count - 1)], a = absolute[rng.int(0 ... absolute.count - 1)]
        return max(0, radius * (1 + sign * r) + sign * a)
    }

    static func exact(_ circles: [CircularRegion], _ p: Coordinate) -> [Int32] {
        let v = CircularRegion.unitVector(p)
        var out: [Int32] = []
        for (k, c) in circles.enumerated() {
            let u = c.centerUnitVector
            let dx = u.x - v.x, dy = u.y - v.y, dz = u.z - v.z
            if dx * dx + dy * dy + dz * dz <= c.radiusSquaredChord { out.append(Int32(k)) }
        }
        return out
    }

    /// Seeded: circles in each place, points at radius ± tiny amounts on random bearings (and
    /// on the axes, where a box's extent is tight), queried from the in-memory index and from
    /// a zone set of the same circles; both must return exactly the circles whose exact test
    /// holds (a brute-force scan). Prints the seed on failure.
    @Test(arguments: Place.allCases)
    func pointsNearBoundariesAgreeWithTheExactTest(place: Place) throws {
        for seed in [11, 12, 13] as [UInt64] {
            let seed = seed &* 0x9E37 &+ UInt64(Place.allCases.firstIndex(of: place)!)
            var rng = SplitMix64(seed: seed)
            let circles = Self.circles(&rng, place: place, count: 1500)
            let index = RegionIndex(circles.enumerated().map { (slot: Int32($0.offset), shape: RegionShape.circle($0.element)) })
            var zones = ZoneSetBuilder()
            for (k, c) in circles.enumerated() {
                zones.add(try Region.circle("c\(k)", center: c.center, radius: c.radius), content: ZoneContent(title: "c\(k)"))
            }
            let file = ZoneSetTests.Aligned(zones.finish(sourceHash: seed).bytes)
            let set = try ZoneSet(file.raw)
            // The set numbers its zones in tree order; its answers are compared by circle.
            let circleOf = (0 ..< set.count).map { Int32(set.identifier(of: $0).dropFirst())! }
            let decidable = index.parts.frames.reduce(0) { $0 + $1.decidable.nonzeroBitCount }
            // (Polar: leaves over large areas, small circles too coarse; world: many too large.)
            if place != .world { #expect(decidable * (place == .polar ? 4 : 2) > circles.count, "seed \(seed): \(decidable) of \(circles.count) decidable") }
            var fromIndex: [Int32] = [], fromSet: [Int32] = [], mismatches = 0, inside = 0
            for q in 0 ..< 2500 {
                let k = rng.int(0 ... circles.count - 1)
                let c = circles[k]
                let bearing = rng.chance(0.25) ? Double(rng.int(0 ... 3)) * 90 : rng.uniform(0, 360)
                let p = destination(c.center, bearing: bearing, distance: Self.offsetDistance(&rng, radius: c.radius))
                let expected = Self.exact(circles, p)
                index.query(p, into: &fromIndex)
                set.query(p, into: &fromSet)
                fromSet = fromSet.map { circleOf[Int($0)] }
                if expected.contains(Int32(k)) { inside += 1 }
                if fromIndex.sorted() != expected || fromSet.sorted() != expected {
                    mismatches += 1
                    if mismatches <= 5 {
                        Issue.record("seed \(seed) query \(q) at \(p) near circle \(k) (\(c.center), \(c.radius) m): exact \(expected), index \(fromIndex.sorted()), set \(fromSet.sorted())")
                    }
                }
            }
            #expect(mismatches == 0, "seed \(seed)")
            #expect(inside > 500 && inside < 2000, "seed \(seed): both sides of the boundaries should be tested (\(inside) inside)")
        }
    }

    /// The decision itself, on one lane: a circle's box decides points clearly inside or outside
    /// and leaves those within the band to the exact test; never decides wrongly.
    @Test func laneDecisionsAreConservative() throws {
        var rng = SplitMix64(seed: 0x1EAF)
        let circles = Self.circles(&rng, place: .dense, count: 400)
        let index = RegionIndex(circles.enumerated().map { (slot: Int32($0.offset), shape: RegionShape.circle($0.element)) })
        let parts = index.parts
        var decided = 0, undecided = 0
        for (leaf, frame) in parts.frames.enumerated() where frame.decidable != 0 {
            for lane in 0 ..< 16 where frame.decidable & (1 << UInt32(lane)) != 0 {
                let c = circles[Int(parts.slots[16 * leaf + lane])]
                for k in 0 ..< 40 {
                    // Even k: near the boundary (correctness only); odd: 5–50 % of the radius off it.
                    let clear = k % 2 == 1
                    let distance = clear ? c.radius * (1 + (rng.chance(0.5) ? 1 : -1) * rng.uniform(0.05, 0.5))
                                         : Self.offsetDistance(&rng, radius: c.radius)
                    let p = destination(c.center, bearing: rng.uniform(0, 360), distance: distance)
                    let f = frame.frame
                    let u2 = Float(((p.latitude - Double(f[0])) * Double(f[2]) - 32768) * 2)
                    let v2 = Float(((p.longitude - Double(f[1])) * Double(f[3]) - 32768) * 2)
                    let inside = Self.exact([c], p) == [0]
                    let decision = parts.leaves.withUnsafeBufferPointer {
                        RegionIndex.decide($0.baseAddress! + leaf, lane: lane, u2: u2, v2: v2, frame: frame)
                    }
                    switch decision {
                    case .inside: #expect(inside, "circle \(c.center) \(c.radius) m, point \(p)")
                    case .outside: #expect(!inside, "circle \(c.center) \(c.radius) m, point \(p)")
                    case .undecided: break
                    }
                    if clear { if decision == .undecided { undecided += 1 } else { decided += 1 } }
                }
            }
        }
        // Points 5–50 % of a radius off the boundary are decided from the box alone.
        #expect(decided > 0 && undecided * 50 < decided, "\(decided) decided, \(undecided) left to the exact test")
    }
}
