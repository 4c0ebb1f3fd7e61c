// Building a zone-set file: zones are added one at a time (the caller streams them from its
// source) into flat columns, and written once at the end with the packed R-tree over them. See
// ZoneSetFormat.swift for the layout.
//
// Memory at 1M circles (the board's unit allows 256 MB): per zone an 80-byte row, its strings
// (~10 B) and a 16-byte id key; per index entry only its zone (4 B) — ~110 MB, in `BuildBuffer`s
// that grow by `realloc` (never two copies resident). An entry's box and exact geometry are not
// kept: they are computed again from the zone's row whenever they are needed (`EntrySource`,
// the same arithmetic as the in-memory index, so the same bits), which costs a few passes of
// trigonometry (~0.1 s each at 1M) and saves 64 B per entry. `finish` works in place: replaced
// zones are found by sorting the id keys (no hash table of ids), the columns are compacted where
// they lie, the Hilbert sort needs 32 B per entry while it runs, and the tree's leaves and nodes
// are packed one leaf at a time from the sorted order (~9 B per entry). The image holds no second
// copy of anything; it is written in chunks.
//
// What this avoids, together a 592 MB peak for 1M circles (`fencepost zones build`): rows copied
// once more to drop the replaced ones, a dictionary of ids, `RegionIndex`'s own bulk load (~200 B
// per entry), the GeoJSON hashed in a second pass that makes all of it resident, the written file
// read back whole.
import Position

/// What a zone's notification says.
public struct ZoneContent: Hashable, Sendable {
    public var title: String
    /// A buzzer pattern name.
    public var sound: String
    /// Interruption level code: 0 passive, 1 active, 2 time-sensitive, 3 critical.
    public var level: UInt8
    /// Whether its entries and exits are reported beyond the board (the fleet link's transitions).
    public var report: Bool

    public init(title: String, sound: String = "default", level: UInt8 = 1, report: Bool = false) {
        self.title = title; self.sound = sound; self.level = level; self.report = report
    }
}

/// Where a zone-set image is written (a file, a byte array, a checksum).
public protocol ZoneSetSink {
    associatedtype Failure: Error
    /// Appends `bytes`.
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws(Failure)
}

/// A sink that collects the bytes in memory (tests, small sets).
public struct ZoneSetBytes: ZoneSetSink {
    public var bytes: [UInt8] = []
    public init() {}
    public mutating func write(_ b: UnsafeRawBufferPointer) { bytes.append(contentsOf: b) }
}

/// Collects zones, then writes a zone set.
public struct ZoneSetBuilder {
    /// A zone as its record in the file (80 bytes; `ZoneSetFormat.ZoneField`).
    struct Row {
        var kind: UInt8          // 0 circle, 1 polygon
        var flags: UInt8
        var level: UInt8
        var polygon: UInt32      // into `polygonList` while building
        var id: (UInt32, UInt32), title: (UInt32, UInt32), sound: (UInt32, UInt32)
        var latitude: Double, longitude: Double, radius: Double
        var dwell: Double, cooldown: Double
        var fingerprint: UInt64
    }

    /// A zone's id hash and row (after `finish`: its zone number); sorted, the lookup section.
    struct IDKey {
        var hash: UInt64
        var row: UInt32
    }

    var rows = BuildBuffer<Row>()
    var strings = BuildBuffer<UInt8>()
    var ids = BuildBuffer<IDKey>()
    /// Per index entry (one per zone, two for a cap across the antimeridian), in the order added:
    /// its row (after `finish`: zone number), with `RegionIndex.multiple` for two entries.
    var entryZones = BuildBuffer<UInt32>()
    var polygonList: [PolygonRegion] = []
    var sounds: [String: (UInt32, UInt32)] = [:]

    public init() {}

    /// Zones added so far; a zone given again under the same id counts each time until
    /// ``finish(sourceHash:)`` replaces it.
    public var added: Int { rows.count }

