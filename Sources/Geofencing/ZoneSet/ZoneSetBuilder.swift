// Building a zone-set file: zones are added one at a time (the caller streams them from its
// source), held as compact 80-byte rows plus their strings, and written once at the end with the
// packed R-tree over them. See ZoneSetFormat.swift for the layout.
//
// Memory at 1M circles: rows 80 MB, strings ~10 MB, the id table for replacement ~40 MB, then
// `RegionIndex`'s bulk load (~200 B per entry while it sorts) — about 330 MB at the peak; the
// output is streamed to the sink in chunks, never held as one array.
import Position

/// What a zone's notification says.
public struct ZoneContent: Hashable, Sendable {
    public var title: String
    /// A buzzer pattern name.
    public var sound: String
    /// Interruption level code: 0 passive, 1 active, 2 time-sensitive, 3 critical.
    public var level: UInt8

    public init(title: String, sound: String = "default", level: UInt8 = 1) {
        self.title = title; self.sound = sound; self.level = level
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
    struct Row {
        var kind: UInt8          // 0 circle, 1 polygon, 0xFF replaced by a later zone of the same id
        var flags: UInt8
        var level: UInt8
        var polygon: UInt32      // into `polygonList` while building
        var id: (UInt32, UInt32), title: (UInt32, UInt32), sound: (UInt32, UInt32)
        var latitude: Double, longitude: Double, radius: Double
        var dwell: Double, cooldown: Double
        var fingerprint: UInt64
    }

    var rows: [Row] = []
    var strings: [UInt8] = []
    var polygonList: [PolygonRegion] = []
    var position: [String: Int32] = [:]
    var sounds: [String: (UInt32, UInt32)] = [:]
    var replaced = 0

    public init() {}

    /// Zones added so far (a zone replaced by a later one of the same id counts once).
    public var count: Int { rows.count - replaced }

    /// Adds `region` with its notification content. The same identifier again replaces the earlier
    /// zone (which gives up its place: the later definition and position count, as in a GeoJSON
    /// file).
    /// - Complexity: amortised O(1) (O(vertices) for a polygon).
    public mutating func add(_ region: Region, content: ZoneContent) {
        precondition(rows.count < Int(Int32.max) >> 1, "a zone set holds fewer than 2³⁰ zones")
        if let earlier = position[region.identifier] {
            rows[Int(earlier)].kind = 0xFF
            replaced += 1
        }
        position[region.identifier] = Int32(rows.count)
        let id = intern(region.identifier)
        let title = content.title == region.identifier ? id : intern(content.title)
        let sound: (UInt32, UInt32)
        if let s = sounds[content.sound] { sound = s } else { sound = intern(content.sound); sounds[content.sound] = sound }
        var flags: UInt8 = 0
        if region.notifyOnEntry { flags |= ZoneSetFormat.ZoneFlags.notifyOnEntry }
        if region.notifyOnExit { flags |= ZoneSetFormat.ZoneFlags.notifyOnExit }
        if region.dwell != nil { flags |= ZoneSetFormat.ZoneFlags.hasDwell }
        if region.repeats { flags |= ZoneSetFormat.ZoneFlags.repeats }
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
    }

    private mutating func intern(_ s: String) -> (UInt32, UInt32) {
        let start = UInt32(strings.count)
        strings.append(contentsOf: s.utf8)
        return (start, UInt32(strings.count) - start)
    }

    /// The finished set, ready to write; `sourceHash` names what it was built from.
    /// - Complexity: O(n) plus the index's radix sort; ~1 s at 1M circles.
    public consuming func finish(sourceHash: UInt64) -> ZoneSetImage {
        position = [:]   // not needed any more: give its memory back before the index is built
        sounds = [:]
        var live: [Row] = []
        live.reserveCapacity(count)
        var polygons: [PolygonRegion] = []
        for var r in rows where r.kind != 0xFF {
            if r.kind == 1 {
                let p = polygonList[Int(r.polygon)]
                r.polygon = UInt32(polygons.count)
                polygons.append(p)
            }
            live.append(r)
        }
        rows = []
        polygonList = []
        let shapes = live.lazy.enumerated().map { (k, r) -> (slot: Int32, shape: RegionShape) in
            r.kind == 1 ? (Int32(k), .polygon(polygons[Int(r.polygon)]))
                : (Int32(k), .circle(try! CircularRegion(center: Coordinate(latitude: r.latitude, longitude: r.longitude), radius: r.radius)))
        }
        let index = RegionIndex(shapes)
        var bounds = (Double.infinity, -Double.infinity, Double.infinity, -Double.infinity)
        for (_, shape) in shapes {
            let cap = shape.boundingCap
            let (a, b) = GeoBox.covering(center: cap.center, angularRadius: cap.angle)
            for box in [a] + (b.map { [$0] } ?? []) {
                bounds = (min(bounds.0, box.minLatitude), max(bounds.1, box.maxLatitude),
                          min(bounds.2, box.minLongitude), max(bounds.3, box.maxLongitude))
            }
        }
        let strings = self.strings
        var lookup: [(UInt64, UInt32)] = []
        lookup.reserveCapacity(live.count)
        strings.withUnsafeBufferPointer { s in
            for (k, r) in live.enumerated() {
                lookup.append((ZoneSetFormat.idHash(s[Int(r.id.0) ..< Int(r.id.0 + r.id.1)]), UInt32(k)))
            }
        }
        lookup.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        return ZoneSetImage(index: index, rows: live, strings: strings, lookup: lookup, bounds: bounds, sourceHash: sourceHash)
    }
}

/// A built zone set, not yet written.
public struct ZoneSetImage {
    let index: RegionIndex
    let rows: [ZoneSetBuilder.Row]
    let strings: [UInt8]
    let lookup: [(UInt64, UInt32)]
    let bounds: (Double, Double, Double, Double)
    public let sourceHash: UInt64

