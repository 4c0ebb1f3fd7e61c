// RegionIndex: a packed, static R-tree over regions' latitude/longitude boxes (the flatbush design:
// Hilbert-sorted entries, 16 children per node, built bottom-up in one pass), with each region's exact
// geometry stored next to its leaf entry.
//
// Size: one data structure: its layout (below), the bottom-up build and the queries read and
// write the same packed arrays, and the layout comment stays beside the code that keeps it.
//
// Layout
//   entries     one per region box (two for a cap crossing the antimeridian), in Hilbert order of
//               the box centres (24 bits per axis over the data's extent: 5 cm cells for a city,
//               2.4 m for the whole Earth, so dense clusters still sort finely). Per entry: slot (4 B) + exact geometry (32 B: centre as a unit
//               vector and the radius's squared chord; polygons point into a side table).
//   leaves      leaf i holds the boxes of entries 16·i ..< 16·i+16 as 16-bit offsets in the leaf's
//               own frame (its bounding box, kept per leaf as 4 Floats, with the parameters of
//               the circle decision in LeafDecision.swift: 32 B): 128 B, two cache lines.
//   nodes       inner level 1 holds the unions of 16 leaves, level L+1 of 16 level-L nodes; the
//               root is the single node of the top level. A node is four SIMD16<Float> (min/max
//               latitude, min/max longitude) = 256 B, so one node test is four vector subtractions and
//               the set lanes come out as a 16-bit mask. Empty lanes hold an empty box.
//   boxes       Float32 rounded outwards (±1e-7 relative, ~2 m at 180°), leaves' 16-bit offsets
//               rounded outwards and widened by one unit. Rounding is monotone, so a box test never
//               rejects what the Double boxes accept; the exact test then decides.
//
// Sizing at 1M circles: 62,500 leaves (8 MB) + frames (2 MB) + 4,167 inner nodes (1 MB), 4 MB of
// slots, 32 MB of geometry: ~47 B per circle (target ≤ 64). Depth 5.
//
// Cost per query: the root plus, per level, the few nodes whose box holds the point — with small
// regions about 1.4 nodes per level at 1M (5.5 inner nodes and 1.6 leaves per query) — then one
// exact test (a squared chord against the radius's, no trigonometry once the point's unit vector
// is known) per box that holds the point — for a point query, only for the boxes that do not
// decide their circle themselves (LeafDecision.swift: most circles, most points). Independent of the number of regions but for the log16
// depth. The hot loop is branch-light SIMD: an inner node test is four Float subtractions per lane
// group OR-ed together (a lane misses when any difference has its sign set), a leaf test eight
// 16-bit compares; the 16 lane results become a bit mask by narrowing to bytes and one multiply
// per 8 lanes; the query's leaf-frame bounds are rounded without floorf/ceilf calls. About 1,290
// instructions per query at 1M uniform (callgrind; 1,600 before this layout of the loop), most of
// the rest being the point's sin/cos and the cache misses on leaves and geometry.
// (Tried and dropped: 16-bit inner nodes like the leaves: half the bytes, but the per-node frame
// arithmetic made it ~20 % more instructions and ~10 % slower. Level 1 alone as 16-bit nodes, with
// the grid, was measured again: ~100 instructions a query more, no faster; TreeGrid.swift.)
// A point query enters the tree at level 1 (at 1M) through a grid over the tree's extent, not at
// the root (TreeGrid.swift): 900 instructions a query at 1M uniform, 1,098 from the root.
//
// Static: regions added later go to a delta list kept by `RegionCatalog`, which rebuilds the tree
// when the delta grows past n/8 (see there).
import Position

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif hasFeature(Embedded)
import CLibm
#endif

public struct RegionIndex: Sendable {
    @usableFromInline
    struct Node: Sendable {
        var minLat: SIMD16<Float>, maxLat: SIMD16<Float>, minLon: SIMD16<Float>, maxLon: SIMD16<Float>
        static let empty = Node(minLat: .init(repeating: .infinity), maxLat: .init(repeating: -.infinity),
                                minLon: .init(repeating: .infinity), maxLon: .init(repeating: -.infinity))
        var union: (Float, Float, Float, Float) { (minLat.min(), maxLat.max(), minLon.min(), maxLon.max()) }
    }