    /// Adds `region` with its notification content. The same identifier again replaces the earlier
    /// zone (which gives up its place: the later definition and position count, as in a GeoJSON
    /// file); replacements are resolved by ``finish(sourceHash:)``.
    /// - Complexity: amortised O(1) (O(vertices) for a polygon).
    public mutating func add(_ region: Region, content: ZoneContent) {
        precondition(rows.count < Int(Int32.max) >> 1, "a zone set holds fewer than 2³⁰ zones")
        let number = UInt32(rows.count)
        let id = intern(region.identifier)
        ids.append(IDKey(hash: ZoneSetFormat.idHash(region.identifier.utf8), row: number))
        let title = content.title == region.identifier ? id : intern(content.title)
        let sound: (UInt32, UInt32)
        if let s = sounds[content.sound] { sound = s } else { sound = intern(content.sound); sounds[content.sound] = sound }
        var flags: UInt8 = 0
        if region.notifyOnEntry { flags |= ZoneSetFormat.ZoneFlags.notifyOnEntry }
        if region.notifyOnExit { flags |= ZoneSetFormat.ZoneFlags.notifyOnExit }
        if region.dwell != nil { flags |= ZoneSetFormat.ZoneFlags.hasDwell }
        if region.repeats { flags |= ZoneSetFormat.ZoneFlags.repeats }
        if content.report { flags |= ZoneSetFormat.ZoneFlags.report }
        var row = Row(kind: 0, flags: flags, level: content.level, polygon: .max, id: id, title: title, sound: sound,
                      latitude: 0, longitude: 0, radius: 0, dwell: region.dwell ?? 0, cooldown: region.cooldown,
                      fingerprint: ZoneSet.fingerprint(region.shape))
        switch region.shape {
        case .circle(let c):
            row.latitude = c.center.latitude; row.longitude = c.center.longitude; row.radius = c.radius
        case .polygon(let p):
            row.kind = 1
            row.polygon = UInt32(polygonList.count)
            polygonList.append(p)
            let c = p.center
            row.latitude = c.latitude; row.longitude = c.longitude
        }
        rows.append(row)
        if region.shape.boundingBoxes.1 == nil {
            entryZones.append(number)
        } else {
            entryZones.append(number | RegionIndex.multiple)
            entryZones.append(number | RegionIndex.multiple)
        }
    }

    private mutating func intern(_ s: String) -> (UInt32, UInt32) {
        let start = UInt32(strings.count)
        var s = s
        s.withUTF8 { strings.append(contentsOf: $0) }
        return (start, UInt32(strings.count) - start)
    }

    /// Whether rows `a` and `b` have the same id.
    private func sameID(_ a: UInt32, _ b: UInt32) -> Bool {
        let x = rows[Int(a)].id, y = rows[Int(b)].id
        guard x.1 == y.1 else { return false }
        let s = strings.elements
        for i in 0 ..< Int(x.1) where s[Int(x.0) + i] != s[Int(y.0) + i] { return false }
        return true
    }

