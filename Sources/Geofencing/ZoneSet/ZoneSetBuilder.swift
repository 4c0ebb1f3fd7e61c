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
