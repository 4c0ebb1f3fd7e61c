// The fair brute-force baseline of the geofence index: every circle tested with the index's own
// exact test (the squared chord between unit vectors against the radius's squared chord, both
// precomputed by CircularRegion), over flat arrays, four circles per SIMD step. What the index
// saves against it is the search alone, not trigonometry; the haversine scan
// (``GeofenceWorkload/bruteForceCount(_:_:)``) stays as the naive second baseline.
import Geofencing
import Position

/// Circles as four flat arrays (centre x, y, z on the unit sphere, squared chord of the radius),
/// padded to a multiple of four with circles nothing is inside.
public struct ChordScan: Sendable {
    /// Circles scanned (the padding excluded).
    public let count: Int
    @usableFromInline let xs: [Double]
    @usableFromInline let ys: [Double]
    @usableFromInline let zs: [Double]
    @usableFromInline let limits: [Double]

    /// - Complexity: O(n).
    public init(_ circles: [GeofenceWorkload.Circle]) {
        count = circles.count
        let padded = (circles.count + 3) & ~3
        var xs = [Double](repeating: 0, count: padded), ys = xs, zs = xs
        var limits = [Double](repeating: -1, count: padded)   // a squared chord is never below 0
        for (i, c) in circles.enumerated() {
            let region = try! CircularRegion(center: c.center, radius: c.radius)
            let v = region.centerUnitVector
            xs[i] = v.x; ys[i] = v.y; zs[i] = v.z
            limits[i] = region.radiusSquaredChord
        }
        self.xs = xs; self.ys = ys; self.zs = zs; self.limits = limits
    }

    /// How many circles contain `p`: the same answer as the index's query and, up to rounding
    /// at a boundary, as the haversine scan.
    /// - Complexity: O(n), four circles per step, no branch per circle.
    @inlinable
    public func count(containing p: Coordinate) -> Int {
        let v = CircularRegion.unitVector(p)
        let px = SIMD4<Double>(repeating: v.x), py = SIMD4<Double>(repeating: v.y), pz = SIMD4<Double>(repeating: v.z)
        var hits = SIMD4<Int64>()
        let one = SIMD4<Int64>(repeating: 1)
        xs.withUnsafeBytes { x in
            ys.withUnsafeBytes { y in
                zs.withUnsafeBytes { z in
                    limits.withUnsafeBytes { l in
                        let step = MemoryLayout<SIMD4<Double>>.stride
                        var offset = 0
                        while offset < x.count {
                            let dx = x.loadUnaligned(fromByteOffset: offset, as: SIMD4<Double>.self) - px
                            let dy = y.loadUnaligned(fromByteOffset: offset, as: SIMD4<Double>.self) - py
                            let dz = z.loadUnaligned(fromByteOffset: offset, as: SIMD4<Double>.self) - pz
                            let d = dx * dx + dy * dy + dz * dz
                            hits &+= SIMD4<Int64>().replacing(with: one, where: d .<= l.loadUnaligned(fromByteOffset: offset, as: SIMD4<Double>.self))
                            offset &+= step
                        }
                    }
                }
            }
        }
        return Int(hits.wrappedSum())
    }
}
