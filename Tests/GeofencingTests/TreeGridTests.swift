@testable import Geofencing
import Position
import SeededRandom
import Testing

/// The grid a query enters the tree by (TreeGrid.swift): every node of its level that holds a
/// point is listed in the point's cell, queries through it agree with a brute-force scan at the
/// places most likely to break it (node box corners, cell edges), and a damaged grid in a zone
/// set is refused.
@Suite struct TreeGridTests {
    /// Seeded shapes: the layouts of RegionIndexTests, mixed.
    static func shapes(seed: UInt64, count: Int) -> [RegionShape] {
        var rng = SplitMix64(seed: seed)
        return (0 ..< count).map { _ in randomShape(&rng, layout: Layout.allCases.randomElement(using: &rng)!) }
    }

    /// Points on the entry level's node box corners and edges (as Floats, and one Float step
    /// either side), and on the grid's cell edges.
    static func hardPoints(_ grid: GridView, _ rng: inout SplitMix64, count: Int) -> [Coordinate] {
        var points: [Coordinate] = []
        let p = grid.parameters
        for _ in 0 ..< count {
            let b = grid.bounds(rng.int(0 ... grid.nodes - 1))
            func pick(_ lo: Float, _ hi: Float) -> Double {
                let x = rng.chance(0.5) ? lo : hi
                switch rng.int(0 ... 3) {
                case 0: return Double(x.nextDown)
                case 1: return Double(x.nextUp)
                case 2: return Double(x)
                default: return rng.uniform(Double(lo), Double(max(lo, hi)))
                }
            }
            points.append(Coordinate(latitude: max(-90, min(90, pick(b[0], b[1]))), longitude: max(-180, min(180, pick(b[2], b[3])))))
            // A cell edge: lo + k / scale, exactly or nearly.
            if p.scale[0] > 0, p.scale[1] > 0 {
                let lat = p.lo[0] + Double(rng.int(0 ... p.rows)) / p.scale[0]
                let lon = p.lo[1] + Double(rng.int(0 ... p.columns)) / p.scale[1]
                points.append(Coordinate(latitude: max(-90, min(90, lat.nextUp)), longitude: max(-180, min(180, lon))))
                points.append(Coordinate(latitude: max(-90, min(90, lat)), longitude: max(-180, min(180, lon.nextDown))))
            }
        }
        return points
    }

    @Test(arguments: [(1, 300), (2, 2_000), (3, 20_000), (4, 70_000)] as [(UInt64, Int)])
    func everyNodeHoldingAPointIsInItsCell(seed: UInt64, count: Int) throws {
        let index = RegionIndex(Self.shapes(seed: seed, count: count).enumerated().map { (slot: Int32($0.offset), shape: $0.element) })
        let grid = index.parts.grid
        #expect(!grid.isEmpty, "seed \(seed): \(index.depth) levels should have a grid")
        var rng = SplitMix64(seed: seed &+ 500)
        grid.withUnsafeBufferPointer { w in
            let g = GridView(w.baseAddress!)
            var points = Self.hardPoints(g, &rng, count: 2_000)
            for _ in 0 ..< 2_000 { points.append(rng.pointOnSphere()) }
            var missing = 0
            for p in points {
                let lat = Float(p.latitude), lon = Float(p.longitude)
                let cell = g.parameters.row(Double(lat)) * g.parameters.columns + g.parameters.column(Double(lon))
                let listed = Set((Int(g.starts[cell]) ..< Int(g.starts[cell + 1])).map { g.items[$0] })
                for i in 0 ..< g.nodes {
                    let b = g.bounds(i)
                    if b[0] <= lat, lat <= b[1], b[2] <= lon, lon <= b[3], !listed.contains(UInt32(i)) {
                        missing += 1
                        if missing <= 3 { Issue.record("seed \(seed): node \(i) holds \(p) but cell \(cell) does not list it") }
                    }
                }
            }
            #expect(missing == 0, "seed \(seed)")
        }
    }