    /// A leaf's 16 boxes, each coordinate as (value − frame minimum) × scale in 0…65535, rounded
    /// outwards and widened by one unit (Float rounding in the scaling is ~0.01 unit): 128 B,
    /// two cache lines, where Float boxes took four — the leaf level is the one that misses.
    @usableFromInline
    struct Leaf: Sendable {
        var minLat: SIMD16<Int16>, maxLat: SIMD16<Int16>, minLon: SIMD16<Int16>, maxLon: SIMD16<Int16>
    }

    /// A leaf's frame and what a point query needs to decide its circles from their 16-bit boxes
    /// alone (LeafDecision.swift): 32 B, two to a cache line.
    @usableFromInline
    struct LeafFrame: Sendable, BitwiseCopyable {
        /// (minimum latitude, minimum longitude, scale latitude, scale longitude): a coordinate x
        /// is (x − minimum) × scale units of the 16-bit boxes.
        var frame: SIMD4<Float>
        /// E: units by which a decidable lane's decoded centre and half-extents (from its box) may
        /// differ from those of its circle's ellipse; measured at build, rounded up.
        var tolerance: Float
        /// η: relative band of the planar test around ρ² = 1 (sphere vs plane, rounding).
        var band: Float
        /// Bit i: lane i is a circle whose box decides a point query (with `tolerance`, `band`).
        var decidable: UInt32
        /// Bit i: lane i's slot is its own entry number, 16·leaf + i (a zone set numbers its zones
        /// in the tree's order, so most are): a query hit there is answered without reading the
        /// slot. Checked against the slots when a zone set is opened. (0 in files before it.)
        var identity: UInt32 = 0
    }

    /// Sets the ``LeafFrame/identity`` bits of `frames` from the entries' slots (`slot(k)` for
    /// k < `entryCount`, the multiple bit included).
    /// - Complexity: O(entries).
    static func markIdentityLanes(_ frames: inout [LeafFrame], entryCount: Int, slot: (Int) -> UInt32) {
        for k in 0 ..< entryCount where slot(k) == UInt32(truncatingIfNeeded: k) {
            frames[k >> 4].identity |= 1 << UInt32(k & 15)
        }
    }

    /// A scaled coordinate (0…65535 in the leaf's frame, anything outside clamped) as the signed
    /// 16-bit value stored in leaves (unit − 32768: SSE compares signed 16-bit lanes natively).
    @inline(__always)
    static func quantize(_ x: Float, down: Bool) -> Int16 {
        let c = min(65535, max(0, down ? x.rounded(.down) : x.rounded(.up)))
        return Int16(Int32(c) - 32768)
    }

    /// Exact geometry of an entry: a circle (centre vector, `radius` = squared chord of the radius
    /// ≥ 0) or, with a negative `radius`, polygon number −radius − 1.
    @usableFromInline
    struct EntryGeometry: Sendable, BitwiseCopyable {
        var center: Vec3
        var radius: Double
    }

    /// Bit 31 of an entry's slot: the region has more than one entry (results need de-duplication).
    static let multiple: UInt32 = 1 << 31

    /// Inner nodes, level 1 first, root last.
    private var nodes: [Node] = []
    /// Start of inner level L (L ≥ 1) in `nodes` at index L − 1.
    private var levelStart: [Int] = []
    /// Leaf nodes: the boxes of entries 16·i ..< 16·i+16, quantized to 16 bits in the leaf's frame.
    private var leaves: [Leaf] = []
    /// Per leaf: its frame and circle-decision parameters.
    private var frames: [LeafFrame] = []
    private var entryCount = 0
    private var entrySlots: [UInt32] = []
    private var geometry: [EntryGeometry] = []
    private var polygons: [PolygonRegion] = []
    /// The grid that lets a query enter the tree below its root (TreeGrid.swift); empty for a
    /// tree of fewer than 3 levels.
    private var grid: [UInt32] = []
    /// Number of regions indexed.
    public private(set) var count = 0

    /// An empty index.
    public init() {}

