// Circles decided in the leaf: a point query settles most circle entries from the 16-bit boxes it
// has just tested, without reading the entry's exact geometry (32 B per entry, the array that
// misses the cache at 1M zones) and without the point's unit vector (four libm calls).
//
// A circle's box is symmetric about its centre: latitude ± a, longitude ± asin(sin a / cos φc)
// (a = the angular radius). So the box, as quantized in the leaf, encodes the circle as an
// ellipse in the leaf's frame: centre Û = (min + max) / 2, half-extents Ĥ = (max − min) / 2 per
// axis. The ideal ellipse has centre U0 = (φc − frame min) × scale and half-extents
// Hu = a·(180/π)·scale(lat), Hv = a·(180/π)/cos φc · scale(lon). With t = ((u − U0)/Hu,
// (v − V0)/Hv) for the point (u, v) and ρ² = |t|², the planar quantity is
// P = Δφ² + cos²φc·Δλ² = a²ρ² (radians).
//
// Sphere against plane. The exact test is chord² ≤ C with chord² = 4 hav Δφ + cos φ cos φc ·
// 4 hav Δλ (the haversine identity) and C = 4 sin²(a/2) ∈ [a² − a⁴/12, a²]. With
// x² − x⁴/12 ≤ 4 hav x ≤ x² and cos φ / cos φc ∈ [1 − x²/2 − T|x|, 1 + T|x|] (T = |tan φc|,
// x = Δφ): P(1 − ε) ≤ chord² ≤ P(1 + ε), ε = T|x| + 7x²/12 + Δλ²/12. So ρ² ≤ 1 − ε − a²/12
// implies inside, ρ² ≥ 1 + 2ε implies outside. The query decides "outside" only for points within
// about 2 half-extents (|x| ≤ 2.1a, |Δλ| ≤ 2.1a / cos φc, checked there), where the build bounds ε;
// the leaf's band η = 2ε + a²/12 + 1e-5 (the 1e-5 covers Float and Double rounding, ≤ 1e-6).
//
// Decoding error. The build measures, for every decidable lane, how far its decoded centre and
// half-extents are from the ideal ones (Float rounding of the box, quantization, widening: a few
// units) and stores the leaf's maximum E (plus 0.05 unit for the query's Float arithmetic).
// Then |u − U0| ≤ |u − Û| + E and Hu ∈ [Ĥu − E, Ĥu + E], so
//   inside  when ((|u − Û| + E)/(Ĥu − E))² + ((|v − V̂| + E)/(Ĥv − E))² ≤ 1 − η,
//   outside when (max(|u − Û| − E, 0)/(Ĥu + E))² + (max(|v − V̂| − E, 0)/(Ĥv + E))² ≥ 1 + η,
// and otherwise the exact test decides, as for every entry that is not decidable: polygons,
// circles with two entries (across the antimeridian), circles under 6 m or over 6 km, within
// 5° of a pole, or with half-extents under 32·E units (in a leaf of very small zones the Float
// boxes are too coarse: those go to the exact test).
//
// At 1M uniform circles (50–500 m) every circle is decidable, E is a few units against half-
// extents of hundreds, and the exact test runs for the few points within ~2 % of a radius
// from a boundary.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif hasFeature(Embedded)
import CLibm
#endif

extension RegionIndex {
    /// A circle as the build gives it to the leaf decision: centre (degrees) and angular radius.
    struct DecodableCircle {
        var latitude: Double
        var longitude: Double
        /// Radians (radius / Earth radius), as the box was covered with.
        var angle: Double
    }

