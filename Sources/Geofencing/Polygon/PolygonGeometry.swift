// A polygon's geometry as one flat block of bytes, with the edge index that makes a point query
// independent of the vertex count. The same bytes live in memory (`PolygonRegion`) and in a
// mapped zone set, and one set of functions (`PolygonView`) answers both.
//
// Semantics (RFC 7946 §3.1.6, as GEOS, shapely, QGIS and geojson.io read a file)
//   - An edge is a straight line in (longitude, latitude). There is no size limit: a ring may span
//     a continent, or wind around a pole along the ±180° meridian and the pole's line (Antarctica
//     as Natural Earth draws it).
//   - Inside is decided by the even-odd rule over every ring of every part: a point is inside when
//     it is inside an odd number of rings. For a valid GeoJSON polygon (holes inside their outer
//     ring, parts apart) that is exactly "inside an outer ring and in none of its holes".
//   - The antimeridian: an edge whose ends differ by more than 180° of longitude is taken the short
//     way across ±180° (RFC 7946 §3.1.9 asks writers to split such rings; a ring that was not split
//     still means the small shape, not the band around the world). A ring is unwrapped vertex by
//     vertex into working longitudes ("x", possibly beyond ±180); a point is tested at its longitude
//     and at ±360° from it. A ring that winds once around a pole is read literally instead (its
//     edges along ±180° and the pole's line are real edges). Here alone we differ from GEOS, which
//     reads every coordinate literally.
//   - Distance (for the monitor's hysteresis) is metres to the nearest edge, in the plane of
//     (x, y) scaled at the query point's latitude (x by cos φ · R·π/180, y by R·π/180): exact
//     enough for the tens to hundreds of metres that margins use; far from the polygon it is a
//     rough figure and only compared with margins.
//
// The edge index (after S2's ShapeIndex and GEOS's IndexedPointInAreaLocator)
//   A quadtree over the working bounding box. A cell is split while it meets more than
//   `leafEdges` edges no longer than its diagonal, to depth `maximumDepth` (S2's rule: long edges
//   would be copied into every child, so they do not ask for a split). Every leaf lists the edges that meet its closed
//   cell and knows whether its reference point — a fixed, "generic" point of the cell, chosen at
//   build so that it is not on or near any of those edges — is inside. A point q in a leaf is
//   inside when the reference point's answer, flipped once per edge that the segment from the
//   reference point to q crosses, says so: O(depth + edges of one leaf), whatever the vertex count.
//   Crossings use one predicate everywhere (build and query): a vertex on the line through the
//   segment counts as being on its left, so a segment through a vertex crosses the two edges
//   there an even or odd number of times exactly as it passes by or through the boundary. The
//   answer is exact except for points within rounding (~1e-15 of the box) of an edge.
//
// Layout (little-endian, every section at a multiple of 8 bytes from the start)
//   header  64 B: points u32, rings u32, parts u32, nodes u32, edge refs u32, vertices u32,
//           x min, y min, x max, y max (f64), magic u32 "FPPG", leaf edges limit u32
//   points       16 B each: working (x, y) of every ring, each ring closed (its first point again
//                at its end), ring after ring
//   vertices     16 B each: (latitude, longitude) as given, each ring without its closing vertex
//   ringStarts   u32 × (rings + 1): ring r is points[ringStarts[r] ..< ringStarts[r + 1]]
//                (its vertices start at ringStarts[r] − r)
//   partStarts   u32 × (parts + 1): part p is rings[partStarts[p] ..< partStarts[p + 1]]
//   nodes        16 B each, node 0 the root. Inner: four child numbers (quadrant x ≥ mid: +1,
//                y ≥ mid: +2), each greater than the node's own. Leaf: word 0 = 0x8000_0000 |
//                first edge ref, word 1 = edge count, word 2 = 1 when the reference point is
//                inside, word 3 = which reference point (``PolygonView/referenceFractions``).
//   edgeRefs     u32 each: edge e runs from points[e] to points[e + 1]
//
// Sizing: 32 B per vertex for the two coordinate sections; the index adds about 10 B per vertex
// (a leaf per ~4 edges, each edge in ~1.5 leaves). A 1M-vertex polygon is about 42 MB.
import Position

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif hasFeature(Embedded)
import CLibm
#endif

