// Builds a polygon block (PolygonGeometry.swift) from GeoJSON-style parts, validating the geometry
// once: coordinates in range, rings of at least three distinct vertices and non-zero area, no spike
// that folds back along itself, and no two edges that cross or overlap anywhere in the polygon.
//
// The crossing check uses the edge index itself: two edges that meet do so at a point of some leaf
// cell, and every leaf lists every edge that meets it, so testing the pairs within each leaf finds
// every crossing. A leaf holds at most `PolygonView.leafEdges` edges short beside it (at the
// maximum depth at most `crowdedLeafEdges` edges: more within centimetres of each other is a
// drawing error), so for a boundary as borders are drawn — edges short beside the features they
// outline — the pairs cost O(n) and the whole build O(n log n), as a Shamos–Hoey sweep would, with
// one structure for both jobs. A sheaf of long thin spikes (no real border) makes leaves of many
// long edges: the build stays O(n log n) in memory, their pairs cost O(k²) per leaf of k edges.
//
// Touching is allowed (a hole that touches its outer ring at a vertex, two parts that share a
// corner, a ring that touches itself at a vertex): the even-odd rule gives those the inside that
// was drawn. Crossing and overlapping edges are refused: no rule gives them one.
import Position

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif hasFeature(Embedded)
import CLibm
#endif

/// An owned polygon block: aligned bytes freed with the block.
@usableFromInline
final class PolygonBlock: @unchecked Sendable {
    @usableFromInline let view: PolygonView
    let length: Int
    /// nil for a block inside a mapped zone set, which the set's owner keeps alive.
    private let owned: UnsafeMutableRawPointer?

    init(owning bytes: UnsafeMutableRawPointer, length: Int) {
        owned = bytes; self.length = length; view = PolygonView(UnsafeRawPointer(bytes))
    }

    init(mapped bytes: UnsafeRawPointer, length: Int) {
        owned = nil; self.length = length; view = PolygonView(bytes)
    }

    deinit { owned?.deallocate() }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: view.base, count: length) }
}

enum PolygonBlockBuilder {
    /// Edges allowed in a leaf at the maximum depth.
    static let crowdedLeafEdges = 64
    /// Degrees: vertices closer than this to an edge's line count as on it (≈ 0.1 mm).
    static let onLine = 1e-9