    /// Number of zones.
    public var zoneCount: Int { rows.count }

    /// The section lengths, in file order.
    private var lengths: [Int] {
        let p = index.parts
        let points = p.polygons.reduce(0) { $0 + $1.points.count }
        let ringStarts = p.polygons.reduce(0) { $0 + $1.ringStarts.count }
        return [
            p.nodes.count * 256, p.levelStart.count * 4, p.leaves.count * 128, p.frames.count * 16,
            p.slots.count * 4, p.geometry.count * 32, p.polygons.count * ZoneSetFormat.polygonRecordSize,
            points * 16, ringStarts * 4, points * 16, rows.count * ZoneSetFormat.zoneRecordSize,
            strings.count, lookup.count * ZoneSetFormat.lookupRecordSize,
        ]
    }

    /// Bytes of the file.
    public var fileSize: Int {
        var offset = ZoneSetFormat.headerSize
        for l in lengths { offset = ZoneSetFormat.aligned(offset + l) }
        return offset
    }

    /// Writes the file to `sink`, in order, in chunks of at most a few hundred kilobytes beyond
    /// the index's own arrays.
    /// - Complexity: O(file size), twice (the checksum goes first, in the header).
    /// - Precondition: a little-endian host. The index sections are written as the host holds
    ///   them, so a big-endian host would write a file every board reads wrong; it stops here
    ///   instead (and ``ZoneSet/init(_:)`` refuses to read there).
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
        let p = index.parts
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
        put(UInt32(p.polygons.count), 44)
        put(UInt32(p.entryCount), 48)
        put(UInt32(p.levelStart.count), 52)
        put(bounds.0.bitPattern, 56); put(bounds.1.bitPattern, 64); put(bounds.2.bitPattern, 72); put(bounds.3.bitPattern, 80)
        put(UInt32(p.leaves.count), 88)
        put(UInt32(p.nodes.count), 92)
        put(UInt32(lengths[ZoneSetFormat.Section.points.rawValue] / 16), 96)
        put(UInt32(lengths[ZoneSetFormat.Section.ringStarts.rawValue] / 4), 100)
        put(UInt32(strings.count), 104)
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
        // Index sections, as the index holds them (a little-endian host: see write(to:)).
        try raw(p.nodes)
        try raw(p.levelStart.map { UInt32($0).littleEndian })
        try raw(p.leaves)
        try raw(p.frames)
        try raw(p.slots)
        try raw(p.geometry)
        // Polygons, their plane points, ring starts and vertices.
        var chunk = Chunk()
        var firstRing: UInt32 = 0, firstPoint: UInt32 = 0
        for poly in p.polygons {
            chunk.f64(poly.plane.center.x); chunk.f64(poly.plane.center.y); chunk.f64(poly.plane.center.z)
            chunk.f64(poly.boundingAngle)
            chunk.u32(firstRing); chunk.u32(UInt32(poly.ringStarts.count - 1))
            chunk.zeros(8)
            firstRing += UInt32(poly.ringStarts.count)
            try chunk.flushIfFull(into: &sink, written: &written)
        }
        try chunk.flush(into: &sink, written: &written); try pad()
        for poly in p.polygons {
            for q in poly.points { chunk.f64(q.x); chunk.f64(q.y) }
            try chunk.flushIfFull(into: &sink, written: &written)
        }
        try chunk.flush(into: &sink, written: &written); try pad()
        for poly in p.polygons {
            for s in poly.ringStarts { chunk.u32(firstPoint + UInt32(s)) }
            firstPoint += UInt32(poly.points.count)
            try chunk.flushIfFull(into: &sink, written: &written)
        }
        try chunk.flush(into: &sink, written: &written); try pad()
        for poly in p.polygons {
            for ring in poly.rings { for c in ring { chunk.f64(c.latitude); chunk.f64(c.longitude) } }
            try chunk.flushIfFull(into: &sink, written: &written)
        }
        try chunk.flush(into: &sink, written: &written); try pad()
        // Zones.
        for r in rows {
            chunk.u8(r.kind); chunk.u8(r.flags); chunk.u8(r.level); chunk.u8(0)
            chunk.u32(r.polygon)
            chunk.u32(r.id.0); chunk.u32(r.id.1); chunk.u32(r.title.0); chunk.u32(r.title.1); chunk.u32(r.sound.0); chunk.u32(r.sound.1)
            chunk.f64(r.latitude); chunk.f64(r.longitude); chunk.f64(r.radius); chunk.f64(r.dwell); chunk.f64(r.cooldown)
            chunk.u64(r.fingerprint)
            try chunk.flushIfFull(into: &sink, written: &written)
        }
        try chunk.flush(into: &sink, written: &written); try pad()
        try raw(strings)
        for (h, z) in lookup {
            chunk.u64(h); chunk.u32(z); chunk.u32(0)
            try chunk.flushIfFull(into: &sink, written: &written)
        }
        try chunk.flush(into: &sink, written: &written); try pad()
        precondition(written == fileSize, "zone set: wrote \(written) bytes of \(fileSize)")
    }
}

/// Little-endian encoding into a reused buffer, written out in pieces of ~256 KiB.
private struct Chunk {
    var buffer: [UInt8] = []
    mutating func u8(_ v: UInt8) { buffer.append(v) }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { buffer.append(contentsOf: $0) } }
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { buffer.append(contentsOf: $0) } }
    mutating func f64(_ v: Double) { u64(v.bitPattern) }
    mutating func zeros(_ n: Int) { buffer.append(contentsOf: repeatElement(0, count: n)) }
    mutating func flushIfFull<S: ZoneSetSink>(into sink: inout S, written: inout Int) throws(S.Failure) {
        if buffer.count >= 1 << 18 { try flush(into: &sink, written: &written) }
    }
    mutating func flush<S: ZoneSetSink>(into sink: inout S, written: inout Int) throws(S.Failure) {
        guard !buffer.isEmpty else { return }
        try writeBytes(buffer, &sink)
        written += buffer.count
        buffer.removeAll(keepingCapacity: true)
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