    /// The finished set, ready to write; `sourceHash` names what it was built from.
    /// - Complexity: O(n log n) for the id sort plus O(n) for the rest; ~1 s at 1M circles.
    ///   Memory: the columns, compacted in place, plus 24 B per entry during the Hilbert sort.
    public consuming func finish(sourceHash: UInt64) -> ZoneSetImage {
        sounds = [:]
        let n = rows.count
        // Replaced zones: in each run of equal id hashes (sorted by row), a row is replaced when a
        // later row of the run has the same id.
        var sorted = ids.elements
        sorted.sort { $0.hash != $1.hash ? $0.hash < $1.hash : $0.row < $1.row }
        let replaced: UInt32 = .max
        let number = BuildBuffer<UInt32>(repeating: 0, count: n)
        var i = 0
        while i < n {
            var j = i + 1
            while j < n, ids[j].hash == ids[i].hash { j += 1 }
            if j - i > 1 {
                var kept: [UInt32] = []   // rows of distinct ids, later ones first
                for k in stride(from: j - 1, through: i, by: -1) {
                    let row = ids[k].row
                    if kept.contains(where: { sameID($0, row) }) { number[Int(row)] = replaced } else { kept.append(row) }
                }
            }
            i = j
        }
        var live: UInt32 = 0
        for r in 0 ..< n where number[r] != replaced { number[r] = live; live += 1 }
        // Rows and polygons, compacted in place (polygons in their zones' order here; the zones'
        // renumbering in tree order below leaves the polygons' numbers as they are).
        var polygons: [PolygonRegion] = []
        var w = 0
        for r in 0 ..< n where number[r] != replaced {
            var row = rows[r]
            if row.kind == 1 {
                polygons.append(polygonList[Int(row.polygon)])
                row.polygon = UInt32(polygons.count - 1)
            }
            rows[w] = row; w += 1
        }
        rows.truncate(to: w)
        polygonList = []
        // The lookup: sorted by hash, then row, hence by zone number.
        w = 0
        for k in 0 ..< n where number[Int(ids[k].row)] != replaced {
            ids[w] = IDKey(hash: ids[k].hash, row: number[Int(ids[k].row)]); w += 1
        }
        ids.truncate(to: w)
        // Entries of the zones that stay, renumbered.
        w = 0
        for e in 0 ..< entryZones.count {
            let tagged = entryZones[e]
            let zone = number[Int(tagged & ~RegionIndex.multiple)]
            guard zone != replaced else { continue }
            entryZones[w] = zone | (tagged & RegionIndex.multiple); w += 1
        }
        entryZones.truncate(to: w)
        number.removeAll()
        let entries = EntrySource(zones: entryZones, rows: rows, polygons: polygons)
        var bounds = (Double.infinity, -Double.infinity, Double.infinity, -Double.infinity)
        for e in 0 ..< w {
            let box = entries.box(e)
            bounds = (min(bounds.0, box.minLatitude), max(bounds.1, box.maxLatitude),
                      min(bounds.2, box.minLongitude), max(bounds.3, box.maxLongitude))
        }
        // The packed tree over the entries in Hilbert order.
        let order = RegionIndex.hilbertOrder(count: w) { entries.box($0) }
        renumberInTreeOrder(order, zones: Int(live))
        var tree = RegionIndex.packTree(entryCount: w, box: { entries.box(Int(order[$0])) }, circle: { entries.circle(Int(order[$0])) })
        RegionIndex.markIdentityLanes(&tree.frames, entryCount: w) { entries.zones[Int(order[$0])] }
        let image = ZoneSetImage(tree: tree, order: order, entries: entries, strings: strings, lookup: ids,
                                 bounds: bounds, sourceHash: sourceHash)
        image._checkInvariants()
        return image
    }
}

extension ZoneSetBuilder {
    /// Numbers the zones in the order of their first entries in the tree (`order`), so that the
    /// slot of entry k is k for every zone with one entry before the first zone with two: a query
    /// then answers from the leaf's frame without reading the slot (``RegionIndex/LeafFrame/identity``;
    /// 20–50 ns of a ~290 ns mapped query at 1M, Benchmarks/README.md). Rows are permuted in place,
    /// entries and id keys renumbered, the keys sorted again; polygons keep their numbers.
    /// - Complexity: O(n) plus the id keys' sort; 4 B per zone while it runs.
    mutating func renumberInTreeOrder(_ order: [UInt32], zones count: Int) {
        guard count > 0 else { return }
        let unset = UInt32.max
        let number = BuildBuffer<UInt32>(repeating: unset, count: count)
        var next: UInt32 = 0
        for k in 0 ..< order.count {
            let z = Int(entryZones[Int(order[k])] & ~RegionIndex.multiple)
            if number[z] == unset { number[z] = next; next += 1 }
        }
        precondition(Int(next) == count, "a zone without an entry")
        for e in 0 ..< entryZones.count {
            let tagged = entryZones[e]
            entryZones[e] = number[Int(tagged & ~RegionIndex.multiple)] | (tagged & RegionIndex.multiple)
        }
        for k in 0 ..< ids.count { ids[k].row = number[Int(ids[k].row)] }
        var keys = ids.elements
        keys.sort { $0.hash != $1.hash ? $0.hash < $1.hash : $0.row < $1.row }
        // Row z goes to place number[z]: follow each cycle, swapping (number ends as the identity).
        for start in 0 ..< count {
            while number[start] != UInt32(start) {
                let to = Int(number[start])
                let row = rows[start]; rows[start] = rows[to]; rows[to] = row
                number[start] = number[to]; number[to] = UInt32(to)
            }
        }
    }
}

