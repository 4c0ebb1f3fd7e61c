import Geofencing
import SeededRandom
import Position

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SplitMix64 {
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