/// Offsets of a polygon block's sections, from its counts.
@usableFromInline
struct PolygonLayout: Sendable, Hashable {
    static let headerSize = 64
    static let magic: UInt32 = 0x4750_5046   // "FPPG"
    @usableFromInline var points = 0, vertices = 0, ringStarts = 0, partStarts = 0, nodes = 0, edgeRefs = 0, size = 0

    @usableFromInline
    init(points pc: Int, rings: Int, parts: Int, nodes nc: Int, edgeRefs ec: Int, vertices vc: Int) {
        func pad(_ n: Int) -> Int { (n + 7) & ~7 }
        points = Self.headerSize
        vertices = points + 16 * pc
        ringStarts = vertices + 16 * vc
        partStarts = pad(ringStarts + 4 * (rings + 1))
        nodes = pad(partStarts + 4 * (parts + 1))
        edgeRefs = nodes + 16 * nc
        size = pad(edgeRefs + 4 * ec)
    }
}

/// A polygon block seen through a pointer; valid while the bytes live. The block was built by
/// ``PolygonBlockBuilder`` or checked by ``PolygonView/validate(_:length:)``, so reads stay inside.
@usableFromInline
struct PolygonView: @unchecked Sendable {
    @usableFromInline let base: UnsafeRawPointer
    @usableFromInline let layout: PolygonLayout
    @usableFromInline let pointCount: Int, ringCount: Int, partCount: Int, nodeCount: Int, edgeRefCount: Int, vertexCount: Int
    @usableFromInline let minX: Double, minY: Double, maxX: Double, maxY: Double

    /// Leaves split while they meet more edges than this.
    static let leafEdges = 8
    /// Cells are split at most this many times (a 360° box gives ~0.15 m cells).
    static let maximumDepth = 28
    /// Where a leaf's reference point may sit, as fractions of its cell (x, y): away from the
    /// centre and the round fractions people's coordinates fall on.
    @usableFromInline static let referenceFractions: [(Double, Double)] = [
        (0.5123456789, 0.4801234567), (0.3141592653, 0.6180339887), (0.7071067811, 0.2718281828),
        (0.2236067977, 0.7320508075), (0.6457513110, 0.3819660112), (0.4142135623, 0.8660254037),
        (0.8164965809, 0.5772156649), (0.1732050807, 0.1414213562),
    ]

