// A grid over the packed R-tree's extent, so that a query enters the tree low instead of at its
// root: the cell that holds the query's box lists the nodes of one inner level ("the entry
// level", the lowest with at most 4,096 nodes) whose boxes meet that cell. The query tests those
// nodes' boxes (a 16-byte row each, in one small table) and pushes the ones that hold its box, as
// the walk from the root would have: the levels above are never read.
//
// Why: at 1M circles the tree has 4 inner levels (3,907 / 245 / 16 / 1 nodes). A point query
// tested the root, ~1.4 level-3 and ~1.4 level-2 nodes (about 75 instructions each) only to find
// the ~1.4 level-1 nodes that hold the point; the grid finds them from ~2 candidate boxes.
//
// Soundness. A node's box [a, b] (per axis, Float, as its parent's lane holds it) is listed in
// every cell from cell(a) to cell(b); cell(x) = ⌊(x − lo) · scale⌋ clamped to the grid is
// monotone in x (Double subtraction, multiplication and truncation of a non-negative value are
// monotone), and it is computed the same way at build and at query. A query box [qa, qb] (its
// Float bounds, as the node tests use them) that lies in one cell c (cell(qa) = cell(qb) = c)
// meets a node's box only when a ≤ qb and b ≥ qa, hence cell(a) ≤ c ≤ cell(b): the node is in
// c's list. A query box over several cells, or a cell with more than `maxCandidates` nodes,
// walks from the root as before. The results are the root walk's, bit for bit.
//
// Tried and dropped (Benchmarks/log/NOTES.md): the entry level's nodes held
// here as 16-bit boxes in each node's frame, like the leaves (2 cache lines a node instead of 4;
// 500 KB at 1M, inside the 1 MB L2): ~100 instructions a query more (the frame arithmetic per
// node) and no faster, measured side by side.
//
// Layout (u32 words, little-endian, the same in memory and in the zone-set file):
//   0 rows (latitude cells)   1 columns (longitude cells)   2 entry level L   3 nodes m of level L
//   4 items   5 nodes of level L − 1 (the leaves for L = 1; checked)   6, 7 reserved (0)
//   8 … 15     lo latitude, lo longitude, scale latitude, scale longitude (f64, low word first)
//   16 …       m boxes: min lat, min lon, −max lat, −max lon (f32), the level's nodes' unions
//              (negated maxima: a box holds a query box when all four lanes are ≤ the query's
//              (max lat, max lon, −min lat, −min lon), one vector compare)
//   then       rows × columns + 1 starts into the items (row-major cells)
//   then       the items: node numbers within level L
// An empty grid (no words) means: always walk from the root (a tree of fewer than 3 levels).
//
// Sizing at 1M circles: m = 3,907, 125 × 125 cells, ~33,000 items: ~0.3 MB (0.2 % of the set).

extension RegionIndex {
    /// The lowest inner level with at most this many nodes is the grid's entry level.
    static let gridLevelNodes = 4_096
    /// Cells per node of the entry level (rows × columns ≈ this × m).
    static let gridCellsPerNode = 4
    /// A cell listing more nodes than this walks from the root (the search's stack holds them).
    static let gridMaxCandidates = 64
    static let gridHeaderWords = 16

