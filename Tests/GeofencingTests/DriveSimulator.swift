import Geofencing
import SeededRandom
import Position

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A synthetic drive with ground truth: legs in a local plane (metres east/north of `origin`), sampled
/// at 1 Hz, with Gaussian noise of σ metres per axis on each fix and dropouts (invalid fixes).
struct Drive {
    enum Leg {
        case go(to: SIMD2<Double>, speed: Double)
        case stop(seconds: Double)
    }

    var origin: Coordinate
    var start: SIMD2<Double>
    var legs: [Leg]
    /// Time intervals [from, to) without a usable fix.
    var dropouts: [ClosedRange<Double>] = []

    /// Truth at time t (position in the plane, speed, course in degrees).
    func truth(at t: Double) -> (SIMD2<Double>, Double, Double) {
        var p = start
        var clock = 0.0
        var course = 0.0
        for leg in legs {
            switch leg {
            case .stop(let s):
                if t < clock + s { return (p, 0, course) }
                clock += s
            case .go(let to, let v):
                let d = to - p
                let len = (d * d).sum().squareRoot()
                let dur = len / v
                course = atan2(d.x, d.y) * 180 / Double.pi
                if t < clock + dur { return (p + d * ((t - clock) / dur), v, course) }
                clock += dur
                p = to
            }
        }
        return (p, 0, course)
    }

    var duration: Double {
        var p = start, clock = 0.0
        for leg in legs {
            switch leg {
            case .stop(let s): clock += s
            case .go(let to, let v):
                let d = to - p
                clock += (d * d).sum().squareRoot() / v
                p = to
            }
        }
        return clock
    }

    func coordinate(_ q: SIMD2<Double>) -> Coordinate {
        let dist = (q * q).sum().squareRoot()
        return dist == 0 ? origin : destination(origin, bearing: atan2(q.x, q.y) * 180 / Double.pi, distance: dist)
    }

    /// The fixes, one a second. Speed and course are Doppler-grade: ±0.2 m/s and ±1° (1 σ);
    /// course is given while moving faster than 1 m/s. The course is in the plane: at the origin's
    /// meridian it is the true course, and within these few kilometres it is off by < 0.1°.
    func fixes(sigma: Double, rng: inout SplitMix64) -> [(time: Double, fix: Fix)] {
        var out: [(Double, Fix)] = []
        var t = 0.0
        let end = duration
        while t <= end {
            let (q, v, c) = truth(at: t)
            let noisy = q + SIMD2(rng.gaussian() * sigma, rng.gaussian() * sigma)
            let speed = max(0, v + rng.gaussian() * 0.2)
            let courseNoise = rng.gaussian()
            let course = v > 1 ? (c + courseNoise + 360).truncatingRemainder(dividingBy: 360) : nil
            if dropouts.contains(where: { $0.contains(t) }) {
                out.append((t, Fix(mode: .none, isValid: false)))
            } else {
                out.append((t, Fix(coordinate: coordinate(noisy), mode: .threeD, isValid: true, speed: speed,
                                   course: course, horizontalError: sigma)))
            }
            t += 1
        }
        return out
    }

    /// True transitions of `region` along the path: kind, time, and the depth of the visit (metres
    /// reached inside), sampled every 0.01 s.
    func transitions(_ shape: RegionShape) -> [(kind: RegionEvent.Kind, time: Double, depth: Double)] {
        var out: [(RegionEvent.Kind, Double, Double)] = []
        let d = { (t: Double) in shape.signedDistance(to: self.coordinate(self.truth(at: t).0)) }
        /// The deepest point near sample time t, refined by ternary search over ±1 sample.
        func refine(_ t: Double) -> Double {
            var lo = max(0, t - 0.01), hi = t + 0.01
            for _ in 0 ..< 60 {
                let a = lo + (hi - lo) / 3, b = hi - (hi - lo) / 3
                if d(a) < d(b) { hi = b } else { lo = a }
            }
            return max(0, -d((lo + hi) / 2))
        }
        var t = 0.0
        let end = duration
        var inside = d(0) < 0
        var best = (t: 0.0, d: Double.infinity)
        var visitStart: Int? = nil
        if inside { visitStart = 0; out.append((.enter, 0, 0)) }
        while t <= end {
            let dt = d(t)
            if (dt < 0) != inside {
                inside = dt < 0
                if inside {
                    visitStart = out.count
                    best = (t, dt)
                    out.append((.enter, t, 0))
                } else {
                    let depth = refine(best.t)
                    out.append((.exit, t, depth))
                    if let v = visitStart { out[v].2 = depth }
                    visitStart = nil
                }
            }
            if inside, dt < best.d { best = (t, dt) }
            t += 0.01
        }
        if let v = visitStart { out[v].2 = refine(best.t) }
        return out
    }
}