    /// Bulk-loads `regions` (slot numbers are the caller's names for them, < 2³¹).
    /// - Complexity: O(n) plus a radix sort of n 64-bit keys; ~0.3 s at 1M circles.
    public init(_ regions: some Sequence<(slot: Int32, shape: RegionShape)>) {
        var boxes: [GeoBox] = []
        var slots: [UInt32] = []
        var geos: [EntryGeometry] = []
        var polys: [PolygonRegion] = []
        var circles: [DecodableCircle?] = []
        var n = 0
        for (slot, shape) in regions {
            precondition(slot >= 0, "slots are non-negative")
            n += 1
            let geo: EntryGeometry
            switch shape {
            case .circle(let c): geo = EntryGeometry(center: c.centerVector, radius: c.chord2Radius)
            case .polygon(let p):
                geo = EntryGeometry(center: Vec3(p.center), radius: -Double(polys.count) - 1)
                polys.append(p)
            }
            let (a, b) = shape.boundingBoxes
            let s = UInt32(slot) | (b == nil ? 0 : Self.multiple)
            boxes.append(a); slots.append(s); geos.append(geo)
            if case .circle(let c) = shape, b == nil {
                circles.append(DecodableCircle(latitude: c.center.latitude, longitude: c.center.longitude, angle: c.radius / Geodesy.earthRadius))
            } else {
                circles.append(nil)
            }
            if let b { boxes.append(b); slots.append(s); geos.append(geo); circles.append(nil) }
        }
        count = n
        polygons = polys
        guard !boxes.isEmpty else { return }

        let order = Self.hilbertOrder(count: boxes.count) { boxes[$0] }
        let e = boxes.count
        let leafCount = (e + 15) / 16
        entrySlots = [UInt32](repeating: 0, count: leafCount * 16)
        geometry = [EntryGeometry](repeating: EntryGeometry(center: Vec3(x: 0, y: 0, z: 0), radius: 0), count: leafCount * 16)
        for (k, i) in order.enumerated() {
            entrySlots[k] = slots[Int(i)]
            geometry[k] = geos[Int(i)]
        }
        entryCount = e
        let tree = Self.packTree(entryCount: e, box: { boxes[Int(order[$0])] }, circle: { circles[Int(order[$0])] })
        nodes = tree.nodes; levelStart = tree.levelStart; leaves = tree.leaves; frames = tree.frames
        Self.markIdentityLanes(&frames, entryCount: e) { entrySlots[$0] }
        grid = tree.grid
    }

    /// The inner nodes, leaves and frames of a packed tree (the layout described at the top).
    struct PackedTree {
        var nodes: [Node] = []
        var levelStart: [Int] = []
        var leaves: [Leaf] = []
        var frames: [LeafFrame] = []
        /// See TreeGrid.swift.
        var grid: [UInt32] = []
    }

    /// The order of `count` boxes on the Hilbert curve of their centres over the data's extent:
    /// element k of the result is the box that goes to entry k.
    /// - Complexity: O(n) (a radix sort of n 48-bit keys); 20 B per box while it runs.
    static func hilbertOrder(count: Int, box: (Int) -> GeoBox) -> [UInt32] {
        var lo = SIMD2<Double>(repeating: .infinity), hi = SIMD2<Double>(repeating: -.infinity)
        for i in 0 ..< count {
            let b = box(i)
            let c = SIMD2((b.minLatitude + b.maxLatitude) / 2, (b.minLongitude + b.maxLongitude) / 2)
            lo = pointwiseMin(lo, c); hi = pointwiseMax(hi, c)
        }
        let scale = SIMD2<Double>(repeating: 16_777_215) / pointwiseMax(hi - lo, SIMD2(repeating: 1e-12))
        var keys = [UInt64](repeating: 0, count: count)
        for i in 0 ..< count {
            let b = box(i)
            let c = SIMD2((b.minLatitude + b.maxLatitude) / 2, (b.minLongitude + b.maxLongitude) / 2)
            let q = (c - lo) * scale
            keys[i] = Self.hilbert(UInt32(q.x.rounded(.down).clamped(0, 16_777_215)),
                                   UInt32(q.y.rounded(.down).clamped(0, 16_777_215)))
        }
        return Self.radixSortedIndices(consume keys)
    }