    /// The frame of a leaf and which of its lanes a point query may decide from their boxes,
    /// with the tolerance and band that make the decision sound (see the top of this file).
    /// - Complexity: O(16) with a few libm calls per circle.
    static func leafFrame(_ leaf: Leaf, frame: SIMD4<Float>, lanes: Int, circle: (Int) -> DecodableCircle?) -> LeafFrame {
        var result = LeafFrame(frame: frame, tolerance: 0, band: 0, decidable: 0)
        let f0 = Double(frame[0]), f1 = Double(frame[1]), s0 = Double(frame[2]), s1 = Double(frame[3])
        guard s0 > 0, s1 > 0, s0.isFinite, s1.isFinite else { return result }
        let deg = 180 / Double.pi
        var error = SIMD16<Double>(), smaller = SIMD16<Double>(), band = SIMD16<Double>()
        var candidates: UInt32 = 0
        for lane in 0 ..< lanes {
            guard let c = circle(lane) else { continue }
            let a = c.angle
            guard a >= 1e-6, a <= 1e-3, abs(c.latitude) <= 85 else { continue }
            let phi = c.latitude / deg
            let cosine = cos(phi), t = abs(tan(phi))
            let lo0 = Double(leaf.minLat[lane]), hi0 = Double(leaf.maxLat[lane])
            let lo1 = Double(leaf.minLon[lane]), hi1 = Double(leaf.maxLon[lane])
            let u0 = (c.latitude - f0) * s0 - 32768, v0 = (c.longitude - f1) * s1 - 32768
            let hu = a * deg * s0, hv = a * deg / cosine * s1
            let e = max(max(abs((lo0 + hi0) / 2 - u0), abs((lo1 + hi1) / 2 - v0)),
                        max(abs((hi0 - lo0) / 2 - hu), abs((hi1 - lo1) / 2 - hv)))
            let x = 2.1 * a, y = 2.1 * a / cosine
            let epsilon = t * x + 7 * x * x / 12 + y * y / 12
            let eta = 2 * epsilon + a * a / 12 + 1e-5
            guard eta <= 0.05, min(hu, hv) >= 16, e.isFinite else { continue }
            error[lane] = e; smaller[lane] = min(hu, hv); band[lane] = eta
            candidates |= 1 << UInt32(lane)
        }
        guard candidates != 0 else { return result }
        // E is the largest error of the lanes kept; keeping only lanes with half-extents ≥ 32·E
        // of the first E can only lower it, so one pass keeps every kept lane ≥ 32·E.
        var e = 0.0
        for lane in 0 ..< 16 where candidates & (1 << UInt32(lane)) != 0 { e = max(e, error[lane]) }
        var decidable: UInt32 = 0, tolerance = 0.0, eta = 0.0
        for lane in 0 ..< 16 where candidates & (1 << UInt32(lane)) != 0 && smaller[lane] >= 32 * e {
            decidable |= 1 << UInt32(lane)
            tolerance = max(tolerance, error[lane]); eta = max(eta, band[lane])
        }
        result.tolerance = Float(tolerance + 0.05).nextUp
        result.band = Float(eta).nextUp
        result.decidable = decidable
        return result
    }

    /// How a leaf's box decides a point for a decidable lane.
    enum LaneDecision { case inside, outside, undecided }

    /// Decides lane `lane` of `leaf` for the point at (u, v) units of the leaf's frame, both
    /// doubled (the stored boxes' signed units: unit − 32768), from its box alone when the
    /// inequalities at the top of this file settle it.
    /// - Complexity: O(1): ~30 Float operations.
    @inline(__always)
    static func decide(_ leaf: UnsafePointer<Leaf>, lane: Int, u2: Float, v2: Float, frame: LeafFrame) -> LaneDecision {
        let raw = UnsafeRawPointer(leaf)
        let lo0 = Float(raw.load(fromByteOffset: 2 &* lane, as: Int16.self)), hi0 = Float(raw.load(fromByteOffset: 32 &+ 2 &* lane, as: Int16.self))
        let lo1 = Float(raw.load(fromByteOffset: 64 &+ 2 &* lane, as: Int16.self)), hi1 = Float(raw.load(fromByteOffset: 96 &+ 2 &* lane, as: Int16.self))
        // Doubled units: centres and extents of integers are exact.
        let e = 2 * frame.tolerance
        let du = abs(u2 - (lo0 + hi0)), dv = abs(v2 - (lo1 + hi1))
        let hu = hi0 - lo0, hv = hi1 - lo1
        let iu = hu - e, iv = hv - e
        let pu = du + e, pv = dv + e
        let iu2 = iu * iu, iv2 = iv * iv
        if pu * pu * iv2 + pv * pv * iu2 <= (1 - frame.band) * iu2 * iv2 { return .inside }
        guard du <= 2 * hu, dv <= 2 * hv else { return .undecided }
        let qu = max(du - e, 0), qv = max(dv - e, 0), ou = hu + e, ov = hv + e
        let ou2 = ou * ou, ov2 = ov * ov
        if qu * qu * ov2 + qv * qv * ou2 >= (1 + frame.band) * ou2 * ov2 { return .outside }
        return .undecided
    }
}
