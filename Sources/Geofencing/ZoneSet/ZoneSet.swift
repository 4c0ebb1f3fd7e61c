// Reading a zone-set file in place (mapped read-only by the shell): the header and every section
// are checked once when the set is opened — checksum, version, section bounds and alignment, the
// tree's shape, every reference between sections — so that the queries after it can read without
// bounds checks and a damaged file can never crash the agent. See ZoneSetFormat.swift.
import Position

/// One zone of a set, as its record says.
public struct ZoneSetZone: Hashable, Sendable {
    /// The zone's number in its set.
    public var number: Int
    public var identifier: String
    public var content: ZoneContent
    public var region: Region
    /// Hash of the geometry alone: an unchanged zone keeps its state across a new set.
    public var fingerprint: UInt64
}

/// A zone set over bytes the caller keeps alive and unchanged (a read-only mapping).
public struct ZoneSet: @unchecked Sendable {
    /// The file's bytes.
    public let bytes: UnsafeRawBufferPointer
    public let count: Int
    public let polygonCount: Int
    public let entryCount: Int
    public let sourceHash: UInt64
    public let checksum: UInt64
    public let version: UInt32
    /// Bounds of the zones' boxes (degrees); nil for an empty set.
    public let bounds: GeoBox?
    /// The tree (for an empty set its pointers are never read: every query stops at its empty
    /// entry count). Not optional: an optional view was copied to the stack at every query.
    let view: IndexView<MappedPolygons>
    /// The check of every reference, when the set was opened with `deferStructureCheck`: run it
    /// to its end (``ZoneSetStructureCheck/advance(budget:release:)``) before any query.
    public let deferredCheck: ZoneSetStructureCheck?
    private let sections: [(offset: Int, length: Int)]
    private let stringsBase: Int, zonesBase: Int, lookupBase: Int, polygonsBase: Int, polygonDataBase: Int

    /// Zone numbers of a set, offset so that they never meet the slots of requests' regions in
    /// a ``RegionMonitor`` (which holds both).
    public static let slotBase: Int32 = 1 << 30

