// A built zone set on its way to the file: the builder's columns compacted in place, the packed
// tree, and the writer that encodes them (little-endian, in chunks of ~256 KiB) with the
// checksum computed as the bytes go out. See ZoneSetFormat.swift for the layout.
import Position

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