    /// Validates `parts` and builds their block.
    /// - Complexity: O(n log n) for n vertices; ~60 B per vertex while it runs.
    static func build(parts input: [[[Coordinate]]]) throws(RegionError) -> PolygonBlock {
        guard !input.isEmpty else { throw .tooFewVertices(0) }
        let multiple = input.count > 1
        func name(_ p: Int, _ r: Int) -> String { multiple ? "part \(p) ring \(r)" : "ring \(r)" }

        // Rings as given (deduplicated) and their working points.
        var vertices: [XY] = []         // (lat, lon)
        var points: [XY] = []           // (x, y), each ring closed
        var ringStarts: [UInt32] = [0]
        var partStarts: [UInt32] = [0]
        var ringNames: [(Int, Int)] = []
        // A ring of zero area is reported after the crossings: a symmetric bow-tie has zero
        // signed area too, but its fault is the crossing.
        var areaError: RegionError? = nil
        for (p, part) in input.enumerated() {
            guard !part.isEmpty else { throw .tooFewVertices(0) }
            var outerCentre = 0.0
            for (r, ringIn) in part.enumerated() {
                var ring: [Coordinate] = []
                ring.reserveCapacity(ringIn.count)
                for c in ringIn {
                    guard c.latitude.isFinite, c.longitude.isFinite, abs(c.latitude) <= 90, abs(c.longitude) <= 180
                    else { throw .badCoordinate(c) }
                    // A vertex repeated at once adds an edge of length zero: dropped.
                    if ring.last != c { ring.append(c) }
                }
                while ring.count > 1, ring.first == ring.last { ring.removeLast() }
                guard ring.count >= 3 else { throw .tooFewVertices(ring.count) }
                guard var xs = unwrap(ring) else {
                    let pole = ring.reduce(0) { $0 + $1.latitude } > 0 ? "North" : "South"
                    throw .degenerate("\(name(p, r)) winds around the \(pole) Pole without reaching it: its edges are straight in longitude/latitude (RFC 7946), so it is a band, not a cap; draw the cap along the ±180° meridian to the pole and back (as Natural Earth draws Antarctica), or use a circle")
                }
                // A hole (or a later part's ring) lies near its outer ring: shift it by whole turns.
                let lo = xs.min()!, hi = xs.max()!
                let centre = (lo + hi) / 2
                if r == 0 {
                    outerCentre = centre
                } else {
                    let turns = ((outerCentre - centre) / 360).rounded()
                    if turns != 0 { for i in xs.indices { xs[i] += 360 * turns } }
                }
                let first = points.count
                for (i, c) in ring.enumerated() {
                    vertices.append(XY(c.latitude, c.longitude))
                    points.append(XY(xs[i], c.latitude))
                }
                points.append(points[first])
                if areaError == nil {
                    do { try checkRing(points[first...], name: name(p, r)) } catch { areaError = error }
                }
                ringStarts.append(UInt32(points.count))
                ringNames.append((p, r))
            }
            partStarts.append(UInt32(ringStarts.count - 1))
        }
        guard points.count < Int(Int32.max) / 4 else { throw .badSetting("a polygon of \(vertices.count) vertices is too large") }
        var lo = XY(repeating: .infinity), hi = XY(repeating: -.infinity)
        for q in points { lo = XY.minimum(lo, q); hi = XY.maximum(hi, q) }
        // A box of positive size in both directions (a ring of non-zero area has one); padded so
        // that rounding in the halving never leaves a vertex outside.
        let pad = (hi - lo) * 1e-9 + XY(repeating: 1e-9)
        lo -= pad; hi += pad

        var edges: [UInt32] = []
        edges.reserveCapacity(points.count)
        for r in 0 ..< ringStarts.count - 1 {
            for e in Int(ringStarts[r]) ..< Int(ringStarts[r + 1]) - 1 { edges.append(UInt32(e)) }
        }
        func ringOf(_ e: UInt32) -> (Int, Int) {
            var a = 0, b = ringStarts.count - 1
            while b - a > 1 { let m = (a + b) / 2; if ringStarts[m] <= e { a = m } else { b = m } }
            return ringNames[a]
        }
        var tree = QuadtreeBuild(points: points, lo: lo, size: hi - lo)
        do {
            try tree.build(edges: edges, describe: { e, f in
                let (p, r) = ringOf(e), (p2, r2) = ringOf(f)
                let s = Int(ringStarts[ringNames.firstIndex { $0 == (p, r) }!])
                let s2 = Int(ringStarts[ringNames.firstIndex { $0 == (p2, r2) }!])
                let n = Int(ringStarts[ringNames.firstIndex { $0 == (p, r) }! + 1]) - s - 1
                func edge(_ e: UInt32, _ s: Int) -> String { "edge \(Int(e) - s)–\((Int(e) - s + 1) % n)" }
                if (p, r) == (p2, r2) { return "\(name(p, r)) crosses itself: \(edge(e, s)) meets \(edge(f, s))" }
                return "\(name(p, r)) \(edge(e, s)) meets \(name(p2, r2)) \(edge(f, s2))"
            })
        } catch {
            if let areaError, !tree.crossingFound { throw areaError }
            throw error
        }
        if let areaError { throw areaError }

        // The block.
        let layout = PolygonLayout(points: points.count, rings: ringStarts.count - 1, parts: partStarts.count - 1,
                                   nodes: tree.nodes.count / 4, edgeRefs: tree.edgeRefs.count, vertices: vertices.count)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: layout.size, alignment: 64)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: layout.size)
        func put32(_ v: Int, _ at: Int) { put32(UInt32(v), at) }
        func put32(_ v: UInt32, _ at: Int) { raw.storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt32.self) }
        func putF(_ v: Double, _ at: Int) { raw.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: at, as: UInt64.self) }
        put32(points.count, 0); put32(ringStarts.count - 1, 4); put32(partStarts.count - 1, 8)
        put32(tree.nodes.count / 4, 12); put32(tree.edgeRefs.count, 16); put32(vertices.count, 20)
        putF(lo.x, 24); putF(lo.y, 32); putF(hi.x, 40); putF(hi.y, 48)
        put32(PolygonLayout.magic, 56); put32(PolygonView.leafEdges, 60)
        for (i, q) in points.enumerated() { putF(q.x, layout.points + 16 * i); putF(q.y, layout.points + 16 * i + 8) }
        for (i, v) in vertices.enumerated() { putF(v.x, layout.vertices + 16 * i); putF(v.y, layout.vertices + 16 * i + 8) }
        for (i, s) in ringStarts.enumerated() { put32(s, layout.ringStarts + 4 * i) }
        for (i, s) in partStarts.enumerated() { put32(s, layout.partStarts + 4 * i) }
        for (i, w) in tree.nodes.enumerated() { put32(w, layout.nodes + 4 * i) }
        for (i, e) in tree.edgeRefs.enumerated() { put32(e, layout.edgeRefs + 4 * i) }
        return PolygonBlock(owning: raw, length: layout.size)
    }

    /// The ring's working longitudes: each edge the short way across ±180°, unless the ring winds
    /// around a pole through a vertex at the pole, which is read literally; nil for a ring that
    /// winds around a pole without reaching it (a band in longitude/latitude).
    static func unwrap(_ ring: [Coordinate]) -> [Double]? {
        var xs: [Double] = [ring[0].longitude]
        xs.reserveCapacity(ring.count)
        var winding = 0.0
        for i in 0 ..< ring.count {
            var d = ring[(i + 1) % ring.count].longitude - ring[i].longitude
            if d > 180 { d -= 360 } else if d < -180 { d += 360 }
            winding += d
            if i + 1 < ring.count { xs.append(xs[i] + d) }
        }
        if abs(winding) > 180 {
            guard ring.contains(where: { abs($0.latitude) == 90 }) else { return nil }
            return ring.map { $0.longitude }
        }
        return xs
    }

    /// A ring (closed, working points) of non-zero area without spikes.
    static func checkRing(_ ring: ArraySlice<XY>, name: String) throws(RegionError) {
        let p = Array(ring)
        let n = p.count - 1
        // Zero area: the ring's width (twice its area over its extent, in metres at its mean
        // latitude) under 0.1 m is a line as drawn, narrower than any fix can tell from its edge.
        var area2 = 0.0, lo = p[0], hi = p[0]
        for i in 0 ..< n {
            let a = p[i] - p[0], b = p[i + 1] - p[0]
            area2 += a.x * b.y - b.x * a.y
            lo = XY.minimum(lo, p[i]); hi = XY.maximum(hi, p[i])
        }
        let k = Geodesy.earthRadius * Double.pi / 180
        let cosine = max(1e-3, cos((lo.y + hi.y) / 2 * Double.pi / 180))
        let extent = max((hi.x - lo.x) * cosine, hi.y - lo.y) * k
        let area = abs(area2) * cosine * k * k
        guard area > max(1e-9 * extent * extent, 0.1 * extent) else {
            throw .degenerate("\(name) has zero area (its vertices lie on one line)")
        }
        for i in 0 ..< n {
            let a = p[i], b = p[i + 1], c = p[(i + 2) % n]
            let ab = b - a, bc = c - b
            let len = (ab * ab).sum().squareRoot()
            if abs(PolygonView.orient(a, b, c)) <= onLine * len, (ab * bc).sum() < 0 {
                throw .degenerate("\(name) folds back on itself at vertex \((i + 1) % n)")
            }
        }
    }
}