    /// The grid over a packed tree's nodes (layout at the top of this file); empty when the tree
    /// has no inner level below its root.
    /// - Complexity: O(nodes + items); ~0.3 MB at 1M entries.
    static func grid(nodes: [Node], levelStart: [Int], leafCount: Int) -> [UInt32] {
        let levels = levelStart.count
        func count(_ level: Int) -> Int { levelNodes(level, levelStart: levelStart, nodeCount: nodes.count, leafCount: leafCount) }
        guard levels >= 2, let level = (1 ..< levels).first(where: { count($0) <= gridLevelNodes }) else { return [] }
        let m = count(level)
        // The level's boxes, from the lanes of the level above (the nodes' unions).
        var boxes = [SIMD4<Float>](repeating: .zero, count: m)
        for i in 0 ..< m {
            let parent = nodes[levelStart[level] + (i >> 4)], lane = i & 15
            boxes[i] = SIMD4(parent.minLat[lane], parent.maxLat[lane], parent.minLon[lane], parent.maxLon[lane])
        }
        var lo = SIMD2<Double>(repeating: .infinity), hi = SIMD2<Double>(repeating: -.infinity)
        for b in boxes {
            lo = pointwiseMin(lo, SIMD2(Double(b[0]), Double(b[2])))
            hi = pointwiseMax(hi, SIMD2(Double(b[1]), Double(b[3])))
        }
        let side = Swift.min(256, Swift.max(1, Int((Double(gridCellsPerNode * m)).squareRoot().rounded(.up))))
        var scale = SIMD2<Double>(repeating: 0)
        for k in 0 ..< 2 where hi[k] > lo[k] {
            let s = Double(side) / (hi[k] - lo[k])
            if s.isFinite { scale[k] = s }
        }
        let grid = GridParameters(rows: side, columns: side, lo: lo, scale: scale)
        // Count, then place (CSR).
        let cells = side * side
        var starts = [UInt32](repeating: 0, count: cells + 1)
        func cellRange(_ b: SIMD4<Float>) -> (Range<Int>, Range<Int>) {
            (grid.row(Double(b[0])) ..< grid.row(Double(b[1])) + 1, grid.column(Double(b[2])) ..< grid.column(Double(b[3])) + 1)
        }
        for b in boxes {
            let (rs, cs) = cellRange(b)
            for r in rs { for c in cs { starts[r * side + c + 1] += 1 } }
        }
        for c in 0 ..< cells { starts[c + 1] += starts[c] }
        var fill = starts
        var items = [UInt32](repeating: 0, count: Int(starts[cells]))
        for (i, b) in boxes.enumerated() {
            let (rs, cs) = cellRange(b)
            for r in rs { for c in cs { items[Int(fill[r * side + c])] = UInt32(i); fill[r * side + c] += 1 } }
        }
        var words = [UInt32](repeating: 0, count: gridHeaderWords)
        words[0] = UInt32(side); words[1] = UInt32(side); words[2] = UInt32(level); words[3] = UInt32(m)
        words[4] = UInt32(items.count)
        words[5] = UInt32(level > 1 ? count(level - 1) : leafCount)
        for (k, d) in [lo[0], lo[1], scale[0], scale[1]].enumerated() {
            words[8 + 2 * k] = UInt32(truncatingIfNeeded: d.bitPattern)
            words[9 + 2 * k] = UInt32(truncatingIfNeeded: d.bitPattern >> 32)
        }
        words.reserveCapacity(gridHeaderWords + 4 * m + cells + 1 + items.count)
        for b in boxes { for x in [b[0], b[2], -b[1], -b[3]] { words.append(x.bitPattern) } }
        words.append(contentsOf: starts)
        words.append(contentsOf: items)
        #if DEBUG
        checkGrid(words, nodes: nodes, levelStart: levelStart, leafCount: leafCount)
        #endif
        return words
    }

    /// Nodes of inner level `level` (1-based: nodes[levelStart[L − 1] ..< levelStart[L]], the
    /// root level ending at `nodeCount`; level 0: the leaves); −1 for a level the tree does not have.
    static func levelNodes(_ level: Int, levelStart: [Int], nodeCount: Int, leafCount: Int) -> Int {
        if level == 0 { return leafCount }
        guard level >= 1, level <= levelStart.count else { return -1 }
        return (level < levelStart.count ? levelStart[level] : nodeCount) - levelStart[level - 1]
    }

    /// The grid's cell arithmetic (shared by the build and the query: the same function both ways).
    struct GridParameters {
        var rows: Int, columns: Int
        /// (latitude, longitude).
        var lo: SIMD2<Double>, scale: SIMD2<Double>

        /// ⌊(x − lo) · scale⌋ clamped to 0 ..< n: monotone in x (NaN goes to 0).
        @inline(__always)
        static func cell(_ x: Double, lo: Double, scale: Double, count n: Int) -> Int {
            var v = (x - lo) * scale
            if !(v >= 0) { v = 0 }
            let top = Double(n &- 1)
            if v > top { v = top }
            return Int(v)   // truncation of a value ≥ 0: ⌊v⌋
        }
        @inline(__always) func row(_ latitude: Double) -> Int { Self.cell(latitude, lo: lo[0], scale: scale[0], count: rows) }
        @inline(__always) func column(_ longitude: Double) -> Int { Self.cell(longitude, lo: lo[1], scale: scale[1], count: columns) }
    }

    #if DEBUG
    /// Debug builds: every node of the entry level is listed in every cell its box meets, and the
    /// structure is consistent (``GridView/validate(_:count:levels:levelNodes:)``).
    static func checkGrid(_ words: [UInt32], nodes: [Node], levelStart: [Int], leafCount: Int) {
        words.withUnsafeBufferPointer { w in
            let levels = levelStart.count
            let m = levelNodes(Int(w[2]), levelStart: levelStart, nodeCount: nodes.count, leafCount: leafCount)
            precondition(GridView.validate(w.baseAddress!, count: w.count, levels: levels) {
                levelNodes($0, levelStart: levelStart, nodeCount: nodes.count, leafCount: leafCount)
            }, "grid structure")
            let g = GridView(w.baseAddress!)
            precondition(g.nodes == m)
            // Each box is its node's union.
            let first = levelStart[g.level - 1]
            for i in 0 ..< m {
                let u = nodes[first + i].union
                precondition(g.bounds(i) == SIMD4(u.0, u.1, u.2, u.3), "grid: node \(i) box")
            }
            for i in 0 ..< m {
                let b = g.bounds(i)
                for r in g.parameters.row(Double(b[0])) ... g.parameters.row(Double(b[1])) {
                    for c in g.parameters.column(Double(b[2])) ... g.parameters.column(Double(b[3])) {
                        let cell = r * g.parameters.columns + c
                        precondition((Int(g.starts[cell]) ..< Int(g.starts[cell + 1])).contains { g.items[$0] == UInt32(i) },
                                     "grid: node \(i) missing from cell \(cell)")
                    }
                }
            }
        }
    }
    #endif
}