/// The index entries of a set being built, each computed from its zone's row when asked for:
/// the box and exact geometry `RegionIndex` would hold for that zone's shape, bit for bit.
struct EntrySource {
    /// Per entry: zone number, with `RegionIndex.multiple` when the zone has two entries (they
    /// are adjacent: the first gets the cap's first box, the second the other).
    let zones: BuildBuffer<UInt32>
    let rows: BuildBuffer<ZoneSetBuilder.Row>
    let polygons: [PolygonRegion]

    var count: Int { zones.count }

    /// Whether entry `e` is the second of its zone's two.
    @inline(__always)
    private func isSecond(_ e: Int) -> Bool {
        let z = zones[e]
        return z & RegionIndex.multiple != 0 && e > 0 && zones[e - 1] == z
    }

    /// Entry `e`'s box (a circle's cap's, a polygon's own, as `RegionIndex.init` covers them).
    /// - Complexity: O(1): a few trigonometric calls.
    func box(_ e: Int) -> GeoBox {
        let row = rows[Int(zones[e] & ~RegionIndex.multiple)]
        let (a, b) = row.kind == 0
            ? GeoBox.covering(center: Coordinate(latitude: row.latitude, longitude: row.longitude), angularRadius: row.radius / Geodesy.earthRadius)
            : polygons[Int(row.polygon)].boundingBoxes
        return isSecond(e) ? b! : a
    }

    /// Entry `e`'s circle as the leaf decision needs it, when the entry is a circle's only entry.
    func circle(_ e: Int) -> RegionIndex.DecodableCircle? {
        guard zones[e] & RegionIndex.multiple == 0 else { return nil }
        let row = rows[Int(zones[e])]
        guard row.kind == 0 else { return nil }
        return RegionIndex.DecodableCircle(latitude: row.latitude, longitude: row.longitude, angle: row.radius / Geodesy.earthRadius)
    }

    /// Entry `e`'s exact geometry: a circle's centre vector and squared chord, or the plane
    /// centre and number of a polygon.
    func geometry(_ e: Int) -> RegionIndex.EntryGeometry {
        let row = rows[Int(zones[e] & ~RegionIndex.multiple)]
        if row.kind == 0 {
            // The row's values were a valid circle when it was added.
            let c = try! CircularRegion(center: Coordinate(latitude: row.latitude, longitude: row.longitude), radius: row.radius)
            return RegionIndex.EntryGeometry(center: c.centerVector, radius: c.chord2Radius)
        }
        return RegionIndex.EntryGeometry(center: Vec3(polygons[Int(row.polygon)].center), radius: -Double(row.polygon) - 1)
    }
}

/// A built zone set, not yet written: the builder's columns, compacted, and the packed tree.
public struct ZoneSetImage {
    let tree: RegionIndex.PackedTree
    /// Entry k of the file is entry `order[k]` of `entries`.
    let order: [UInt32]
    let entries: EntrySource
    var polygons: [PolygonRegion] { entries.polygons }
    var rows: BuildBuffer<ZoneSetBuilder.Row> { entries.rows }
    let strings: BuildBuffer<UInt8>
    let lookup: BuildBuffer<ZoneSetBuilder.IDKey>
    let bounds: (Double, Double, Double, Double)
    public let sourceHash: UInt64

