// The packed R-tree (RegionIndex) against a scan of every region, circles and polygons, with and
// without a margin, around Düsseldorf and across the antimeridian.
import Geofencing
import Position
import SeededRandom

enum AlgorithmCheckGeofence {
    static func run(seed: UInt64, _ digest: inout AlgorithmCheckDigest) -> Int {
        var random = SplitMix64(seed: seed)
        var shapes: [RegionShape] = []
        for n in 0 ..< 600 {
            // Half near Düsseldorf, half around the antimeridian near Fiji.
            let centerLongitude = n % 2 == 0 ? 6.77 : 179.9
            let center = Coordinate(latitude: (n % 2 == 0 ? 51.22 : -17.7) + random.uniform(-0.2, 0.2),
                                    longitude: wrap(centerLongitude + random.uniform(-0.3, 0.3)))
            if random.chance(0.7) {
                guard let circle = try? CircularRegion(center: center, radius: random.uniform(20, 3000)) else { continue }
                shapes.append(.circle(circle))
            } else {
                var vertices: [Coordinate] = []
                let corners = random.int(3 ... 7)
                let size = random.uniform(0.001, 0.03)
                for k in 0 ..< corners {
                    // A star-shaped polygon: increasing angles, random radii.
                    let angle = (Double(k) + random.uniform(0.1, 0.9)) / Double(corners) * 2 * Double.pi
                    let r = size * random.uniform(0.3, 1)
                    vertices.append(Coordinate(latitude: center.latitude + r * sine(angle),
                                               longitude: wrap(center.longitude + r * 1.6 * cosine(angle))))
                }
                guard let polygon = try? PolygonRegion(vertices: vertices) else { continue }
                shapes.append(.polygon(polygon))
            }
        }
        var entries: [(slot: Int32, shape: RegionShape)] = []
        for (i, s) in shapes.enumerated() { entries.append((Int32(i), s)) }
        let index = RegionIndex(entries)
        digest.add(UInt64(shapes.count))
        var results: [Int32] = []
        let queries = 3000
        for n in 0 ..< queries {
            let point = Coordinate(latitude: (n % 2 == 0 ? 51.22 : -17.7) + random.uniform(-0.25, 0.25),
                                   longitude: wrap((n % 2 == 0 ? 6.77 : 179.9) + random.uniform(-0.35, 0.35)))
            let margin = random.chance(0.5) ? 0 : random.uniform(0, 500)
            index.query(point, margin: margin, into: &results)
            results.sort()
            var reference: [Int32] = []
            for (i, s) in shapes.enumerated() where s.isWithin(point, margin: margin) { reference.append(Int32(i)) }
            digest.add(UInt64(results.count))
            for slot in results { digest.add(UInt64(slot)) }
            if results != reference {
                digest.difference("query \(n): index \(results.count) regions, scan \(reference.count)")
            }
        }
        return queries
    }

    /// A longitude in −180 ..< 180.
    static func wrap(_ longitude: Double) -> Double {
        longitude >= 180 ? longitude - 360 : longitude < -180 ? longitude + 360 : longitude
    }

    // sin and cos by Taylor series around 0 (|x| ≤ 2π, reduced to ±π): the reference polygons need
    // no libm, so libm differences between machines show up only where the cores use it.
    static func sine(_ x: Double) -> Double {
        var y = x
        while y > Double.pi { y -= 2 * Double.pi }
        while y < -Double.pi { y += 2 * Double.pi }
        var term = y, sum = y
        for k in 1 ... 12 {
            term *= -y * y / Double((2 * k) * (2 * k + 1))
            sum += term
        }
        return sum
    }

    static func cosine(_ x: Double) -> Double { sine(x + Double.pi / 2) }
}