    @usableFromInline
    init(_ base: UnsafeRawPointer) {
        self.base = base
        func u32(_ at: Int) -> Int { Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt32.self))) }
        func f64(_ at: Int) -> Double { Double(bitPattern: UInt64(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt64.self))) }
        pointCount = u32(0); ringCount = u32(4); partCount = u32(8); nodeCount = u32(12); edgeRefCount = u32(16); vertexCount = u32(20)
        minX = f64(24); minY = f64(32); maxX = f64(40); maxY = f64(48)
        layout = PolygonLayout(points: pointCount, rings: ringCount, parts: partCount, nodes: nodeCount, edgeRefs: edgeRefCount, vertices: vertexCount)
    }

    /// Whether `length` bytes at `base` are a polygon block every query can read safely: counts
    /// that fit the length, rings and parts in order, nodes whose children come after them, leaves
    /// whose edges are inside the edge list and name an edge's first point.
    /// - Complexity: O(length / 4).
    static func validate(_ base: UnsafeRawPointer, length: Int) -> Bool {
        guard length >= PolygonLayout.headerSize, length <= Int.max / 8, Int(bitPattern: base) % 8 == 0 else { return false }
        func raw(_ at: Int) -> UInt32 { UInt32(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
        // Counts the length can hold, before any arithmetic on them (no overflow, also where Int
        // has 32 bits): 16 bytes per point, vertex and node, 4 per ring, part and edge.
        let limit16 = UInt32(clamping: length / 16), limit4 = UInt32(clamping: length / 4)
        guard raw(56) == PolygonLayout.magic, raw(0) <= limit16, raw(20) <= limit16, raw(12) <= limit16,
              raw(4) < limit4, raw(8) < limit4, raw(16) <= limit4 else { return false }
        func u32(_ at: Int) -> Int { Int(raw(at)) }
        let v = PolygonView(base)
        guard v.layout.size == length, v.ringCount >= 1, v.partCount >= 1, v.nodeCount >= 1,
              v.pointCount == v.vertexCount + v.ringCount,
              v.minX.isFinite, v.minY.isFinite, v.maxX.isFinite, v.maxY.isFinite, v.minX < v.maxX, v.minY < v.maxY
        else { return false }
        var previous = 0
        for r in 0 ... v.ringCount {
            let s = u32(v.layout.ringStarts + 4 * r)
            guard s >= previous, s <= v.pointCount, r == 0 ? s == 0 : s - previous >= 4 else { return false }
            previous = s
        }
        guard previous == v.pointCount else { return false }
        previous = 0
        for p in 0 ... v.partCount {
            let s = u32(v.layout.partStarts + 4 * p)
            guard s >= previous, s <= v.ringCount, p == 0 ? s == 0 : s > previous else { return false }
            previous = s
        }
        guard previous == v.ringCount else { return false }
        for n in 0 ..< v.nodeCount {
            let at = v.layout.nodes + 16 * n
            let w0 = raw(at)
            if w0 & 0x8000_0000 != 0 {
                let start = Int(w0 & 0x7FFF_FFFF), count = u32(at + 4)
                guard start <= v.edgeRefCount, count <= v.edgeRefCount - start, u32(at + 8) <= 1, u32(at + 12) < referenceFractions.count
                else { return false }
            } else {
                for q in 0 ..< 4 {
                    let c = u32(at + 4 * q)
                    guard c > n, c < v.nodeCount else { return false }
                }
            }
        }
        for e in 0 ..< v.edgeRefCount where u32(v.layout.edgeRefs + 4 * e) >= v.pointCount - 1 { return false }
        return true
    }

    // MARK: Reading

    @inlinable @inline(__always)
    func point(_ i: Int) -> XY {
        let at = base + (layout.points &+ 16 &* i)
        return XY(at.loadUnaligned(as: Double.self), at.loadUnaligned(fromByteOffset: 8, as: Double.self))
    }

    /// A count or index of the block (< 2³¹: checked when the block was validated).
    @inlinable @inline(__always)
    func word(_ at: Int) -> Int { Int(truncatingIfNeeded: rawWord(at)) }

    /// A word as stored (a leaf's first word has its top bit set).
    @inlinable @inline(__always)
    func rawWord(_ at: Int) -> UInt32 { UInt32(littleEndian: (base + at).loadUnaligned(as: UInt32.self)) }

    /// The vertices as given: each part's rings, outer first, without closing vertices.
    var parts: [[[Coordinate]]] {
        var parts: [[[Coordinate]]] = []
        for p in 0 ..< partCount {
            var rings: [[Coordinate]] = []
            for r in word(layout.partStarts + 4 * p) ..< word(layout.partStarts + 4 * (p + 1)) {
                let s = word(layout.ringStarts + 4 * r) - r, e = word(layout.ringStarts + 4 * (r + 1)) - r - 1
                var ring: [Coordinate] = []
                ring.reserveCapacity(e - s)
                for k in s ..< e {
                    let at = base + layout.vertices + 16 * k
                    ring.append(Coordinate(latitude: at.loadUnaligned(as: Double.self), longitude: at.loadUnaligned(fromByteOffset: 8, as: Double.self)))
                }
                rings.append(ring)
            }
            parts.append(rings)
        }
        return parts
    }

    // MARK: Predicates (one definition for build and query)

    /// Twice the signed area of (o, a, b): > 0 when b is left of o→a.
    @inlinable @inline(__always)
    static func orient(_ o: XY, _ a: XY, _ b: XY) -> Double {
        (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
    }

    /// Whether the segment c→q crosses edge a→b, a vertex on the line c–q counting as left of it.
    @inlinable @inline(__always)
    static func crosses(_ c: XY, _ q: XY, _ a: XY, _ b: XY) -> Bool {
        guard (orient(c, q, a) >= 0) != (orient(c, q, b) >= 0) else { return false }
        return (orient(a, b, c) >= 0) != (orient(a, b, q) >= 0)
    }

    /// The reference point `k` of the cell at (x0, y0) of size (w, h).
    @inlinable @inline(__always)
    static func reference(_ k: Int, x0: Double, y0: Double, w: Double, h: Double) -> XY {
        let f = referenceFractions[k]
        return XY(x0 + w * f.0, y0 + h * f.1)
    }

    // MARK: Queries

    /// Whether the point (latitude, longitude) is inside.
    /// - Complexity: O(depth + edges of one leaf) per tested longitude (one, or two across ±180°).
    @inlinable
    func contains(latitude: Double, longitude: Double) -> Bool {
        guard latitude >= minY, latitude <= maxY else { return false }
        var x = longitude - 360
        for _ in 0 ..< 3 {
            if x >= minX, x <= maxX, containsWorking(XY(x, latitude)) { return true }
            x += 360
        }
        return false
    }

    /// Whether the working point q (inside the box) is inside.
    @inlinable
    func containsWorking(_ q: XY) -> Bool {
        var node = 0
        var x0 = minX, y0 = minY, w = maxX - minX, h = maxY - minY
        while true {
            let at = layout.nodes &+ 16 &* node
            let w0 = rawWord(at)
            if w0 & 0x8000_0000 != 0 {
                let start = Int(w0 & 0x7FFF_FFFF), count = word(at + 4)
                var inside = word(at + 8) != 0
                let c = Self.reference(word(at + 12), x0: x0, y0: y0, w: w, h: h)
                for k in 0 ..< count {
                    let e = word(layout.edgeRefs &+ 4 &* (start &+ k))
                    if Self.crosses(c, q, point(e), point(e &+ 1)) { inside.toggle() }
                }
                return inside
            }
            w *= 0.5; h *= 0.5
            let mx = x0 + w, my = y0 + h
            var quadrant = 0
            if q.x >= mx { quadrant |= 1; x0 = mx }
            if q.y >= my { quadrant |= 2; y0 = my }
            node = word(at &+ 4 &* quadrant)
        }
    }

    /// Metres from (latitude, longitude) to the nearest edge, or `bound` when none is nearer.
    /// - Complexity: O(log n) nodes and the edges of the leaves near the point, typically.
    @inlinable
    func distanceToEdge(latitude: Double, longitude: Double, bound: Double = .infinity) -> Double {
        let k = Geodesy.earthRadius * Double.pi / 180
        let scale = XY(max(cosDegrees(latitude), 1e-9) * k, k)
        var best = bound
        var x = longitude - 360
        for _ in 0 ..< 3 {
            let q = XY(x, latitude)
            if boxDistance(q, XY(minX, minY), XY(maxX - minX, maxY - minY), scale) < best {
                best = nearest(q, scale: scale, best: best)
            }
            x += 360
        }
        return best
    }

    @inlinable @inline(__always)
    func boxDistance(_ q: XY, _ origin: XY, _ size: XY, _ scale: XY) -> Double {
        let lo = origin - q, hi = q - (origin + size)
        let d = XY.maximum(XY.maximum(lo, hi), XY(repeating: 0)) * scale
        return (d * d).sum().squareRoot()
    }

    /// Depth-first search of the quadtree, nearer children first, pruned by the best so far.
    @usableFromInline
    func nearest(_ q: XY, scale: XY, best initial: Double) -> Double {
        var best = initial
        typealias Entry = (node: Int32, depth: Int32, origin: XY, distance: Double)
        return withUnsafeTemporaryAllocation(of: Entry.self, capacity: 4 * Self.maximumDepth + 8) { stack in
            stack[0] = (0, 0, XY(minX, minY), 0)
            var top = 1
            let rootSize = XY(maxX - minX, maxY - minY)
            while top > 0 {
                top -= 1
                let entry = stack[top]
                guard entry.distance < best else { continue }
                let at = layout.nodes &+ 16 &* Int(entry.node)
                let w0 = rawWord(at)
                let size = rootSize * (1 / Double(1 << Int(entry.depth)))
                if w0 & 0x8000_0000 != 0 {
                    let start = Int(w0 & 0x7FFF_FFFF), count = word(at + 4)
                    for k in 0 ..< count {
                        let e = word(layout.edgeRefs &+ 4 &* (start &+ k))
                        let a = (point(e) - q) * scale, b = (point(e &+ 1) - q) * scale
                        let ab = b - a
                        let len2 = (ab * ab).sum()
                        let t = len2 > 0 ? min(1, max(0, -(a * ab).sum() / len2)) : 0
                        let d = a + ab * t
                        let dist = (d * d).sum().squareRoot()
                        if dist < best { best = dist }
                    }
                    continue
                }
                let half = size * 0.5
                // The four children, the nearest pushed last (popped first); those out of reach not at all.
                var d = (0.0, 0.0, 0.0, 0.0)
                d.0 = boxDistance(q, entry.origin, half, scale)
                d.1 = boxDistance(q, XY(entry.origin.x + half.x, entry.origin.y), half, scale)
                d.2 = boxDistance(q, XY(entry.origin.x, entry.origin.y + half.y), half, scale)
                d.3 = boxDistance(q, entry.origin + half, half, scale)
                func distance(_ i: Int) -> Double { i == 0 ? d.0 : i == 1 ? d.1 : i == 2 ? d.2 : d.3 }
                var pushed = 0
                for _ in 0 ..< 4 {
                    var pick = -1
                    for i in 0 ..< 4 where pushed & (1 << i) == 0 && (pick < 0 || distance(i) > distance(pick)) { pick = i }
                    pushed |= 1 << pick
                    let dp = distance(pick)
                    guard dp < best else { continue }
                    let o = XY(pick & 1 != 0 ? entry.origin.x + half.x : entry.origin.x, pick & 2 != 0 ? entry.origin.y + half.y : entry.origin.y)
                    stack[top] = (Int32(word(at &+ 4 &* pick)), entry.depth &+ 1, o, dp)
                    top &+= 1
                }
            }
            return best
        }
    }

    /// Metres to the boundary, negative inside.
    @inlinable
    func signedDistance(latitude: Double, longitude: Double) -> Double {
        let d = distanceToEdge(latitude: latitude, longitude: longitude)
        return contains(latitude: latitude, longitude: longitude) ? -d : d
    }

    /// Whether the signed distance is at most `margin` (metres), searching only as far as it must.
    @inlinable
    func isWithin(latitude: Double, longitude: Double, margin: Double) -> Bool {
        let inside = contains(latitude: latitude, longitude: longitude)
        if margin == 0 { return inside }
        if inside {
            if margin > 0 { return true }
            // Inside and deeper than −margin: no edge within −margin.
            return distanceToEdge(latitude: latitude, longitude: longitude, bound: -margin) >= -margin
        }
        if margin < 0 { return false }
        return distanceToEdge(latitude: latitude, longitude: longitude, bound: margin.nextUp) <= margin
    }
}

/// A point of the plane (x, y): working longitude and latitude, or metres. A plain struct, not
/// SIMD2: the same code in optimized builds, and no generic dispatch per operation in debug ones.
@usableFromInline
struct XY: Sendable, Hashable {
    @usableFromInline var x: Double
    @usableFromInline var y: Double
    @inlinable @inline(__always) init(_ x: Double, _ y: Double) { self.x = x; self.y = y }
    @inlinable @inline(__always) init(repeating v: Double) { x = v; y = v }
    @inlinable @inline(__always) static func + (a: XY, b: XY) -> XY { XY(a.x + b.x, a.y + b.y) }
    @inlinable @inline(__always) static func - (a: XY, b: XY) -> XY { XY(a.x - b.x, a.y - b.y) }
    @inlinable @inline(__always) static func * (a: XY, b: XY) -> XY { XY(a.x * b.x, a.y * b.y) }
    @inlinable @inline(__always) static func * (a: XY, k: Double) -> XY { XY(a.x * k, a.y * k) }
    @inlinable @inline(__always) static func / (a: XY, k: Double) -> XY { XY(a.x / k, a.y / k) }
    @inlinable @inline(__always) static func - (a: XY, k: Double) -> XY { XY(a.x - k, a.y - k) }
    @inlinable @inline(__always) static func + (a: XY, k: Double) -> XY { XY(a.x + k, a.y + k) }
    @inlinable @inline(__always) static func -= (a: inout XY, b: XY) { a = a - b }
    @inlinable @inline(__always) static func += (a: inout XY, b: XY) { a = a + b }
    @inlinable @inline(__always) func sum() -> Double { x + y }
    @inlinable @inline(__always) static func minimum(_ a: XY, _ b: XY) -> XY { XY(Swift.min(a.x, b.x), Swift.min(a.y, b.y)) }
    @inlinable @inline(__always) static func maximum(_ a: XY, _ b: XY) -> XY { XY(Swift.max(a.x, b.x), Swift.max(a.y, b.y)) }
}

/// cos of an angle in degrees.
@inlinable
func cosDegrees(_ d: Double) -> Double { cos(d * (Double.pi / 180)) }
