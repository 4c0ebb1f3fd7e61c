// Sphere geometry for regions: unit vectors, a local tangent (gnomonic) plane, and latitude/longitude
// boxes that stay correct across the antimeridian and around the poles.
//
// Every region is reduced to two things: an exact signed distance (negative inside), and a
// "bounding cap" (centre + angular radius) that contains every point whose signed distance is
// ≤ 0. The index stores the cap's latitude/longitude box; a query with margin m looks at the box of
// the cap of angular radius m/R around the fix. If dist(p, c) ≤ α + m/R, the point at angular
// distance α from c towards p lies in both caps, hence in both boxes: the box test never drops a
// region the exact test would keep.
import Position

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif hasFeature(Embedded)
import CLibm
#endif

/// A point of the unit sphere (Earth-centred, Earth-fixed axes, radius 1).
@usableFromInline
struct Vec3: Sendable, Hashable, BitwiseCopyable {
    @usableFromInline var x: Double
    @usableFromInline var y: Double
    @usableFromInline var z: Double

    @inlinable init(x: Double, y: Double, z: Double) { self.x = x; self.y = y; self.z = z }

    @inlinable init(_ c: Coordinate) {
        let rad = Double.pi / 180
        let lat = c.latitude * rad, lon = c.longitude * rad
        let cl = cos(lat)
        self.init(x: cl * cos(lon), y: cl * sin(lon), z: sin(lat))
    }

    @inlinable func dot(_ o: Vec3) -> Double { x * o.x + y * o.y + z * o.z }
    @inlinable func cross(_ o: Vec3) -> Vec3 {
        Vec3(x: y * o.z - z * o.y, y: z * o.x - x * o.z, z: x * o.y - y * o.x)
    }
    @inlinable static func + (a: Vec3, b: Vec3) -> Vec3 { Vec3(x: a.x + b.x, y: a.y + b.y, z: a.z + b.z) }
    @inlinable static func - (a: Vec3, b: Vec3) -> Vec3 { Vec3(x: a.x - b.x, y: a.y - b.y, z: a.z - b.z) }
    @inlinable static func * (a: Vec3, s: Double) -> Vec3 { Vec3(x: a.x * s, y: a.y * s, z: a.z * s) }
    @inlinable var length: Double { dot(self).squareRoot() }
    @inlinable var normalized: Vec3 { self * (1 / length) }

    /// Squared chord length to `o` (both on the unit sphere): exact to ~1e-16 even for points metres
    /// apart, unlike `acos(dot)`.
    @inlinable func chord2(_ o: Vec3) -> Double {
        let dx = x - o.x, dy = y - o.y, dz = z - o.z
        return dx * dx + dy * dy + dz * dz
    }

    /// Angle to `o`, radians.
    @inlinable func angle(to o: Vec3) -> Double { 2 * asin(min(1, chord2(o).squareRoot() / 2)) }

    @usableFromInline var coordinate: Coordinate {
        let deg = 180 / Double.pi
        return Coordinate(latitude: atan2(z, (x * x + y * y).squareRoot()) * deg, longitude: atan2(y, x) * deg)
    }
}

/// The gnomonic projection around a centre, in metres: great circles are straight lines in it, so a
/// polygon with great-circle edges is an ordinary plane polygon, at any latitude and across the
/// antimeridian. Scale grows as 1/cos²(θ) away from the centre: +0.25 % at 35 km, +2.5 % at 110 km,
/// so distances of zones of a few kilometres are exact to far below GNSS noise.
@usableFromInline
struct TangentPlane: Sendable {
    @usableFromInline let center: Vec3
    @usableFromInline let east: Vec3
    @usableFromInline let north: Vec3

    init(center: Vec3) {
        self.center = center
        // East is z × c; at a pole any horizontal direction will do.
        let e = Vec3(x: -center.y, y: center.x, z: 0)
        let el = e.length
        east = el > 1e-12 ? e * (1 / el) : Vec3(x: 0, y: 1, z: 0)
        north = center.cross(east)
    }

    /// Plane coordinates of `p` (metres), or nil when `p` is 85° or more from the centre (the
    /// projection diverges there; such points are far outside any region this plane serves).
    @inlinable func project(_ p: Vec3) -> SIMD2<Double>? {
        let d = p.dot(center)
        guard d > 0.0872 else { return nil }   // cos 85°
        let s = Geodesy.earthRadius / d
        return SIMD2(p.dot(east) * s, p.dot(north) * s)
    }
}

/// A latitude/longitude box, degrees; `minLongitude ≤ maxLongitude` always (boxes that cross the
/// antimeridian are split in two by ``GeoBox/covering(center:angularRadius:)``).
public struct GeoBox: Hashable, Sendable, BitwiseCopyable {
    public var minLatitude: Double
    public var maxLatitude: Double
    public var minLongitude: Double
    public var maxLongitude: Double

    public init(minLatitude: Double, maxLatitude: Double, minLongitude: Double, maxLongitude: Double) {
        self.minLatitude = minLatitude; self.maxLatitude = maxLatitude
        self.minLongitude = minLongitude; self.maxLongitude = maxLongitude
    }

    /// The one or two boxes that together contain every point within `angularRadius` (radians) of
    /// `center`. Two boxes when the cap crosses the antimeridian; one full-longitude box when it
    /// contains a pole.
    /// - Complexity: O(1).
    public static func covering(center: Coordinate, angularRadius: Double) -> (GeoBox, GeoBox?) {
        let deg = 180 / Double.pi
        // Pad for rounding in the exact tests (1e-9 rad ≈ 6 mm).
        let a = min(Double.pi, angularRadius + 1e-9)
        let lat = center.latitude, lon = center.longitude
        let minLat = lat - a * deg, maxLat = lat + a * deg
        if maxLat >= 90 || minLat <= -90 || a >= Double.pi / 2 {
            return (GeoBox(minLatitude: max(-90, minLat), maxLatitude: min(90, maxLat),
                           minLongitude: -180, maxLongitude: 180), nil)
        }
        let ratio = sin(a) / cos(lat * Double.pi / 180)
        if ratio >= 1 {
            return (GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: -180, maxLongitude: 180), nil)
        }
        let dLon = asin(ratio) * deg * (1 + 1e-12) + 1e-9
        var lo = lon - dLon, hi = lon + dLon
        if lo < -180 {
            lo += 360
            return (GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: -180, maxLongitude: hi),
                    GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: lo, maxLongitude: 180))
        }
        if hi > 180 {
            hi -= 360
            return (GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: lo, maxLongitude: 180),
                    GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: -180, maxLongitude: hi))
        }
        return (GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: lo, maxLongitude: hi), nil)
    }
}