    /// Packs `entryCount` boxes, given in entry order by `box`, into leaves, their frames and the
    /// inner levels above them. One leaf's Float boxes are built at a time, so the memory is that
    /// of the result (~9 B per entry), whatever the number of entries.
    /// - Complexity: O(n).
    static func packTree(entryCount e: Int, box: (Int) -> GeoBox, circle: (Int) -> DecodableCircle?) -> PackedTree {
        var tree = PackedTree()
        guard e > 0 else { return tree }
        let leafCount = (e + 15) / 16
        tree.leaves.reserveCapacity(leafCount)
        tree.frames.reserveCapacity(leafCount)
        var level = [Node](repeating: .empty, count: leafCount > 1 ? (leafCount + 15) / 16 : 0)
        for leaf in 0 ..< leafCount {
            var node = Node.empty
            // A Node is 64 Floats: minLat[16], maxLat[16], minLon[16], maxLon[16]; write lanes as
            // plain Floats (SIMD lane setters are slow in bulk).
            withUnsafeMutableBytes(of: &node) { raw in
                let f = raw.bindMemory(to: Float.self)
                for lane in 0 ..< Swift.min(16, e - 16 * leaf) {
                    let b = box(16 * leaf + lane)
                    f[lane] = Float(b.minLatitude).nextDown
                    f[lane + 16] = Float(b.maxLatitude).nextUp
                    f[lane + 32] = Float(b.minLongitude).nextDown
                    f[lane + 48] = Float(b.maxLongitude).nextUp
                }
            }
            let u = node.union
            let (quantizedLeaf, frame) = Self.quantized(node)
            tree.leaves.append(quantizedLeaf)
            tree.frames.append(Self.leafFrame(quantizedLeaf, frame: frame, lanes: Swift.min(16, e - 16 * leaf)) { circle(16 * leaf + $0) })
            if leafCount > 1 {
                level[leaf >> 4].minLat[leaf & 15] = u.0
                level[leaf >> 4].maxLat[leaf & 15] = u.1
                level[leaf >> 4].minLon[leaf & 15] = u.2
                level[leaf >> 4].maxLon[leaf & 15] = u.3
            }
        }
        guard leafCount > 1 else { return tree }
        tree.nodes.reserveCapacity(leafCount / 15 + 8)
        tree.levelStart.append(0)
        tree.nodes.append(contentsOf: level)
        while level.count > 1 {
            var parents = [Node](repeating: .empty, count: (level.count + 15) / 16)
            for (k, child) in level.enumerated() {
                let u = child.union
                parents[k >> 4].minLat[k & 15] = u.0
                parents[k >> 4].maxLat[k & 15] = u.1
                parents[k >> 4].minLon[k & 15] = u.2
                parents[k >> 4].maxLon[k & 15] = u.3
            }
            tree.levelStart.append(tree.nodes.count)
            tree.nodes.append(contentsOf: parents)
            level = parents
        }
        tree.grid = Self.grid(nodes: tree.nodes, levelStart: tree.levelStart, leafCount: leafCount)
        return tree
    }

    /// `node`'s 16 boxes as 16-bit offsets in the frame of their union (min lat, min lon, scale
    /// lat, scale lon), rounded outwards and widened by one unit; empty lanes stay empty.
    static func quantized(_ node: Node) -> (Leaf, SIMD4<Float>) {
        let u = node.union
        let scale = SIMD2<Float>(u.1 > u.0 ? 65535 / (u.1 - u.0) : 0, u.3 > u.2 ? 65535 / (u.3 - u.2) : 0)
        let frame = SIMD4<Float>(u.0, u.2, scale.x, scale.y)
        func quantized(_ v: SIMD16<Float>, _ base: Float, _ s: Float, widen: Float) -> SIMD16<Int16> {
            var r = SIMD16<Int16>()
            for l in 0 ..< 16 {
                let x = v[l]
                guard x.isFinite else { r[l] = widen < 0 ? .max : .min; continue }   // empty lane
                r[l] = Self.quantize((x - base) * s + widen, down: widen < 0)
            }
            return r
        }
        let leaf = Leaf(minLat: quantized(node.minLat, u.0, scale.x, widen: -1), maxLat: quantized(node.maxLat, u.0, scale.x, widen: 1),
                        minLon: quantized(node.minLon, u.2, scale.y, widen: -1), maxLon: quantized(node.maxLon, u.2, scale.y, widen: 1))
        return (leaf, frame)
    }