    /// Number of zones.
    public var zoneCount: Int { rows.count }

    /// Debug builds: the lookup is sorted by (hash, zone) and names every zone once; every entry
    /// names a zone, a zone's two entries are adjacent; polygon numbers are in range; the order
    /// is a permutation of the entries. Compiles to nothing in release.
    func _checkInvariants() {
        #if DEBUG
        precondition(lookup.count == rows.count, "lookup \(lookup.count) for \(rows.count) zones")
        var seen = [Bool](repeating: false, count: rows.count)
        for k in 0 ..< lookup.count {
            let key = lookup[k]
            precondition(Int(key.row) < rows.count && !seen[Int(key.row)], "lookup \(k) names zone \(key.row)")
            seen[Int(key.row)] = true
            if k > 0 { precondition((lookup[k - 1].hash, lookup[k - 1].row) < (key.hash, key.row), "lookup unsorted at \(k)") }
        }
        var e = 0
        while e < entries.count {
            let z = entries.zones[e]
            precondition(Int(z & ~RegionIndex.multiple) < rows.count, "entry \(e) names zone \(z)")
            if z & RegionIndex.multiple != 0 {
                precondition(e + 1 < entries.count && entries.zones[e + 1] == z, "entry \(e): the second of two is missing")
                e += 2
            } else {
                e += 1
            }
        }
        for z in 0 ..< rows.count where rows[z].kind == 1 { precondition(Int(rows[z].polygon) < polygons.count, "zone \(z) polygon") }
        var placed = [Bool](repeating: false, count: order.count)
        for i in order { precondition(!placed[Int(i)], "entry \(i) twice in the order"); placed[Int(i)] = true }
        precondition(order.count == entries.count && tree.leaves.count == (order.count + 15) / 16, "tree shape")
        #endif
    }

    /// Entry slots in the file: the leaves' 16 lanes each (the last leaf padded).
    private var paddedEntries: Int { tree.leaves.count * 16 }

    /// The section lengths, in file order.
    private var lengths: [Int] {
        let polygonData = polygons.reduce(0) { $0 + $1.byteCount }
        return [
            tree.nodes.count * 256, tree.levelStart.count * 4, tree.leaves.count * 128, tree.frames.count * MemoryLayout<RegionIndex.LeafFrame>.stride,
            paddedEntries * 4, paddedEntries * 32, polygons.count * ZoneSetFormat.polygonRecordSize,
            polygonData, rows.count * ZoneSetFormat.zoneRecordSize,
            strings.count, lookup.count * ZoneSetFormat.lookupRecordSize, tree.grid.count * 4,
        ]
    }

    /// Bytes of the file.
    public var fileSize: Int {
        var offset = ZoneSetFormat.headerSize
        for l in lengths { offset = ZoneSetFormat.aligned(offset + l) }
        return offset
    }

    /// Writes the file to `sink`, in order, in chunks of a few hundred kilobytes: the entries
    /// are gathered into Hilbert order as they are written.
    /// - Complexity: O(file size), twice (the checksum goes first, in the header).
    /// - Precondition: a little-endian host. The index sections are written as the host holds
    ///   them, so a big-endian host would write a file every board reads wrong; it stops here
    ///   instead (and ``ZoneSet/init(_:verifyChecksum:release:)`` refuses to read there).
    public func write<S: ZoneSetSink>(to sink: inout S) throws(S.Failure) {
        #if _endian(big)
        preconditionFailure("zone sets are little-endian; this host is big-endian and cannot write one")
        #endif
        var hasher = ChecksumSink()
        emit(checksum: 0, into: &hasher)
        try emit(checksum: hasher.checksum.finish(), into: &sink)
    }

    /// The file's bytes in memory.
    public var bytes: [UInt8] {
        var b = ZoneSetBytes()
        write(to: &b)
        return b.bytes
    }