/// The quadtree's construction: nodes and edge lists in the block's layout.
struct QuadtreeBuild {
    let points: [XY]
    let lo: XY, size: XY
    var nodes: [UInt32] = []
    var edgeRefs: [UInt32] = []

    init(points: [XY], lo: XY, size: XY) {
        self.points = points; self.lo = lo; self.size = size
    }

    struct Cell {
        var node: Int
        var origin: XY, size: XY
        var depth: Int
        var edges: [UInt32]
        var reference: Int
        var inside: Bool
    }

    func a(_ e: UInt32) -> XY { points[Int(e)] }
    func b(_ e: UInt32) -> XY { points[Int(e) + 1] }

    /// Whether edge e meets the closed box (origin, size) widened by `slack`.
    func meets(_ e: UInt32, _ origin: XY, _ size: XY, slack: Double) -> Bool {
        let p = a(e), q = b(e)
        let boxLo = origin - slack, boxHi = origin + size + slack
        if max(p.x, q.x) < boxLo.x || min(p.x, q.x) > boxHi.x || max(p.y, q.y) < boxLo.y || min(p.y, q.y) > boxHi.y { return false }
        let s0 = PolygonView.orient(p, q, boxLo), s1 = PolygonView.orient(p, q, XY(boxHi.x, boxLo.y))
        let s2 = PolygonView.orient(p, q, boxHi), s3 = PolygonView.orient(p, q, XY(boxLo.x, boxHi.y))
        if s0 > 0, s1 > 0, s2 > 0, s3 > 0 { return false }
        if s0 < 0, s1 < 0, s2 < 0, s3 < 0 { return false }
        return true
    }

