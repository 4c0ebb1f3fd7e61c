import Position

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif hasFeature(Embedded)
import CLibm
#endif

/// A circle on the Earth: centre and radius in metres (Core Location's `CLCircularRegion` geometry).
public struct CircularRegion: Hashable, Sendable {
    public let center: Coordinate
    /// Metres, > 0.
    public let radius: Double
    @usableFromInline let centerVector: Vec3
    /// Squared chord (unit sphere) of the radius: containment without trigonometry.
    @usableFromInline let chord2Radius: Double

    /// - Precondition: `center.isPlausible`-style ranges (finite, |lat| ≤ 90, |lon| ≤ 180) and
    ///   0 < radius < 10,000 km; checked, since regions come from users' files.
    public init(center: Coordinate, radius: Double) throws(RegionError) {
        guard center.latitude.isFinite, center.longitude.isFinite, abs(center.latitude) <= 90,
              abs(center.longitude) <= 180 else { throw .badCoordinate(center) }
        guard radius.isFinite, radius > 0, radius < 10_000_000 else { throw .badRadius(radius) }
        self.center = center
        self.radius = radius
        centerVector = Vec3(center)
        let half = min(Double.pi, radius / Geodesy.earthRadius) / 2
        chord2Radius = 4 * sin(half) * sin(half)
    }

    /// The centre as a unit vector (Earth-centred axes): what the index's exact test compares.
    @inlinable public var centerUnitVector: (x: Double, y: Double, z: Double) { (centerVector.x, centerVector.y, centerVector.z) }

    /// The squared chord (unit sphere) of the radius: `p` is inside when the squared chord between
    /// its unit vector and ``centerUnitVector`` is at most this (the index's exact test).
    @inlinable public var radiusSquaredChord: Double { chord2Radius }

    /// The unit vector of `p` (Earth-centred axes), as the index computes it for a query.
    @inlinable public static func unitVector(_ p: Coordinate) -> (x: Double, y: Double, z: Double) {
        let v = Vec3(p)
        return (v.x, v.y, v.z)
    }

    /// Great-circle distance from `p` to the boundary, metres: negative inside.
    /// - Complexity: O(1): one `asin` and a square root.
    @inlinable
    public func signedDistance(to p: Coordinate) -> Double { Self.signedDistance(center: centerVector, radius: radius, Vec3(p)) }

    @inlinable
    static func signedDistance(center: Vec3, radius: Double, _ p: Vec3) -> Double {
        Geodesy.earthRadius * center.angle(to: p) - radius
    }

    /// Whether `signedDistance(to: p) ≤ margin` (up to rounding: this is the definition the index
    /// and brute force share). Margin 0: one squared chord against `chord2Radius`, no trigonometry.
    @inlinable
    static func isWithin(center: Vec3, chord2Radius: Double, _ p: Vec3, margin: Double) -> Bool {
        if margin == 0 { return center.chord2(p) <= chord2Radius }
        let radius = 2 * Geodesy.earthRadius * asin(min(1, chord2Radius.squareRoot() / 2))
        let theta = (radius + margin) / Geodesy.earthRadius
        if theta < 0 { return false }
        if theta >= Double.pi { return true }
        let c = 2 * sin(theta / 2)
        return center.chord2(p) <= c * c
    }
}

/// A polygon as GeoJSON draws it: one or more parts, each an outer ring and its holes, edges
/// straight in longitude/latitude (RFC 7946), inside by the even-odd rule, no size limit; the
/// antimeridian rule and the edge index are described in PolygonGeometry.swift. Validated once
/// when made; every query afterwards costs O(log n) or close to it, whatever the vertex count.
public struct PolygonRegion: Hashable, Sendable {
    @usableFromInline let block: PolygonBlock

    @usableFromInline var view: PolygonView { block.view }

    /// A polygon from one ring of vertices.
    public init(vertices: [Coordinate]) throws(RegionError) { try self.init(parts: [[vertices]]) }

    /// A polygon from GeoJSON-style rings: the outer ring first, then holes (a closing vertex
    /// equal to the first, and vertices repeated at once, are dropped; orientation is not used).
    public init(rings: [[Coordinate]]) throws(RegionError) { try self.init(parts: [rings]) }

    /// A polygon of one or more parts (a GeoJSON MultiPolygon's `coordinates`): each part is its
    /// rings, the outer ring first and then its holes.
    /// - Throws: ``RegionError`` naming the part, ring and edges at fault: a coordinate out of
    ///   range, a ring of fewer than 3 distinct vertices or of zero area, a spike, edges that
    ///   cross or overlap.
    /// - Complexity: O(n log n) for n vertices.
    public init(parts: [[[Coordinate]]]) throws(RegionError) {
        block = try PolygonBlockBuilder.build(parts: parts)
    }