    private func emit<S: ZoneSetSink>(checksum: UInt64, into sink: inout S) throws(S.Failure) {
        let lengths = self.lengths
        // Header.
        var header = [UInt8](repeating: 0, count: ZoneSetFormat.headerSize)
        func put<T: FixedWidthInteger>(_ v: T, _ at: Int) {
            withUnsafeBytes(of: v.littleEndian) { for (i, b) in $0.enumerated() { header[at + i] = b } }
        }
        for (i, b) in ZoneSetFormat.magic.enumerated() { header[i] = b }
        put(ZoneSetFormat.version, 8)
        put(UInt32(ZoneSetFormat.headerSize), 12)
        put(checksum, 16)
        put(UInt64(fileSize), 24)
        put(sourceHash, 32)
        put(UInt32(rows.count), 40)
        put(UInt32(polygons.count), 44)
        put(UInt32(order.count), 48)
        put(UInt32(tree.levelStart.count), 52)
        put(bounds.0.bitPattern, 56); put(bounds.1.bitPattern, 64); put(bounds.2.bitPattern, 72); put(bounds.3.bitPattern, 80)
        put(UInt32(tree.leaves.count), 88)
        put(UInt32(tree.nodes.count), 92)
        put(UInt32(strings.count), 104)
        put(UInt32(tree.grid.count), 108)
        put(UInt64(lengths[ZoneSetFormat.Section.polygonData.rawValue]), 112)
        var offset = ZoneSetFormat.headerSize
        for (k, l) in lengths.enumerated() {
            put(UInt64(offset), 128 + 16 * k)
            put(UInt64(l), 136 + 16 * k)
            offset = ZoneSetFormat.aligned(offset + l)
        }
        try writeBytes(header, &sink)
        var written = ZoneSetFormat.headerSize
        func pad() throws(S.Failure) {
            let n = ZoneSetFormat.aligned(written) - written
            guard n > 0 else { return }
            let zeros = [UInt8](repeating: 0, count: n)
            try writeBytes(zeros, &sink)
            written += n
        }
        func raw<T>(_ a: [T]) throws(S.Failure) {
            try writeBytes(a, &sink)
            written += a.count * MemoryLayout<T>.stride
            try pad()
        }
        // The tree, as `RegionIndex` holds it (a little-endian host: see write(to:)).
        try raw(tree.nodes)
        try raw(tree.levelStart.map { UInt32($0).littleEndian })
        try raw(tree.leaves)
        try raw(tree.frames)
        // Entries in Hilbert order; the last leaf's empty lanes are zeros.
        let chunk = Chunk()
        for k in 0 ..< paddedEntries {
            chunk.u32(k < order.count ? entries.zones[Int(order[k])] : 0)
            try chunk.flushIfFull(into: &sink, written: &written)
        }
        try chunk.flush(into: &sink, written: &written); try pad()
        for k in 0 ..< paddedEntries {
            let g = k < order.count ? entries.geometry(Int(order[k])) : RegionIndex.EntryGeometry(center: Vec3(x: 0, y: 0, z: 0), radius: 0)
            chunk.f64(g.center.x); chunk.f64(g.center.y); chunk.f64(g.center.z); chunk.f64(g.radius)
            try chunk.flushIfFull(into: &sink, written: &written)
        }
        try chunk.flush(into: &sink, written: &written); try pad()
        // Polygons: where each block is, then the blocks (each a multiple of 8 bytes long).
        var blockOffset: UInt64 = 0
        for poly in polygons {
            chunk.u64(blockOffset); chunk.u64(UInt64(poly.byteCount))
            blockOffset += UInt64(poly.byteCount)
            try chunk.flushIfFull(into: &sink, written: &written)
        }
        try chunk.flush(into: &sink, written: &written); try pad()
        for poly in polygons {
            try sink.write(poly.block.bytes)
            written += poly.byteCount
        }
        try pad()
        // Zones.
        for z in 0 ..< rows.count {
            let r = rows[z]
            chunk.u8(r.kind); chunk.u8(r.flags); chunk.u8(r.level); chunk.u8(0)
            chunk.u32(r.polygon)
            chunk.u32(r.id.0); chunk.u32(r.id.1); chunk.u32(r.title.0); chunk.u32(r.title.1); chunk.u32(r.sound.0); chunk.u32(r.sound.1)
            chunk.f64(r.latitude); chunk.f64(r.longitude); chunk.f64(r.radius); chunk.f64(r.dwell); chunk.f64(r.cooldown)
            chunk.u64(r.fingerprint)
            try chunk.flushIfFull(into: &sink, written: &written)
        }
        try chunk.flush(into: &sink, written: &written); try pad()
        try sink.write(strings.bytes)
        written += strings.count
        try pad()
        for k in 0 ..< lookup.count {
            let key = lookup[k]
            chunk.u64(key.hash); chunk.u32(key.row); chunk.u32(0)
            try chunk.flushIfFull(into: &sink, written: &written)
        }
        try chunk.flush(into: &sink, written: &written); try pad()
        // The grid over the tree (TreeGrid.swift), as `RegionIndex` holds it.
        try raw(tree.grid)
        precondition(written == fileSize, "zone set: wrote \(written) bytes of \(fileSize)")
    }
}