    @Test(arguments: [11, 12, 13] as [UInt64])
    func queriesAtNodeCornersAndCellEdgesAgreeWithBruteForce(seed: UInt64) throws {
        let shapes = Self.shapes(seed: seed, count: 6_000)
        let index = RegionIndex(shapes.enumerated().map { (slot: Int32($0.offset), shape: $0.element) })
        var rng = SplitMix64(seed: seed &+ 900)
        let points = index.parts.grid.withUnsafeBufferPointer { Self.hardPoints(GridView($0.baseAddress!), &rng, count: 1_500) }
        var got: [Int32] = [], mismatches = 0, hits = 0
        for (q, p) in points.enumerated() {
            let margin = q % 4 == 0 ? rng.uniform(0, 300) : 0
            index.query(p, margin: margin, into: &got)
            let expected = shapes.indices.filter { shapes[$0].isWithin(p, margin: margin) }.map { Int32($0) }
            hits += expected.count
            if got.sorted() != expected {
                mismatches += 1
                if mismatches <= 3 { Issue.record("seed \(seed) query \(q) at \(p) margin \(margin): \(got.sorted()) brute force \(expected)") }
            }
        }
        #expect(mismatches == 0, "seed \(seed)")
        #expect(hits > 0, "seed \(seed): the points should hit some regions")
    }

    /// The grid in a zone set: the mapped set's queries are the index's, and a grid damaged
    /// under a valid checksum is refused.
    @Test func zoneSetGridIsCheckedWhenOpened() throws {
        let zones = ZoneSetTests.zones(seed: 21, circles: 1_200, polygons: 40)
        let bytes = ZoneSetTests.build(zones)
        let intact = ZoneSetTests.Aligned(bytes)
        let set = try ZoneSet(intact.raw)
        func u64(_ at: Int) -> Int { Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt64.self) }) }
        let grid = u64(128 + 16 * ZoneSetFormat.Section.grid.rawValue)
        let words = u64(136 + 16 * ZoneSetFormat.Section.grid.rawValue) / 4
        #expect(words > RegionIndex.gridHeaderWords, "the set should have a grid")
        func word(_ k: Int) -> UInt32 { bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: grid + 4 * k, as: UInt32.self) } }
        let rows = Int(word(0)), columns = Int(word(1)), m = Int(word(3))
        let starts = grid + 4 * (RegionIndex.gridHeaderWords + 4 * m), items = starts + 4 * (rows * columns + 1)
        func resealed(_ change: (inout [UInt8]) -> Void) -> [UInt8] { ZoneSetTests.resealed(bytes, change) }
        func put(_ v: UInt32, _ at: Int, _ b: inout [UInt8]) { withUnsafeBytes(of: v.littleEndian) { for k in 0 ..< 4 { b[at + k] = $0[k] } } }
        let cases: [(String, (inout [UInt8]) -> Void)] = [
            ("no rows", { put(0, grid, &$0) }),
            ("more columns than words", { put(UInt32(columns + 1), grid + 4, &$0) }),
            ("level of the root", { put(99, grid + 8, &$0) }),
            ("node count of another level", { put(UInt32(m + 1), grid + 12, &$0) }),
            ("scale not a number", { b in for k in 0 ..< 4 { b[grid + 48 + k] = 0xFF; b[grid + 52 + k] = 0xFF } }),
            ("starts decreasing", { put(UInt32.max, starts + 4, &$0) }),
            ("item beyond the level", { put(UInt32(m), items, &$0) }),
            ("grid words in the header", { put(UInt32(words - 1), 108, &$0) }),
        ]
        for (what, change) in cases {
            let file = ZoneSetTests.Aligned(resealed(change))
            #expect(throws: ZoneSetError.self, "\(what)") { _ = try ZoneSet(file.raw) }
        }
        // Queries through the mapped grid are the index's.
        let index = RegionIndex(zones.enumerated().map { (slot: Int32($0.offset), shape: $0.element.0.shape) })
        // The set numbers its zones in tree order: its answers are compared by place in `zones`.
        var added = [Int32](repeating: -1, count: set.count)
        for (k, z) in zones.enumerated() { if let n = set.number(of: z.0.identifier) { added[n] = Int32(k) } }
        var rng = SplitMix64(seed: 2_100)
        var a: [Int32] = [], b: [Int32] = []
        for q in 0 ..< 2_000 {
            let c = zones[rng.int(0 ... zones.count - 1)].0.shape.center
            let p = destination(c, bearing: rng.uniform(0, 360), distance: rng.uniform(0, 6_000))
            set.query(p, into: &a)
            index.query(p, into: &b)
            #expect(a.map { added[Int($0)] }.sorted() == b.sorted(), "query \(q) at \(p)")
        }
    }
}