    /// Bytes held by the index (nodes, slots, geometry, polygons), excluding array headers.
    public var memoryFootprint: Int {
        var bytes = nodes.capacity * MemoryLayout<Node>.stride
            + leaves.capacity * MemoryLayout<Leaf>.stride + frames.capacity * MemoryLayout<LeafFrame>.stride
            + entrySlots.capacity * 4 + geometry.capacity * MemoryLayout<EntryGeometry>.stride
            + levelStart.capacity * 8 + grid.capacity * 4
        for p in polygons {
            bytes += MemoryLayout<PolygonRegion>.stride + p.byteCount
        }
        return bytes
    }

    /// Depth of the tree (levels of nodes, leaves included).
    public var depth: Int { leaves.isEmpty ? 0 : levelStart.count + 1 }

    /// Replaces `results` with the slots of the regions whose signed distance to `point` is ≤
    /// `margin` metres (0: the regions containing it) — exactly those, in no particular order,
    /// each once.
    /// - Complexity: O(log₁₆ n + k) for k regions whose boxes hold the point; no allocation once
    ///   `results` has grown to its working capacity.
    public func query(_ point: Coordinate, margin: Double = 0, into results: inout [Int32]) {
        Self.empty(&results)
        guard !leaves.isEmpty else { return }
        withView { $0.query(point, margin: margin, into: &results) }
    }

    /// Replaces `results` with the slots of the regions whose bounding box meets the cap of
    /// `angularRadius` radians around `center`: a superset of those within that distance.
    public func candidates(near center: Coordinate, angularRadius: Double, into results: inout [Int32]) {
        results.removeAll(keepingCapacity: true)
        guard !leaves.isEmpty else { return }
        withView { $0.candidates(near: center, angularRadius: angularRadius, into: &results) }
    }

    /// The tree's arrays as an ``IndexView`` (the search code the mapped zone set shares).
    @inline(__always)
    private func withView(_ body: (IndexView<PolygonArray>) -> Void) {
        var starts = SIMD8<Int32>()
        for (i, s) in levelStart.enumerated() { starts[i] = Int32(s) }
        nodes.withUnsafeBufferPointer { nodes in
            leaves.withUnsafeBufferPointer { leaves in
                frames.withUnsafeBufferPointer { frames in
                    entrySlots.withUnsafeBufferPointer { slots in
                        geometry.withUnsafeBufferPointer { geo in
                            grid.withUnsafeBufferPointer { grid in
                                body(IndexView(nodes: nodes.baseAddress, leaves: leaves.baseAddress!, frames: frames.baseAddress!,
                                               levelStarts: starts, levels: levelStart.count, entryCount: entryCount,
                                               slots: slots.baseAddress!, geometry: geo.baseAddress!,
                                               polygons: PolygonArray(polygons: polygons),
                                               grid: grid.isEmpty ? nil : GridView(grid.baseAddress!)))
                            }
                        }
                    }
                }
            }
        }
    }

    /// The index's parts, for the zone-set writer (same module).
    var parts: (nodes: [Node], levelStart: [Int], leaves: [Leaf], frames: [LeafFrame], entryCount: Int,
                slots: [UInt32], geometry: [EntryGeometry], polygons: [PolygonRegion], grid: [UInt32]) {
        (nodes, levelStart, leaves, frames, entryCount, entrySlots, geometry, polygons, grid)
    }

    /// The query box (min lat, max lat, min lon, max lon) in a leaf's 16-bit frame, rounded
    /// outwards and clamped to the frame: lower bounds to ≤ ⌊x⌋, upper bounds to ≥ ⌈x⌉.
    @inline(__always)
    static func leafBounds(_ q: SIMD4<Float>, frame f: SIMD4<Float>) -> (loLat: Int16, hiLat: Int16, loLon: Int16, hiLon: Int16) {
        // round(m − 0.5) is ⌊m⌋ or, at a tie, ⌊m⌋ − 1; adding 1.5·2²³ rounds to an integer held in
        // the low mantissa bits (no floorf call, no conversion traps). m − 0.5 is exact below 2¹⁶.
        @inline(__always) func down(_ x: Float) -> Int32 {
            let m = Swift.min(Swift.max(x, 0), 65534) - 0.5 + 12_582_912
            return Int32(bitPattern: m.bitPattern) &- 0x4B40_0000 &- 32768
        }
        let lat = (q.lowHalf - SIMD2(repeating: f[0])) * f[2], lon = (q.highHalf - SIMD2(repeating: f[1])) * f[3]
        return (Int16(truncatingIfNeeded: down(lat[0])), Int16(truncatingIfNeeded: down(lat[1]) &+ 1),
                Int16(truncatingIfNeeded: down(lon[0])), Int16(truncatingIfNeeded: down(lon[1]) &+ 1))
    }

