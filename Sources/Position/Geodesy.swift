#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif hasFeature(Embedded)
import CLibm
#endif

/// Great-circle geometry on a sphere of the WGS 84 mean radius. Errors against the ellipsoid are
/// below 0.5 %, far below GNSS noise at geofence scales.
public enum Geodesy {
    /// IUGG mean Earth radius, metres.
    public static let earthRadius = 6_371_008.8

    /// Haversine distance between two points, metres.
    /// - Complexity: O(1): a handful of trigonometric calls.
    @inlinable
    public static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        let rad = Double.pi / 180
        let dLat = (b.latitude - a.latitude) * rad
        let dLon = (b.longitude - a.longitude) * rad
        let s1 = sin(dLat / 2), s2 = sin(dLon / 2)
        let h = s1 * s1 + cos(a.latitude * rad) * cos(b.latitude * rad) * s2 * s2
        return 2 * earthRadius * asin(min(1, h.squareRoot()))
    }
}
