import Geofencing
import Position

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator, so every failure names a seed
/// that reproduces it.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    mutating func uniform(_ lo: Double, _ hi: Double) -> Double { Double.random(in: lo ..< hi, using: &self) }

    /// Standard normal (Box–Muller).
    mutating func gaussian() -> Double {
        let u1 = max(uniform(0, 1), 1e-300), u2 = uniform(0, 1)
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    /// A point uniform on the sphere.
    mutating func pointOnSphere() -> Coordinate {
        let z = uniform(-1, 1)
        return Coordinate(latitude: asin(z) * 180 / Double.pi, longitude: uniform(-180, 180))
    }
}

/// The point `distance` metres from `start` along initial bearing `bearing` (degrees) on the sphere.
func destination(_ start: Coordinate, bearing: Double, distance: Double) -> Coordinate {
    let rad = Double.pi / 180
    let d = distance / Geodesy.earthRadius, th = bearing * rad
    let lat1 = start.latitude * rad, lon1 = start.longitude * rad
    let lat2 = asin(min(1, max(-1, sin(lat1) * cos(d) + cos(lat1) * sin(d) * cos(th))))
    var lon2 = lon1 + atan2(sin(th) * sin(d) * cos(lat1), cos(d) - sin(lat1) * sin(lat2))
    lon2 = remainder(lon2, 2 * Double.pi)
    return Coordinate(latitude: lat2 / rad, longitude: lon2 / rad)
}

/// Initial bearing from a to b, degrees.
func bearing(_ a: Coordinate, _ b: Coordinate) -> Double {
    let rad = Double.pi / 180
    let la = a.latitude * rad, lb = b.latitude * rad, dl = (b.longitude - a.longitude) * rad
    return atan2(sin(dl) * cos(lb), cos(la) * sin(lb) - sin(la) * cos(lb) * cos(dl)) / rad
}