    /// Squared distance from point r to edge e.
    func distance2(_ r: XY, _ e: UInt32) -> Double {
        let p = a(e) - r, ab = b(e) - a(e)
        let len2 = (ab * ab).sum()
        let t = len2 > 0 ? min(1, max(0, -(p * ab).sum() / len2)) : 0
        let d = p + ab * t
        return (d * d).sum()
    }

    /// The first reference point of the cell that is not within rounding of any of `edges`.
    func chooseReference(_ origin: XY, _ size: XY, _ edges: [UInt32]) -> Int? {
        let tolerance = max(1e-9 * max(size.x, size.y), 1e-12)
        for k in 0 ..< PolygonView.referenceFractions.count {
            let r = PolygonView.reference(k, x0: origin.x, y0: origin.y, w: size.x, h: size.y)
            if edges.allSatisfy({ distance2(r, $0) > tolerance * tolerance }) { return k }
        }
        return nil
    }

    /// Set when the build stopped at edges that cross (not at an overlap or a crowded cell).
    var crossingFound = false

    mutating func build(edges: [UInt32], describe: (UInt32, UInt32) -> String) throws(RegionError) {
        guard let rootReference = chooseReference(lo, size, edges) else {
            throw .degenerate("no point of its box is clear of its edges")
        }
        let r = PolygonView.reference(rootReference, x0: lo.x, y0: lo.y, w: size.x, h: size.y)
        // Outside the box, hence outside the polygon.
        let outside = lo - size * XY(0.5123, 0.4321) - XY(1.2345, 0.6789)
        var inside = false
        for e in edges where PolygonView.crosses(outside, r, a(e), b(e)) { inside.toggle() }
        nodes = [0, 0, 0, 0]
        var stack = [Cell(node: 0, origin: lo, size: size, depth: 0, edges: edges, reference: rootReference, inside: inside)]
        let slack = 1e-12 * max(size.x, size.y)
        while let cell = stack.popLast() {
            // As S2's ShapeIndex does, only edges short beside the cell ask for a split: an edge
            // longer than the cell's diagonal would be copied into every child it crosses, and
            // a cell crossed by many long edges (a sheaf of spikes) stays one leaf that lists them.
            let diagonal2 = (cell.size * cell.size).sum()
            var short = 0
            if cell.edges.count > PolygonView.leafEdges {
                for e in cell.edges {
                    let d = b(e) - a(e)
                    if (d * d).sum() <= diagonal2 { short += 1; if short > PolygonView.leafEdges { break } }
                }
            }
            if short <= PolygonView.leafEdges || cell.depth == PolygonView.maximumDepth {
                try checkPairs(cell, describe: describe)
                let n = 4 * cell.node
                nodes[n] = 0x8000_0000 | UInt32(edgeRefs.count)
                nodes[n + 1] = UInt32(cell.edges.count)
                nodes[n + 2] = cell.inside ? 1 : 0
                nodes[n + 3] = UInt32(cell.reference)
                edgeRefs.append(contentsOf: cell.edges)
                continue
            }
            let first = nodes.count / 4
            nodes.append(contentsOf: repeatElement(0, count: 16))
            let parentReference = PolygonView.reference(cell.reference, x0: cell.origin.x, y0: cell.origin.y, w: cell.size.x, h: cell.size.y)
            let half = cell.size * 0.5
            for quadrant in 0 ..< 4 {
                nodes[4 * cell.node + quadrant] = UInt32(first + quadrant)
                let origin = XY(quadrant & 1 != 0 ? cell.origin.x + half.x : cell.origin.x,
                                   quadrant & 2 != 0 ? cell.origin.y + half.y : cell.origin.y)
                let childEdges = cell.edges.filter { meets($0, origin, half, slack: slack) }
                guard let k = chooseReference(origin, half, childEdges) else {
                    throw .degenerate("no point of a cell near (\(origin.y), \(origin.x)) is clear of its edges")
                }
                let c = PolygonView.reference(k, x0: origin.x, y0: origin.y, w: half.x, h: half.y)
                var childInside = cell.inside
                for e in cell.edges where PolygonView.crosses(parentReference, c, a(e), b(e)) { childInside.toggle() }
                stack.append(Cell(node: first + quadrant, origin: origin, size: half, depth: cell.depth + 1,
                                  edges: childEdges, reference: k, inside: childInside))
            }
        }
    }