    /// Checks `bytes` and reads its header.
    /// - Throws: ``ZoneSetError``: corrupt or truncated, older (rebuild), newer (refused).
    /// - Complexity: O(file size): the checksum and one pass over the entries and zones.
    /// - Parameters:
    ///   - verifyChecksum: false only for a file this process family has just written and read
    ///     back (the agent's swap after a build in a child): the structure is still checked, so
    ///     reading stays safe, but the O(size) checksum pass stays out of the loop turn.
    ///   - release: called with (offset, length) of byte ranges the checks are done with, every
    ///     few megabytes: a caller that mapped the file lets go of those pages, so opening a set
    ///     never makes the whole file resident at once.
    ///   - deferStructureCheck: true leaves the O(zones) check of every reference to the caller,
    ///     in ``deferredCheck``, which must be run to its end before the set is queried (the
    ///     agent's swap, in slices over loop turns).
    public init(_ bytes: UnsafeRawBufferPointer, verifyChecksum: Bool = true, deferStructureCheck: Bool = false,
                release: (_ offset: Int, _ length: Int) -> Void = { _, _ in }) throws(ZoneSetError) {
        #if _endian(big)
        throw .bigEndianHost
        #else
        self.bytes = bytes
        let size = bytes.count
        func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
        func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        guard size >= 16 else { throw .corrupt("\(size) bytes, shorter than a header") }
        guard bytes.baseAddress.map({ Int(bitPattern: $0) % ZoneSetFormat.sectionAlignment == 0 }) ?? false else {
            throw .corrupt("not aligned in memory (map the file)")
        }
        for (i, b) in ZoneSetFormat.magic.enumerated() where bytes[i] != b { throw .corrupt("not a zone set (bad magic)") }
        version = u32(8)
        if version < ZoneSetFormat.version { throw .olderVersion(version) }
        if version > ZoneSetFormat.version { throw .newerVersion(version) }
        guard size >= ZoneSetFormat.headerSize else { throw .corrupt("truncated: \(size) bytes") }
        guard u32(12) == UInt32(ZoneSetFormat.headerSize) else { throw .corrupt("header size \(u32(12))") }
        guard u64(24) == UInt64(size) else { throw .corrupt("truncated or extended: \(size) bytes, the header says \(u64(24))") }
        checksum = u64(16)
        if verifyChecksum {
            guard ZoneSetFormat.checksum(of: bytes, release: release) == checksum else { throw .corrupt("checksum mismatch") }
        }
        sourceHash = u64(32)
        count = Int(u32(40)); polygonCount = Int(u32(44)); entryCount = Int(u32(48))
        let levels = Int(u32(52)), leafCount = Int(u32(88)), nodeCount = Int(u32(92))
        let stringBytes = Int(u32(104)), gridWords = Int(u32(108))
        guard u64(112) <= UInt64(size) else { throw .corrupt("polygon data of \(u64(112)) bytes") }
        let polygonDataBytes = Int(u64(112))
        guard count < Int(ZoneSet.slotBase) else { throw .corrupt("\(count) zones") }
        // Sections: inside the file, aligned, of the lengths the counts give.
        var sections: [(offset: Int, length: Int)] = []
        let expected = [nodeCount * 256, levels * 4, leafCount * 128, leafCount * MemoryLayout<RegionIndex.LeafFrame>.stride, leafCount * 16 * 4, leafCount * 16 * 32,
                        polygonCount * ZoneSetFormat.polygonRecordSize, polygonDataBytes,
                        count * ZoneSetFormat.zoneRecordSize, stringBytes, count * ZoneSetFormat.lookupRecordSize, gridWords * 4]
        for s in ZoneSetFormat.Section.allCases {
            let o = u64(128 + 16 * s.rawValue), l = u64(136 + 16 * s.rawValue)
            guard o <= UInt64(size), l <= UInt64(size) - o, o % UInt64(ZoneSetFormat.sectionAlignment) == 0,
                  o >= UInt64(ZoneSetFormat.headerSize), Int(l) == expected[s.rawValue] else {
                throw .corrupt("section \(s.rawValue) at \(o) of \(l) bytes does not fit the header's counts")
            }
            sections.append((Int(o), Int(l)))
        }
        self.sections = sections
        func base(_ s: ZoneSetFormat.Section) -> Int { sections[s.rawValue].offset }
        stringsBase = base(.strings); zonesBase = base(.zones); lookupBase = base(.lookup)
        polygonsBase = base(.polygons); polygonDataBase = base(.polygonData)
        // The tree's shape follows from the number of entries.
        guard leafCount == (entryCount + 15) / 16, entryCount >= count, entryCount <= 2 * count else {
            throw .corrupt("\(entryCount) entries in \(leafCount) leaves for \(count) zones")
        }
        var starts = SIMD8<Int32>(), n = leafCount, total = 0, level = 0
        while n > 1 {
            n = (n + 15) / 16
            // The header's level count first: the section holds `levels` starts and no more.
            guard level < 7, level < levels, u32(base(.levelStarts) + 4 * level) == UInt32(total) else { throw .corrupt("inner level \(level)") }
            starts[level] = Int32(total)
            total += n; level += 1
        }
        guard level == levels, total == nodeCount else { throw .corrupt("\(levels) levels, \(nodeCount) nodes for \(leafCount) leaves") }
        // The grid: the tree has one exactly when it has 3 levels or more (TreeGrid.swift), and
        // every count and index in it is in range.
        if gridWords > 0 || levels >= 2 {
            let at = UnsafeRawPointer(bytes.baseAddress! + base(.grid)).assumingMemoryBound(to: UInt32.self)
            let levelNodes = { (l: Int) -> Int in
                if l == 0 { return leafCount }
                guard l >= 1, l <= levels else { return -1 }
                return (l < levels ? Int(starts[l]) : nodeCount) - Int(starts[l - 1])
            }
            guard gridWords > 0, levels >= 2, GridView.validate(at, count: gridWords, levels: levels, levelNodes: levelNodes) else {
                throw .corrupt("grid of \(gridWords) words for \(levels) inner levels")
            }
        }
        // Leaf frames: decidable and identity lanes hold entries; tolerance and band are usable
        // numbers. (The identity lanes' slots are checked with the entries.)
        var everyLaneIdentity = true
        for leaf in 0 ..< leafCount {
            let at = base(.frames) + MemoryLayout<RegionIndex.LeafFrame>.stride * leaf
            let tolerance = Float(bitPattern: u32(at + 16)), band = Float(bitPattern: u32(at + 20)), decidable = u32(at + 24)
            let identity = u32(at + 28)
            let lanes = min(16, entryCount - 16 * leaf)
            guard decidable >> UInt32(lanes) == 0, identity >> UInt32(lanes) == 0, tolerance >= 0, tolerance < 65536, band >= 0, band < 1 else {
                throw .corrupt("leaf \(leaf) frame")
            }
            if identity != (1 << UInt32(lanes)) - 1 { everyLaneIdentity = false }
        }
        release(base(.frames), sections[ZoneSetFormat.Section.frames.rawValue].length)
        // Every reference points inside its section: now, or in slices by the caller.
        var check = ZoneSetStructureCheck(bytes: bytes, slotsBase: base(.slots), framesBase: base(.frames), geometryBase: base(.geometry),
                                          polygonsBase: base(.polygons), polygonDataBase: base(.polygonData),
                                          zonesBase: base(.zones), lookupBase: base(.lookup),
                                          entryCount: entryCount, polygonCount: polygonCount, count: count,
                                          polygonDataBytes: polygonDataBytes, stringBytes: stringBytes)
        if deferStructureCheck {
            deferredCheck = check
        } else {
            _ = try check.advance(budget: .max, release: release)
            deferredCheck = nil
        }
        if count > 0 {
            bounds = GeoBox(minLatitude: Double(bitPattern: u64(56)), maxLatitude: Double(bitPattern: u64(64)),
                            minLongitude: Double(bitPattern: u64(72)), maxLongitude: Double(bitPattern: u64(80)))
        } else {
            bounds = nil
        }
        do {
            // (Each section's offset is inside the file, also for an empty one.)
            let b = bytes.baseAddress!
            func ptr<T>(_ s: ZoneSetFormat.Section, _ t: T.Type) -> UnsafePointer<T> {
                UnsafeRawPointer(b + base(s)).assumingMemoryBound(to: T.self)
            }
            view = IndexView(nodes: nodeCount > 0 ? ptr(.nodes, RegionIndex.Node.self) : nil,
                             leaves: ptr(.leaves, RegionIndex.Leaf.self), frames: ptr(.frames, RegionIndex.LeafFrame.self),
                             levelStarts: starts, levels: levels, entryCount: entryCount,
                             slots: ptr(.slots, UInt32.self), slotsAreEntries: everyLaneIdentity, geometry: ptr(.geometry, RegionIndex.EntryGeometry.self),
                             polygons: MappedPolygons(records: b + base(.polygons), data: b + base(.polygonData)),
                             grid: gridWords > 0 ? GridView(ptr(.grid, UInt32.self)) : nil)
        }
        #endif
    }

