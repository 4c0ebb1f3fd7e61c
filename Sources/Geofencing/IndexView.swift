// The packed R-tree's search over raw storage: one walk shared by the in-memory `RegionIndex`
// (its arrays) and the memory-mapped zone set (its sections), so both answer every query the
// same way. See RegionIndex.swift for the layout and the cost of a query.
import Position
import CLibm

/// Exact tests of polygon entries (an entry's geometry names polygon number −radius − 1).
@usableFromInline
protocol PolygonTable {
    /// Whether `point`'s signed distance to polygon `index` (metres, negative inside) is ≤ `margin`.
    func isWithin(polygon index: Int, _ point: Coordinate, margin: Double) -> Bool
}

/// The polygons of an in-memory index.
struct PolygonArray: PolygonTable {
    let polygons: [PolygonRegion]
    @inline(__always)
    func isWithin(polygon index: Int, _ point: Coordinate, margin: Double) -> Bool { polygons[index].isWithin(point, margin: margin) }
}

/// A packed R-tree laid out as `RegionIndex` describes, seen through pointers. Valid while the
/// storage it points into lives; the caller guarantees the structure is consistent (the mapped
/// set checks it when it opens the file).
struct IndexView<Polygons: PolygonTable> {
    /// Inner nodes, level 1 first, root last (nil when the tree is a single leaf).
    let nodes: UnsafePointer<RegionIndex.Node>?
    let leaves: UnsafePointer<RegionIndex.Leaf>
    let frames: UnsafePointer<RegionIndex.LeafFrame>
    /// Start of inner level L (L ≥ 1) in `nodes` at index L − 1; `levels` of them (< 8), and in
    /// lane 7 `levels` itself and, at bit 8, whether every slot is its entry's number (the view
    /// stays at 128 bytes: a larger one is copied with `memcpy` at each query, ~30 instructions).
    let levelStarts: SIMD8<Int32>
    var levels: Int { @inline(__always) get { Int(levelStarts[7] & 0xFF) } }
    /// Every entry's slot is its own number (every lane of every leaf marked in
    /// ``RegionIndex/LeafFrame/identity``): the query never reads the slots, nor asks for them.
    var slotsAreEntries: Bool { @inline(__always) get { levelStarts[7] & 0x100 != 0 } }
    let entryCount: Int
    let slots: UnsafePointer<UInt32>
    let geometry: UnsafePointer<RegionIndex.EntryGeometry>
    let polygons: Polygons
    /// Where a query enters the tree (TreeGrid.swift); nil: at the root.
    let grid: GridView?

    init(nodes: UnsafePointer<RegionIndex.Node>?, leaves: UnsafePointer<RegionIndex.Leaf>, frames: UnsafePointer<RegionIndex.LeafFrame>,
         levelStarts: SIMD8<Int32>, levels: Int, entryCount: Int, slots: UnsafePointer<UInt32>, slotsAreEntries: Bool = false,
         geometry: UnsafePointer<RegionIndex.EntryGeometry>, polygons: Polygons, grid: GridView?) {
        precondition(levels >= 0 && levels < 8)
        self.nodes = nodes; self.leaves = leaves; self.frames = frames
        var starts = levelStarts
        starts[7] = Int32(levels) | (slotsAreEntries ? 0x100 : 0)
        self.levelStarts = starts
        self.entryCount = entryCount; self.slots = slots; self.geometry = geometry; self.polygons = polygons
        self.grid = grid
    }

    /// See ``RegionIndex/query(_:margin:into:)``; `results` must be empty.
    @inline(__always)
    func query(_ point: Coordinate, margin: Double, into results: inout [Int32]) {
        if margin <= 0 {
            // The point's own box: no trigonometry unless a box holds the point.
            let box = GeoBox(minLatitude: point.latitude, maxLatitude: point.latitude,
                             minLongitude: point.longitude, maxLongitude: point.longitude)
            if search(box, into: &results, exact: point, margin: margin) { RegionIndex.deduplicate(&results) }
            return
        }
        let (a, b) = GeoBox.covering(center: point, angularRadius: margin / Geodesy.earthRadius)
        var multiple = search(a, into: &results, exact: point, margin: margin)
        if let b {
            _ = search(b, into: &results, exact: point, margin: margin)
            multiple = true   // a full-longitude region may match both halves
        }
        if multiple { RegionIndex.deduplicate(&results) }
    }

    /// See ``RegionIndex/candidates(near:angularRadius:into:)``; `results` must be empty.
    func candidates(near center: Coordinate, angularRadius: Double, into results: inout [Int32]) {
        let (a, b) = GeoBox.covering(center: center, angularRadius: max(0, angularRadius))
        var multiple = search(a, into: &results, exact: nil, margin: 0)
        if let b {
            _ = search(b, into: &results, exact: nil, margin: 0)
            multiple = true
        }
        if multiple { RegionIndex.deduplicate(&results) }
    }