    /// The lanes' bit patterns (the sign in bit 31).
    @inline(__always)
    static func signs(_ v: SIMD16<Float>) -> SIMD16<Int32> { unsafeBitCast(v, to: SIMD16<Int32>.self) }

    /// The set lanes of 16 bytes that are each all ones or zero, as bits 0…15.
    /// (`SIMDMask._storage` and integer lanes rather than `replacing(with:where:)`: from masks,
    /// LLVM rebuilds the lanes one by one.)
    @inline(__always)
    static func laneBits(_ bytes: SIMD16<Int8>) -> UInt32 {
        // Gather each byte's top bit with one multiply per 8 lanes: byte i's bit 7 times
        // 2^(7·(7−i)) lands on bit 56 + i, and no two products overlap.
        let words = unsafeBitCast(bytes, to: SIMD2<UInt64>.self) & 0x8080_8080_8080_8080
        let gather: UInt64 = 0x0002_0408_1020_4081
        return UInt32(truncatingIfNeeded: (words[0] &* gather) >> 56) | UInt32(truncatingIfNeeded: (words[1] &* gather) >> 56) << 8
    }

    /// Empties `results`, keeping its capacity: a query's few results are popped one by one
    /// (~10 instructions each), where `removeAll(keepingCapacity:)` costs ~45 (a uniqueness
    /// check and a general `replaceSubrange`).
    @inline(__always)
    static func empty(_ results: inout [Int32]) {
        while !results.isEmpty { results.removeLast() }
    }

    static func deduplicate(_ results: inout [Int32]) {
        guard results.count > 1 else { return }
        results.sort()
        var w = 1
        for r in 1 ..< results.count where results[r] != results[w - 1] {
            results[w] = results[r]; w += 1
        }
        results.removeLast(results.count - w)
    }

    /// Position of (x, y) (each < 2²⁴) on the Hilbert curve of order 24: a key < 2⁴⁸.
    static func hilbert(_ x0: UInt32, _ y0: UInt32) -> UInt64 {
        var x = x0, y = y0
        var d: UInt64 = 0
        var s: UInt32 = 1 << 23
        while s > 0 {
            let rx: UInt32 = (x & s) != 0 ? 1 : 0
            let ry: UInt32 = (y & s) != 0 ? 1 : 0
            d &+= UInt64(s) &* UInt64(s) &* UInt64((3 &* rx) ^ ry)
            if ry == 0 {
                if rx == 1 { x = 0xFF_FFFF ^ x; y = 0xFF_FFFF ^ y }
                swap(&x, &y)
            }
            s >>= 1
        }
        return d
    }

    /// Indices of `keys` (< 2⁴⁸) in ascending key order (LSD radix sort, 3 passes of 16 bits; stable).
    /// - Complexity: O(n); 24 B per key while it runs (the keys are taken over, not copied).
    static func radixSortedIndices(_ keys: consuming [UInt64]) -> [UInt32] {
        var k = consume keys
        var idx = (0 ..< UInt32(k.count)).map { $0 }
        var tmp = [UInt32](repeating: 0, count: k.count)
        var ktmp = [UInt64](repeating: 0, count: k.count)
        var counts = [Int](repeating: 0, count: 65_537)
        for pass in 0 ..< 3 {
            let shift = UInt64(pass * 16)
            for i in counts.indices { counts[i] = 0 }
            for key in k { counts[Int((key >> shift) & 0xFFFF) + 1] += 1 }
            for i in 1 ..< counts.count { counts[i] += counts[i - 1] }
            for i in k.indices {
                let b = Int((k[i] >> shift) & 0xFFFF)
                let dst = counts[b]
                counts[b] += 1
                ktmp[dst] = k[i]; tmp[dst] = idx[i]
            }
            swap(&k, &ktmp); swap(&idx, &tmp)
        }
        return idx
    }
}

extension Double {
    func clamped(_ lo: Double, _ hi: Double) -> Double { Swift.min(hi, Swift.max(lo, self)) }
}