    /// A polygon over a block inside a mapped zone set (checked when the set was opened); valid
    /// while the set's bytes are.
    init(mapped base: UnsafeRawPointer, length: Int) {
        block = PolygonBlock(mapped: base, length: length)
    }

    public static func == (a: PolygonRegion, b: PolygonRegion) -> Bool {
        a.block === b.block || (a.block.length == b.block.length && a.block.bytes.elementsEqual(b.block.bytes))
    }

    public func hash(into h: inout Hasher) {
        let v = view
        h.combine(v.vertexCount)
        h.combine(bytes: UnsafeRawBufferPointer(start: v.base + v.layout.vertices, count: 16 * v.vertexCount))
    }

    /// The parts as given (closing vertices removed): each part's outer ring, then its holes.
    /// - Complexity: O(n).
    public var parts: [[[Coordinate]]] { view.parts }

    /// The first part's rings (the outer ring, then its holes).
    public var rings: [[Coordinate]] { view.parts[0] }

    /// Number of parts, rings and vertices.
    public var partCount: Int { view.partCount }
    public var ringCount: Int { view.ringCount }
    public var vertexCount: Int { view.vertexCount }

    /// Bytes of the geometry and its index.
    public var byteCount: Int { block.length }

    /// The centre of the polygon's box (a label point for lists; not necessarily inside).
    public var center: Coordinate {
        let v = view
        var lon = (v.minX + v.maxX) / 2
        while lon > 180 { lon -= 360 }
        while lon < -180 { lon += 360 }
        return Coordinate(latitude: (v.minY + v.maxY) / 2, longitude: lon)
    }

    /// The one or two latitude/longitude boxes that hold the polygon (two across ±180°).
    public var boundingBoxes: (GeoBox, GeoBox?) {
        let v = view
        let minLat = max(-90, v.minY), maxLat = min(90, v.maxY)
        if v.maxX - v.minX >= 360 { return (GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: -180, maxLongitude: 180), nil) }
        if v.maxX > 180 {
            if v.minX >= 180 {
                return (GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: v.minX - 360, maxLongitude: v.maxX - 360), nil)
            }
            return (GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: max(-180, v.minX), maxLongitude: 180),
                    GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: -180, maxLongitude: v.maxX - 360))
        }
        if v.minX < -180 {
            if v.maxX <= -180 {
                return (GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: v.minX + 360, maxLongitude: v.maxX + 360), nil)
            }
            return (GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: -180, maxLongitude: min(180, v.maxX)),
                    GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: v.minX + 360, maxLongitude: 180))
        }
        return (GeoBox(minLatitude: minLat, maxLatitude: maxLat, minLongitude: v.minX, maxLongitude: v.maxX), nil)
    }

    /// Whether `p` is inside (even-odd over every ring).
    /// - Complexity: O(log n) typically: a quadtree descent and one leaf's edges.
    @inlinable
    public func contains(_ p: Coordinate) -> Bool { view.contains(latitude: p.latitude, longitude: p.longitude) }

    /// Metres from `p` to the nearest edge (see PolygonGeometry.swift for the metric): negative inside.
    /// - Complexity: O(log n) typically.
    @inlinable
    public func signedDistance(to p: Coordinate) -> Double { view.signedDistance(latitude: p.latitude, longitude: p.longitude) }

    @inlinable
    func signedDistance(_ v: Vec3) -> Double { signedDistance(to: v.coordinate) }

    /// Whether `signedDistance(to: p) ≤ margin`, searching only as far as needed.
    @inlinable
    public func isWithin(_ p: Coordinate, margin: Double) -> Bool {
        view.isWithin(latitude: p.latitude, longitude: p.longitude, margin: margin)
    }
}

/// A region's geometry.
///
/// A polygon is boxed (`indirect`): inline, its plane and rings made every shape 104 bytes; a
/// circle takes 56, and a million circle zones hold a shape per request and per monitored region.
public enum RegionShape: Hashable, Sendable {
    case circle(CircularRegion)
    indirect case polygon(PolygonRegion)

    /// Metres to the boundary, negative inside.
    @inlinable
    public func signedDistance(to p: Coordinate) -> Double {
        switch self {
        case .circle(let c): return c.signedDistance(to: p)
        case .polygon(let g): return g.signedDistance(to: p)
        }
    }