    /// Walks the tree for `box`; appends matching slots; returns whether a multi-entry region was hit.
    private func search(_ box: GeoBox, into results: inout [Int32], exact: Coordinate?, margin: Double) -> Bool {
        // (Also refuses NaN bounds, which the sign tests below would take for hits everywhere.)
        guard entryCount > 0, box.minLatitude <= box.maxLatitude, box.minLongitude <= box.maxLongitude else { return false }
        // Rounding to nearest is monotone, so these bounds hold every Float-rounded box that the
        // Double boxes would meet. Broadcast once: a node test is then four vector compares.
        let qMinLat = SIMD16<Float>(repeating: Float(box.minLatitude)), qMaxLat = SIMD16<Float>(repeating: Float(box.maxLatitude))
        let qMinLon = SIMD16<Float>(repeating: Float(box.minLongitude)), qMaxLon = SIMD16<Float>(repeating: Float(box.maxLongitude))
        // (min lat, max lat, min lon, max lon) for the leaves' frames, and the bias that turns
        // min/max scaled values into the leaves' conservative integer bounds (see `leafBounds`).
        let q = SIMD4<Float>(Float(box.minLatitude), Float(box.maxLatitude), Float(box.minLongitude), Float(box.maxLongitude))
        var vector: Vec3? = nil   // the point's unit vector, computed at the first leaf hit
        var multiple = false
        // Explicit stack of (level << 28 | node): depth ≤ 8, ≤ 15 pending siblings per level, and
        // up to `gridMaxCandidates` nodes pushed from the grid; 832 bytes, under the 1 KiB that
        // stays on the stack.
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16 * 9 + RegionIndex.gridMaxCandidates) { stack in
            precondition(levels < 8)
            stack[0] = UInt32(levels) << 28
            var top = 1
            if let grid {
                // A box within one cell enters at the grid's level: its nodes that hold the box
                // (the tests the walk from the root would make at that level), the levels above
                // unread. (Boxes stored as (min lat, min lon, −max lat, −max lon): one compare.)
                let p = grid.parameters
                // (A point's box: one cell computation per axis, not two.)
                let row = p.row(Double(q[0])), column = p.column(Double(q[2]))
                if q[0] == q[1] || row == p.row(Double(q[1])), q[2] == q[3] || column == p.column(Double(q[3])) {
                    let cell = row &* p.columns &+ column
                    let starts = grid.starts
                    let first = Int(starts[cell]), end = Int(starts[cell &+ 1])
                    if end &- first <= RegionIndex.gridMaxCandidates {
                        top = 0
                        let tag = UInt32(truncatingIfNeeded: grid.level) << 28
                        let bound = SIMD4<Float>(q[1], q[3], -q[0], -q[2])
                        let items = starts + (p.rows &* p.columns &+ 1)
                        for k in first ..< end {
                            let i = items[k]
                            if all(grid.box(Int(i)) .<= bound) {
                                stack[top] = tag | i
                                top &+= 1
                                prefetchNode(level: grid.level, index: Int(i))
                            }
                        }
                    }
                }
            }
            while top > 0 {
                top &-= 1
                let level = Int(stack[top] >> 28), index = Int(stack[top] & 0x0FFF_FFFF)
                if level > 0 {
                    let n = nodes.unsafelyUnwrapped + (Int(levelStarts[level &- 1]) &+ index)
                    // a ≤ b exactly when b − a ≥ +0 (IEEE subtraction; ±∞ lanes of empty slots
                    // give −∞): a lane hits when none of the four differences has its sign set.
                    let miss = RegionIndex.signs(qMaxLat - n.pointee.minLat) | RegionIndex.signs(n.pointee.maxLat - qMinLat)
                        | RegionIndex.signs(qMaxLon - n.pointee.minLon) | RegionIndex.signs(n.pointee.maxLon - qMinLon)
                    var bits = RegionIndex.laneBits(SIMD16<Int8>(truncatingIfNeeded: ~miss &>> 31))
                    let child = UInt32(level &- 1) << 28 | UInt32(truncatingIfNeeded: index &* 16)
                    while bits != 0 {
                        prefetchNode(level: level &- 1, index: index &* 16 &+ bits.trailingZeroBitCount)
                        stack[top] = child | UInt32(truncatingIfNeeded: bits.trailingZeroBitCount)
                        bits &= bits &- 1
                        top &+= 1
                    }
                    continue
                }
                let frame = frames[index]
                let b = RegionIndex.leafBounds(q, frame: frame.frame)
                let n = leaves + index
                let hit = (n.pointee.minLat .<= SIMD16<Int16>(repeating: b.hiLat))
                    .& (n.pointee.maxLat .>= SIMD16<Int16>(repeating: b.loLat))
                    .& (n.pointee.minLon .<= SIMD16<Int16>(repeating: b.hiLon))
                    .& (n.pointee.maxLon .>= SIMD16<Int16>(repeating: b.loLon))
                var bits = RegionIndex.laneBits(SIMD16<Int8>(truncatingIfNeeded: hit._storage))
                if bits == 0 { continue }
                if let point = exact, margin == 0 {
                    // Circles decided from their boxes (LeafDecision.swift): the rest, and the
                    // undecided, go to the exact test.
                    var decidable = bits & frame.decidable
                    if decidable != 0 {
                        bits &= ~decidable
                        let f = frame.frame
                        let u2 = Float(((point.latitude - Double(f[0])) * Double(f[2]) - 32768) * 2)
                        let v2 = Float(((point.longitude - Double(f[1])) * Double(f[3]) - 32768) * 2)
                        repeat {
                            let lane = decidable.trailingZeroBitCount
                            decidable &= decidable &- 1
                            switch RegionIndex.decide(n, lane: lane, u2: u2, v2: v2, frame: frame) {
                            case .inside:
                                if frame.identity & (1 << UInt32(lane)) != 0 {
                                    results.append(Int32(truncatingIfNeeded: index &* 16 &+ lane))
                                } else {
                                    let s = slots[index &* 16 &+ lane]
                                    if s & RegionIndex.multiple != 0 { multiple = true }   // (never for a decidable lane)
                                    results.append(Int32(bitPattern: s & ~RegionIndex.multiple))
                                }
                            case .outside: break
                            case .undecided: bits |= 1 << UInt32(lane)
                            }
                        } while decidable != 0
                    }
                    if bits == 0 { continue }
                }
                refine(leaf: index, bits: bits, identity: frame.identity, exact: exact, margin: margin, vector: &vector,
                       multiple: &multiple, into: &results)
            }
        }
        return multiple
    }

    /// Asks for the cache lines that visiting node `index` of `level` (0: a leaf) will read: an
    /// inner node's four, or a leaf's two with its frame and its slots (read on a hit, unless
    /// every slot is its entry's number). Called
    /// when the node is pushed, so the lines of the nodes pushed together are fetched together,
    /// and a leaf's slots arrive with its boxes instead of one miss after them. At 1M circles
    /// on a 2-core EPYC VM: 21–72 ns faster in five alternated pairs, no difference beyond the
    /// noise in quieter minutes (Benchmarks/log/NOTES.md); on an in-order core (the Pi's
    /// Cortex-A53) a miss stalls everything behind it.
    @inline(__always)
    private func prefetchNode(level: Int, index: Int) {
        if level > 0 {
            let n = UnsafeRawPointer(nodes.unsafelyUnwrapped + (Int(levelStarts[level &- 1]) &+ index))
            fencepost_prefetch(n); fencepost_prefetch(n + 64); fencepost_prefetch(n + 128); fencepost_prefetch(n + 192)
        } else {
            let l = UnsafeRawPointer(leaves + index)
            fencepost_prefetch(l); fencepost_prefetch(l + 64)
            fencepost_prefetch(frames + index)
            if !slotsAreEntries { fencepost_prefetch(slots + index &* 16) }
        }
    }

    /// Appends the slots of leaf `leaf`'s entries whose lanes are set in `bits` and that pass the
    /// exact test for `exact` (all of them when `exact` is nil).
    @inline(__always)
    private func refine(leaf: Int, bits: UInt32, identity: UInt32, exact: Coordinate?, margin: Double, vector: inout Vec3?,
                        multiple: inout Bool, into results: inout [Int32]) {
        var bits = bits
        while bits != 0 {
            let lane = bits.trailingZeroBitCount
            let child = leaf &* 16 &+ lane
            bits &= bits &- 1
            guard child < entryCount else { break }
            if let point = exact {
                let p: Vec3
                if let v = vector { p = v } else { p = Vec3(point); vector = p }
                let g = geometry[child]
                let inside = g.radius >= 0
                    ? CircularRegion.isWithin(center: g.center, chord2Radius: g.radius, p, margin: margin)
                    : polygons.isWithin(polygon: Int(-g.radius) - 1, point, margin: margin)
                if !inside { continue }
            }
            if identity & (1 << UInt32(lane)) != 0 {
                results.append(Int32(truncatingIfNeeded: child))
                continue
            }
            let s = slots[child]
            if s & RegionIndex.multiple != 0 { multiple = true }
            results.append(Int32(bitPattern: s & ~RegionIndex.multiple))
        }
    }
}