/// A grid (layout in TreeGrid.swift) seen through a pointer that lives as long as the view; the
/// caller has checked it (``validate(_:count:levels:levelNodes:)``) or built it.
///
/// One pointer, every field read from the grid's header when asked for (a hot cache line): a
/// view with the fields copied out made `IndexView` large enough that each query copied it with
/// `memcpy` (~58 instructions a query).
struct GridView {
    let words: UnsafePointer<UInt32>

    init(_ w: UnsafePointer<UInt32>) { words = w }

    @inline(__always) private func word(_ k: Int) -> Int { Int(UInt32(littleEndian: words[k])) }
    @inline(__always) private func f64(_ k: Int) -> Double {
        Double(bitPattern: UInt64(UInt32(littleEndian: words[k])) | UInt64(UInt32(littleEndian: words[k + 1])) << 32)
    }

    var parameters: RegionIndex.GridParameters {
        @inline(__always) get {
            RegionIndex.GridParameters(rows: word(0), columns: word(1), lo: SIMD2(f64(8), f64(10)), scale: SIMD2(f64(12), f64(14)))
        }
    }
    /// The entry level L.
    var level: Int { @inline(__always) get { word(2) } }
    /// Nodes of level L.
    var nodes: Int { @inline(__always) get { word(3) } }
    /// Nodes of level L − 1 (leaves for L = 1).
    var children: Int { @inline(__always) get { word(5) } }
    /// The boxes.
    var table: UnsafePointer<UInt32> { @inline(__always) get { words + RegionIndex.gridHeaderWords } }
    var starts: UnsafePointer<UInt32> { @inline(__always) get { table + 4 &* nodes } }
    var items: UnsafePointer<UInt32> { @inline(__always) get { starts + (word(0) &* word(1) &+ 1) } }

    /// Box of node `i` of the entry level as stored: (min lat, min lon, −max lat, −max lon).
    @inline(__always)
    func box(_ i: Int) -> SIMD4<Float> {
        UnsafeRawPointer(table + 4 &* i).loadUnaligned(as: SIMD4<Float>.self)
    }

    /// Box of node `i` of the entry level: (min lat, max lat, min lon, max lon).
    func bounds(_ i: Int) -> SIMD4<Float> {
        let s = box(i)
        return SIMD4(s[0], -s[2], s[1], -s[3])
    }

    /// Whether `count` words at `w` are a usable grid for a tree of `levels` inner levels whose
    /// level L has `levelNodes(L)` nodes (level 0: the leaves; −1 for no such level): every count
    /// and index in range,
    /// the cell arithmetic finite. Queries through a valid grid read only inside it and push
    /// only nodes that exist; whether its lists are complete is the builder's (and the
    /// checksum's) business.
    /// - Complexity: O(count).
    static func validate(_ w: UnsafePointer<UInt32>, count: Int, levels: Int, levelNodes: (Int) -> Int) -> Bool {
        let h = RegionIndex.gridHeaderWords
        guard count >= h else { return false }
        let rows = Int(w[0]), columns = Int(w[1]), level = Int(w[2]), m = Int(w[3]), itemCount = Int(w[4])
        let children = Int(w[5])
        guard rows >= 1, rows <= 256, columns >= 1, columns <= 256, level >= 1, level < levels,
              m >= 1, m <= RegionIndex.gridLevelNodes, levelNodes(level) == m, levelNodes(level - 1) == children,
              children > 16 * (m - 1), children <= 16 * m else { return false }
        let cells = rows * columns
        guard count == h + 4 * m + cells + 1 + itemCount else { return false }
        let g = GridView(w)
        for k in 0 ..< 2 {
            guard g.parameters.lo[k].isFinite, g.parameters.scale[k].isFinite, g.parameters.scale[k] >= 0 else { return false }
        }
        var previous: UInt32 = 0
        for c in 0 ... cells {
            let s = g.starts[c]
            guard s >= previous, Int(s) <= itemCount else { return false }
            previous = s
        }
        guard Int(previous) == itemCount else { return false }
        for i in 0 ..< itemCount where Int(g.items[i]) >= m { return false }
        return true
    }
}
