import Geofencing
import SeededRandom
import Position

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif hasFeature(Embedded)
import CLibm
#endif

/// The geofence workload, shared by `Benchmarks/GeofenceBenchmarks` and the on-device
/// `fencepost bench`: seeded circle sets and query points (SplitMix64), one definition, no copies.
public enum GeofenceWorkload {
    public enum Spread: String, Sendable, CaseIterable {
        /// Centres uniform over Germany's bounding box (47.3…55.0°N, 5.9…15.0°E), radii 50–500 m.
        case uniform
        /// Centres within 10 km of Berlin's centre, radii 20–100 m (a city's delivery addresses).
        case clustered
    }

    public struct Circle: Sendable {
        public var center: Coordinate
        public var radius: Double
    }

    static let berlin = Coordinate(latitude: 52.52, longitude: 13.405)

    /// `count` circles.
    public static func circles(count: Int, spread: Spread, seed: UInt64 = 0x6E0F_E7CE) -> [Circle] {
        var rng = Generator(seed: seed ^ UInt64(count))
        return (0 ..< count).map { _ in
            switch spread {
            case .uniform:
                return Circle(center: Coordinate(latitude: rng.uniform(47.3, 55.0), longitude: rng.uniform(5.9, 15.0)),
                              radius: rng.uniform(50, 500))
            case .clustered:
                return Circle(center: rng.inDisk(berlin, radius: 10_000), radius: rng.uniform(20, 100))
            }
        }
    }

    /// `count` fix positions: half near a random circle of `circles` (within 1.5 radii), half
    /// uniform over the spread's area.
    public static func queries(count: Int, spread: Spread, near circles: [Circle], seed: UInt64 = 0x0F1C_5EED) -> [Coordinate] {
        var rng = Generator(seed: seed)
        return (0 ..< count).map { i in
            if i % 2 == 0, !circles.isEmpty {
                let c = circles[Int(rng.next() % UInt64(circles.count))]
                return rng.inDisk(c.center, radius: 1.5 * c.radius)
            }
            switch spread {
            case .uniform: return Coordinate(latitude: rng.uniform(47.3, 55.0), longitude: rng.uniform(5.9, 15.0))
            case .clustered: return rng.inDisk(berlin, radius: 10_000)
            }
        }
    }

    /// The circles as regions (identifiers "z0", "z1", …) for a ``RegionMonitor``.
    public static func regions(_ circles: [Circle]) -> [Region] {
        circles.enumerated().map { i, c in
            Region(identifier: "z\(i)", shape: .circle(try! CircularRegion(center: c.center, radius: c.radius)))
        }
    }

    /// `count` star-shaped polygons of `vertices` vertices each, 0.5–2 km across, identifiers "p0",
    /// "p1", …: every other one centred on ``drive(count:spread:seed:)``'s line (so that the drive
    /// crosses them), the rest anywhere over the uniform spread's area.
    public static func polygons(count: Int, vertices: Int, seed: UInt64 = 0x9017_60F5) -> [Region] {
        var rng = Generator(seed: seed)
        let rad = Double.pi / 180
        return (0 ..< count).map { i in
            let centre: Coordinate
            if i % 2 == 0 {
                let d = rng.uniform(0, 14.0 * 36_000)
                let lat = 50.0 + d * cos(45 * rad) / 111_195
                centre = Coordinate(latitude: lat, longitude: 8.0 + d * sin(45 * rad) / (111_195 * cos(lat * rad)))
            } else {
                centre = Coordinate(latitude: rng.uniform(47.3, 55.0), longitude: rng.uniform(5.9, 15.0))
            }
            // A border as maps draw it: a smooth outline with detail at every scale (amplitude
            // falling with frequency), sampled densely.
            let r0 = rng.uniform(250, 800)
            let waves = (2 ..< 40).map { f in (Double(f), 0.3 / pow(Double(f), 1.2) * rng.uniform(0.5, 1), rng.uniform(0, 2 * Double.pi)) }
            let ring = (0 ..< vertices).map { k -> Coordinate in
                let a = 2 * Double.pi * Double(k) / Double(vertices)
                var r = r0
                for (f, amplitude, phase) in waves { r += r0 * amplitude * sin(f * a + phase) }
                return Coordinate(latitude: centre.latitude + r * sin(a) / 111_195,
                                  longitude: centre.longitude + r * cos(a) / (111_195 * cos(centre.latitude * rad)))
            }
            return Region(identifier: "p\(i)", shape: .polygon(try! PolygonRegion(vertices: ring)))
        }
    }

    /// The circles' index.
    public static func index(_ circles: [Circle]) -> RegionIndex {
        RegionIndex(circles.enumerated().lazy.map { i, c in
            (slot: Int32(i), shape: RegionShape.circle(try! CircularRegion(center: c.center, radius: c.radius)))
        })
    }

    /// The brute-force baseline: how many circles contain `p`, by a haversine scan.
    @inlinable
    public static func bruteForceCount(_ circles: [Circle], _ p: Coordinate) -> Int {
        var n = 0
        for c in circles where Geodesy.distance(c.center, p) <= c.radius { n += 1 }
        return n
    }

    /// A 1 Hz drive at 14 m/s (50 km/h) heading north-east through the spread's area, fixes with
    /// σ = 5 m noise, speed and course: what ``RegionMonitor/process(_:at:into:)`` is fed.
    public static func drive(count: Int, spread: Spread, seed: UInt64 = 0xD417E) -> [Fix] {
        var rng = Generator(seed: seed)
        let start = spread == .uniform ? Coordinate(latitude: 50.0, longitude: 8.0)
                                       : Coordinate(latitude: 52.47, longitude: 13.33)
        let rad = Double.pi / 180
        return (0 ..< count).map { i in
            let d = 14.0 * Double(i)
            // Equirectangular steps are fine over a few hundred kilometres for a workload.
            let lat = start.latitude + d * cos(45 * rad) / 111_195 + rng.gaussian() * 5 / 111_195
            let lon = start.longitude + d * sin(45 * rad) / (111_195 * cos(lat * rad)) + rng.gaussian() * 5 / 111_195
            return Fix(coordinate: Coordinate(latitude: lat, longitude: lon), mode: .threeD, isValid: true,
                       speed: 14 + rng.gaussian() * 0.2, course: 45 + rng.gaussian(), horizontalError: 5)
        }
    }

    /// SplitMix64 with the few draws the workload needs.
    struct Generator {
        var rng: SplitMix64
        init(seed: UInt64) { rng = SplitMix64(seed: seed) }
        mutating func next() -> UInt64 { rng.next() }
        mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }
        mutating func uniform(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * unit() }
        mutating func gaussian() -> Double {
            (-2 * log(max(unit(), 1e-300))).squareRoot() * cos(2 * Double.pi * unit())
        }
        /// Uniform in the disk of `radius` metres around `c` (local flat approximation).
        mutating func inDisk(_ c: Coordinate, radius: Double) -> Coordinate {
            let r = radius * unit().squareRoot(), a = 2 * Double.pi * unit()
            let rad = Double.pi / 180
            return Coordinate(latitude: c.latitude + r * cos(a) / 111_195,
                              longitude: c.longitude + r * sin(a) / (111_195 * cos(c.latitude * rad)))
        }
    }
}