    // MARK: Zones

    private func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
    private func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
    private func f64(_ at: Int) -> Double { Double(bitPattern: u64(at)) }

    private func string(_ record: Int, _ field: Int) -> String {
        let o = Int(u32(record + field)), l = Int(u32(record + field + 4))
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[stringsBase + o ..< stringsBase + o + l]), as: UTF8.self)
    }

    /// The identifier of zone `number` (0 ..< count).
    public func identifier(of number: Int) -> String {
        precondition(number >= 0 && number < count)
        return string(zonesBase + ZoneSetFormat.zoneRecordSize * number, ZoneSetFormat.ZoneField.idOffset)
    }

    /// The geometry fingerprint of zone `number`.
    public func fingerprint(of number: Int) -> UInt64 {
        precondition(number >= 0 && number < count)
        return u64(zonesBase + ZoneSetFormat.zoneRecordSize * number + ZoneSetFormat.ZoneField.fingerprint)
    }

    /// Zone `number` (0 ..< count) with its region and content. A polygon's region reads its
    /// geometry in the set's bytes: it is valid while they are.
    /// - Complexity: O(1).
    public func zone(_ number: Int) -> ZoneSetZone {
        precondition(number >= 0 && number < count)
        let at = zonesBase + ZoneSetFormat.zoneRecordSize * number
        typealias F = ZoneSetFormat.ZoneField
        let region = self.region(number)
        let content = ZoneContent(title: string(at, F.titleOffset), sound: string(at, F.soundOffset), level: bytes[at + F.level],
                                  report: bytes[at + F.flags] & ZoneSetFormat.ZoneFlags.report != 0)
        return ZoneSetZone(number: number, identifier: region.identifier, content: content, region: region, fingerprint: u64(at + F.fingerprint))
    }

    /// Zone `number`'s region (what the monitor needs, without the content's strings). A
    /// polygon's region reads its geometry in the set's bytes: it is valid while they are.
    /// - Complexity: O(1).
    public func region(_ number: Int) -> Region {
        precondition(number >= 0 && number < count)
        let at = zonesBase + ZoneSetFormat.zoneRecordSize * number
        typealias F = ZoneSetFormat.ZoneField
        let flags = bytes[at + F.flags]
        let id = string(at, F.idOffset)
        let shape: RegionShape
        if bytes[at] == 0 {
            // Checked when the set was opened.
            shape = .circle(try! CircularRegion(center: Coordinate(latitude: f64(at + F.latitude), longitude: f64(at + F.longitude)),
                                                radius: f64(at + F.radius)))
        } else {
            shape = .polygon(polygon(Int(u32(at + F.polygon))))
        }
        let region = Region(identifier: id, shape: shape,
                            notifyOnEntry: flags & ZoneSetFormat.ZoneFlags.notifyOnEntry != 0,
                            notifyOnExit: flags & ZoneSetFormat.ZoneFlags.notifyOnExit != 0,
                            dwell: flags & ZoneSetFormat.ZoneFlags.hasDwell != 0 ? f64(at + F.dwell) : nil,
                            cooldown: f64(at + F.cooldown), repeats: flags & ZoneSetFormat.ZoneFlags.repeats != 0)
        return region
    }

    /// Polygon `p`, over its block in the file (checked when the set was opened): O(1).
    private func polygon(_ p: Int) -> PolygonRegion {
        let at = polygonsBase + ZoneSetFormat.polygonRecordSize * p
        return PolygonRegion(mapped: bytes.baseAddress! + polygonDataBase + Int(u64(at)), length: Int(u64(at + 8)))
    }

    /// The number of the zone named `identifier`, if the set has one.
    /// - Complexity: O(log n) (binary search of the id hashes).
    public func number(of id: String) -> Int? {
        let h = ZoneSetFormat.idHash(id.utf8)
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if u64(lookupBase + 16 * mid) < h { lo = mid + 1 } else { hi = mid }
        }
        while lo < count, u64(lookupBase + 16 * lo) == h {
            let z = Int(u32(lookupBase + 16 * lo + 8))
            if identifier(of: z) == id { return z }
            lo += 1
        }
        return nil
    }

    // MARK: Queries

    /// Replaces `results` with the numbers of the zones whose signed distance to `point` is ≤
    /// `margin` metres (0: the zones containing it), each once.
    /// - Complexity: O(log₁₆ n + k), as ``RegionIndex/query(_:margin:into:)``.
    public func query(_ point: Coordinate, margin: Double = 0, into results: inout [Int32]) {
        RegionIndex.empty(&results)
        view.query(point, margin: margin, into: &results)
    }

    /// Appends the numbers of the zones whose bounding boxes meet the cap of `angularRadius`
    /// radians around `center` (a superset of the zones within that distance) to `results`.
    public func candidates(near center: Coordinate, angularRadius: Double, into results: inout [Int32]) {
        if !results.isEmpty { results.removeAll(keepingCapacity: true) }
        view.candidates(near: center, angularRadius: angularRadius, into: &results)
    }

    // MARK: Fingerprints

    /// A hash of a region's geometry (kind, centre, radius, vertices), the same on every machine.
    public static func fingerprint(_ shape: RegionShape) -> UInt64 {
        var c = ZoneSetFormat.Checksum()
        switch shape {
        case .circle(let circle):
            c.add(word: 1)
            c.add(word: circle.center.latitude.bitPattern); c.add(word: circle.center.longitude.bitPattern)
            c.add(word: circle.radius.bitPattern)
        case .polygon(let p):
            // One part hashes as polygons always did; more parts add their count and bounds.
            let parts = p.parts
            c.add(word: parts.count == 1 ? 2 : 3)
            if parts.count > 1 { c.add(word: UInt64(parts.count)) }
            for part in parts {
                if parts.count > 1 { c.add(word: UInt64(part.count)) }
                for ring in part {
                    c.add(word: UInt64(ring.count))
                    for v in ring { c.add(word: v.latitude.bitPattern); c.add(word: v.longitude.bitPattern) }
                }
            }
        }
        return c.finish()
    }
}

/// The polygons of a mapped set.
struct MappedPolygons: PolygonTable {
    let records: UnsafeRawPointer
    let data: UnsafeRawPointer

    @inline(__always)
    func isWithin(polygon index: Int, _ point: Coordinate, margin: Double) -> Bool {
        let at = records + ZoneSetFormat.polygonRecordSize * index
        let offset = Int(UInt64(littleEndian: at.loadUnaligned(as: UInt64.self)))
        return PolygonView(data + offset).isWithin(latitude: point.latitude, longitude: point.longitude, margin: margin)
    }
}