/// Little-endian encoding into a reused buffer, written out in pieces of ~256 KiB. Values are
/// stored in place (`storeBytes`), not appended to an array: the writer runs this for every
/// field of every zone, twice (the checksum pass and the write).
private final class Chunk {
    private var base: UnsafeMutableRawPointer
    private var capacity = 1 << 18 + 4096
    private(set) var count = 0

    init() { base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16) }
    deinit { base.deallocate() }

    /// Room for `n` more bytes (a polygon's vertices go in whole, however many).
    @inline(__always)
    private func reserve(_ n: Int) {
        guard count + n > capacity else { return }
        let grown = UnsafeMutableRawPointer.allocate(byteCount: 2 * (count + n), alignment: 16)
        grown.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = grown
        capacity = 2 * (count + n)
    }

    func u8(_ v: UInt8) { reserve(1); base.storeBytes(of: v, toByteOffset: count, as: UInt8.self); count += 1 }
    func u32(_ v: UInt32) { reserve(4); base.storeBytes(of: v.littleEndian, toByteOffset: count, as: UInt32.self); count += 4 }
    func u64(_ v: UInt64) { reserve(8); base.storeBytes(of: v.littleEndian, toByteOffset: count, as: UInt64.self); count += 8 }
    func f64(_ v: Double) { u64(v.bitPattern) }
    func zeros(_ n: Int) { reserve(n); (base + count).initializeMemory(as: UInt8.self, repeating: 0, count: n); count += n }

    func flushIfFull<S: ZoneSetSink>(into sink: inout S, written: inout Int) throws(S.Failure) {
        if count >= 1 << 18 { try flush(into: &sink, written: &written) }
    }

    func flush<S: ZoneSetSink>(into sink: inout S, written: inout Int) throws(S.Failure) {
        guard count > 0 else { return }
        try sink.write(UnsafeRawBufferPointer(start: base, count: count))
        written += count
        count = 0
    }
}

/// The checksum pass of ``ZoneSetImage/write(to:)``.
private struct ChecksumSink: ZoneSetSink {
    var checksum = ZoneSetFormat.Checksum()
    mutating func write(_ bytes: UnsafeRawBufferPointer) { checksum.add(bytes) }
}

/// Writes an array's bytes to `sink` (the standard library's `withUnsafeBytes` does not carry a
/// typed error through).
private func writeBytes<T, S: ZoneSetSink>(_ a: [T], _ sink: inout S) throws(S.Failure) {
    var failure: S.Failure? = nil
    a.withUnsafeBytes { (b: UnsafeRawBufferPointer) -> Void in
        do throws(S.Failure) { try sink.write(b) } catch { failure = error }
    }
    if let failure { throw failure }
}