    /// Whether `signedDistance(to: p) ≤ margin`: the predicate the index answers, exactly.
    @inlinable
    public func isWithin(_ p: Coordinate, margin: Double) -> Bool {
        switch self {
        case .circle(let c): return CircularRegion.isWithin(center: c.centerVector, chord2Radius: c.chord2Radius, Vec3(p), margin: margin)
        case .polygon(let g): return g.isWithin(p, margin: margin)
        }
    }

    @inlinable
    func isWithin(_ v: Vec3, margin: Double) -> Bool {
        switch self {
        case .circle(let c): return CircularRegion.isWithin(center: c.centerVector, chord2Radius: c.chord2Radius, v, margin: margin)
        case .polygon(let g): return g.isWithin(v.coordinate, margin: margin)
        }
    }

    /// The monitor's decision at `p`: inside when deeper than `margin` (metres), outside when
    /// farther than it, nil within it. A polygon searches its edges only within `margin`.
    @inlinable
    public func side(of p: Coordinate, margin: Double) -> RegionState? {
        switch self {
        case .circle(let c):
            let d = c.signedDistance(to: p)
            return d < -margin ? .inside : d > margin ? .outside : nil
        case .polygon(let g):
            let inside = g.contains(p)
            let bound = margin.nextUp
            guard g.view.distanceToEdge(latitude: p.latitude, longitude: p.longitude, bound: bound) > margin else { return nil }
            return inside ? .inside : .outside
        }
    }

    /// A circle's centre; the centre of a polygon's box.
    var center: Coordinate {
        switch self {
        case .circle(let c): return c.center
        case .polygon(let g): return g.center
        }
    }

    /// The one or two latitude/longitude boxes holding every point with signed distance ≤ 0.
    var boundingBoxes: (GeoBox, GeoBox?) {
        switch self {
        case .circle(let c): return GeoBox.covering(center: c.center, angularRadius: c.radius / Geodesy.earthRadius)
        case .polygon(let g): return g.boundingBoxes
        }
    }
}

public enum RegionError: Error, Hashable, Sendable, CustomStringConvertible {
    case badCoordinate(Coordinate)
    case badRadius(Double)
    case tooFewVertices(Int)
    case badSetting(String)
    /// A ring that is not a simple polygon: zero area, or edges that cross.
    case degenerate(String)

    public var description: String {
        switch self {
        case .badCoordinate(let c): "coordinate out of range: \(c)"
        case .badRadius(let r): "radius must be > 0 and < 10,000 km, got \(r)"
        case .tooFewVertices(let n): "a polygon ring needs at least 3 distinct vertices, got \(n)"
        case .badSetting(let s): s
        case .degenerate(let s): "not a simple polygon: \(s)"
        }
    }
}

/// A monitored region: identifier, geometry, and when to notify (Core Location's `CLRegion` plus
/// the loitering delay, cooldown and repeat of design §4). The same identifier replaces.
public struct Region: Hashable, Sendable {
    public var identifier: String
    public var shape: RegionShape
    /// Report entries (default true).
    public var notifyOnEntry: Bool
    /// Report exits (default true).
    public var notifyOnExit: Bool
    /// Loitering delay, seconds: when set, an entry is reported as `dwell` once the vehicle has
    /// stayed inside this long (and not at all if it leaves earlier; nor is that visit's exit).
    public var dwell: Double?
    /// Seconds: an event of the same kind for this region within this window of the last reported
    /// one is suppressed (0 = none).
    public var cooldown: Double
    /// False: the region reports one event, then is finished.
    public var repeats: Bool

    public init(identifier: String, shape: RegionShape, notifyOnEntry: Bool = true, notifyOnExit: Bool = true,
                dwell: Double? = nil, cooldown: Double = 0, repeats: Bool = true) {
        self.identifier = identifier; self.shape = shape
        self.notifyOnEntry = notifyOnEntry; self.notifyOnExit = notifyOnExit
        self.dwell = dwell; self.cooldown = cooldown; self.repeats = repeats
    }

    /// A circle region.
    public static func circle(_ identifier: String, center: Coordinate, radius: Double) throws(RegionError) -> Region {
        Region(identifier: identifier, shape: .circle(try CircularRegion(center: center, radius: radius)))
    }

    /// A polygon region from one ring.
    public static func polygon(_ identifier: String, vertices: [Coordinate]) throws(RegionError) -> Region {
        Region(identifier: identifier, shape: .polygon(try PolygonRegion(vertices: vertices)))
    }
}