    /// Refuses two edges of a leaf that cross or overlap.
    mutating func checkPairs(_ cell: Cell, describe: (UInt32, UInt32) -> String) throws(RegionError) {
        let edges = cell.edges
        if cell.depth == PolygonView.maximumDepth, edges.count > PolygonBlockBuilder.crowdedLeafEdges {
            let c = cell.origin + cell.size * 0.5
            throw .degenerate("\(edges.count) edges meet within centimetres near latitude \(c.y), longitude \(longitude(c.x))")
        }
        guard edges.count > 1 else { return }
        let eps = PolygonBlockBuilder.onLine
        for i in 0 ..< edges.count - 1 {
            let p = a(edges[i]), q = b(edges[i])
            let pq = (q - p), lpq = (pq * pq).sum().squareRoot()
            for j in i + 1 ..< edges.count {
                let r = a(edges[j]), s = b(edges[j])
                let rs = s - r, lrs = (rs * rs).sum().squareRoot()
                // Signed distances of each end from the other edge's line.
                let d1 = PolygonView.orient(r, s, p) / lrs, d2 = PolygonView.orient(r, s, q) / lrs
                let d3 = PolygonView.orient(p, q, r) / lpq, d4 = PolygonView.orient(p, q, s) / lpq
                if ((d1 > eps && d2 < -eps) || (d1 < -eps && d2 > eps)) && ((d3 > eps && d4 < -eps) || (d3 < -eps && d4 > eps)) {
                    let x = crossing(p, q, r, s)
                    crossingFound = true
                    throw .degenerate("\(describe(edges[i], edges[j])) near latitude \(x.y), longitude \(longitude(x.x)) (list each ring's vertices in order around it)")
                }
                if abs(d1) <= eps, abs(d2) <= eps, abs(d3) <= eps, abs(d4) <= eps {
                    // Collinear: do they share more than a point?
                    let u = lpq >= lrs ? pq / lpq : rs / lrs
                    let o = lpq >= lrs ? p : r
                    let t = [(p - o) * u, (q - o) * u, (r - o) * u, (s - o) * u].map { $0.sum() }
                    let overlap = min(max(t[0], t[1]), max(t[2], t[3])) - max(min(t[0], t[1]), min(t[2], t[3]))
                    if overlap > eps {
                        throw .degenerate("\(describe(edges[i], edges[j])) along a stretch near latitude \(p.y), longitude \(longitude(p.x)) (edges that overlap)")
                    }
                }
            }
        }
    }

    /// A working longitude as a longitude in [−180, 180].
    func longitude(_ x: Double) -> Double {
        var x = x
        while x > 180 { x -= 360 }
        while x < -180 { x += 360 }
        return x
    }

    func crossing(_ p: XY, _ q: XY, _ r: XY, _ s: XY) -> XY {
        let d1 = PolygonView.orient(r, s, p), d2 = PolygonView.orient(r, s, q)
        let t = d1 / (d1 - d2)
        return p + (q - p) * t
    }
}
