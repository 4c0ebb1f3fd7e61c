@testable import Geofencing
import Position
import SeededRandom
import Testing

/// The zone-set file: round trip against the in-memory index, and refusal of every kind of damage.
@Suite struct ZoneSetTests {
    /// Bytes at a 64-byte aligned address, as a mapping gives them.
    final class Aligned {
        let buffer: UnsafeMutableRawBufferPointer
        init(_ bytes: [UInt8]) {
            let b = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 64)
            bytes.withUnsafeBytes { b.copyMemory(from: $0) }
            buffer = b
            raw = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(b)[0 ..< bytes.count])
        }
        let raw: UnsafeRawBufferPointer
        deinit { buffer.deallocate() }
    }

    /// Seeded zones: circles of 5 m–5 km everywhere (some across the antimeridian and at the
    /// poles), polygons, a few zones given twice.
    static func zones(seed: UInt64, circles: Int, polygons: Int) -> [(Region, ZoneContent)] {
        var rng = SplitMix64(seed: seed)
        var out: [(Region, ZoneContent)] = []
        for k in 0 ..< circles {
            let c = k % 50 == 0 ? Coordinate(latitude: rng.uniform(-60, 60), longitude: 179.99) : rng.pointOnSphere()
            var r = try! Region.circle("c\(k)", center: c, radius: rng.uniform(5, 5000))
            r.notifyOnExit = rng.chance(0.5)
            if rng.chance(0.2) { r.dwell = rng.uniform(0, 600) }
            r.cooldown = rng.chance(0.3) ? rng.uniform(0, 3600) : 0
            out.append((r, ZoneContent(title: k % 3 == 0 ? "Zone \(k) ✓" : "c\(k)", sound: k % 2 == 0 ? "default" : "chime", level: UInt8(k % 4))))
        }
        for k in 0 ..< polygons {
            let c = rng.pointOnSphere()
            let n = rng.int(3 ... 9)
            let size = rng.uniform(20, 3000)
            let ring = (0 ..< n).map { i in destination(c, bearing: Double(i) * 360 / Double(n), distance: size * rng.uniform(0.5, 1)) }
            let r = Region(identifier: "p\(k)", shape: .polygon(try! PolygonRegion(vertices: ring)), dwell: nil, cooldown: 60)
            out.append((r, ZoneContent(title: "p\(k)")))
        }
        return out
    }

    /// `bytes` with `change` made and the checksum made right again: damage the checksum does not
    /// catch (a writer's bug, or a crafted file), for the structure checks to refuse.
    static func resealed(_ bytes: [UInt8], _ change: (inout [UInt8]) -> Void) -> [UInt8] {
        var b = bytes
        change(&b)
        let sum = b.withUnsafeBytes { ZoneSetFormat.checksum(of: $0) }
        withUnsafeBytes(of: sum.littleEndian) { for k in 0 ..< 8 { b[16 + k] = $0[k] } }
        return b
    }

    /// Where section `s` starts in a zone-set file (its header's table).
    static func section(_ bytes: [UInt8], _ s: ZoneSetFormat.Section) -> Int {
        Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 128 + 16 * s.rawValue, as: UInt64.self) })
    }

    /// The number of the first zone record of `kind` (0 circle, 1 polygon) in a set's bytes.
    static func firstZone(ofKind kind: UInt8, _ bytes: [UInt8]) -> Int {
        let at = section(bytes, .zones), count = bytes.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 40, as: UInt32.self)) }
        return (0 ..< count).first { bytes[at + ZoneSetFormat.zoneRecordSize * $0] == kind }!
    }

    /// The first entry whose leaf frame marks it as its own zone number (``RegionIndex/LeafFrame/identity``).
    static func firstIdentityEntry(_ bytes: [UInt8]) -> Int {
        let frames = section(bytes, .frames), entries = bytes.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 48, as: UInt32.self)) }
        return (0 ..< entries).first { e in
            let identity = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: frames + 32 * (e / 16) + 28, as: UInt32.self) }
            return identity >> UInt32(e % 16) & 1 != 0
        }!
    }

    static func build(_ zones: [(Region, ZoneContent)], hash: UInt64 = 42) -> [UInt8] {
        var b = ZoneSetBuilder()
        for (r, c) in zones { b.add(r, content: c) }
        return b.finish(sourceHash: hash).bytes
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func roundTripMatchesTheInMemoryIndex(seed: UInt64) throws {
        var zones = Self.zones(seed: seed, circles: 3000, polygons: 200)
        // Replacements: the later definition and position win.
        var moved = zones[5].0
        moved.shape = .circle(try CircularRegion(center: Coordinate(latitude: 1, longitude: 2), radius: 77))
        zones.append((moved, ZoneContent(title: "moved")))
        let expected = zones.enumerated().filter { (k, z) in k != 5 }.map { $0.1 }
        let file = Aligned(Self.build(zones))
        let set = try ZoneSet(file.raw)
        #expect(set.count == expected.count, "seed \(seed)")
        #expect(set.sourceHash == 42)
        // Zones are numbered in the tree's order: each is found by its id, each number once.
        var added = [Int](repeating: -1, count: set.count)   // set's number → place in `expected`
        for (k, (r, c)) in expected.enumerated() {
            guard let n = set.number(of: r.identifier) else { Issue.record("seed \(seed): zone \(k) missing"); continue }
            let z = set.zone(n)
            #expect(z.number == n && z.identifier == r.identifier, "seed \(seed) zone \(k)")
            #expect(z.region == r, "seed \(seed) zone \(k)")
            #expect(z.content == c, "seed \(seed) zone \(k)")
            #expect(z.fingerprint == ZoneSet.fingerprint(r.shape))
            #expect(added[n] == -1, "seed \(seed): number \(n) twice")
            added[n] = k
        }
        #expect(set.number(of: "nope") == nil)
        // Queries: exactly what the in-memory index over the same regions answers.
        let index = RegionIndex(expected.enumerated().map { (slot: Int32($0.offset), shape: $0.element.0.shape) })
        var rng = SplitMix64(seed: seed &+ 1000)
        var a: [Int32] = [], b: [Int32] = []
        for q in 0 ..< 3000 {
            // Half near a zone's centre, half anywhere.
            let p = q % 2 == 0 ? destination(expected[rng.int(0 ... expected.count - 1)].0.shape.center,
                                             bearing: rng.uniform(0, 360), distance: rng.uniform(0, 3000)) : rng.pointOnSphere()
            let margin = rng.chance(0.5) ? 0 : rng.uniform(0, 500)
            set.query(p, margin: margin, into: &a)
            index.query(p, margin: margin, into: &b)
            #expect(a.map { Int32(added[Int($0)]) }.sorted() == b.sorted(), "seed \(seed) query \(q) at \(p) margin \(margin)")
            set.candidates(near: p, angularRadius: margin / Geodesy.earthRadius, into: &a)
            index.candidates(near: p, angularRadius: margin / Geodesy.earthRadius, into: &b)
            #expect(a.map { Int32(added[Int($0)]) }.sorted() == b.sorted(), "seed \(seed) candidates \(q)")
        }
    }

    @Test func emptyAndSmallSets() throws {
        for n in [0, 1, 15, 16, 17, 257] {
            let zones = Self.zones(seed: UInt64(n), circles: n, polygons: 0)
            let file = Aligned(Self.build(zones))
            let set = try ZoneSet(file.raw)
            #expect(set.count == n)
            var r: [Int32] = []
            for (k, z) in zones.enumerated() {
                set.query(z.0.shape.center, into: &r)
                #expect(r.contains(Int32(set.number(of: z.0.identifier) ?? -1)), "\(n) zones, zone \(k)")
            }
            if n == 0 {
                // An empty set's tree is never read: nothing matches, anywhere, at any margin.
                for p in [Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 52.5, longitude: 13.4)] {
                    r = [7]
                    set.query(p, into: &r); #expect(r.isEmpty)
                    set.query(p, margin: 1e6, into: &r); #expect(r.isEmpty)
                    r = [7]
                    set.candidates(near: p, angularRadius: 3, into: &r); #expect(r.isEmpty)
                }
            }
        }
    }

    /// Zones are numbered in the order of their first entries in the tree, so a slot holds its
    /// own entry number up to the first zone with two entries (a cap across the antimeridian),
    /// and the leaves' frames say so: a query answers those lanes without reading the slots.
    @Test(arguments: [4, 5] as [UInt64])
    func zonesAreNumberedInTreeOrderAndTheFramesSaySo(seed: UInt64) throws {
        // Circles only, away from the antimeridian: every lane of every leaf.
        let plain = Self.zones(seed: seed, circles: 1000, polygons: 0).filter { $0.0.shape.center.longitude < 170 }
        let bytes = Self.build(plain)
        let file = Aligned(bytes)
        let set = try ZoneSet(file.raw)
        #expect(set.entryCount == plain.count)
        #expect(set.view.slotsAreEntries, "seed \(seed)")
        let slots = Self.section(bytes, .slots)
        for e in 0 ..< set.entryCount {
            #expect(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: slots + 4 * e, as: UInt32.self) } == UInt32(e), "seed \(seed) entry \(e)")
        }
        // With crossings (every 50th circle) and polygons: the lanes marked are exactly those
        // whose slot is their entry number, and there are such lanes.
        let mixed = Self.build(Self.zones(seed: seed, circles: 1000, polygons: 30))
        let mixedFile = Aligned(mixed)
        let m = try ZoneSet(mixedFile.raw)
        #expect(m.entryCount > m.count && !m.view.slotsAreEntries, "seed \(seed)")
        let frames = Self.section(mixed, .frames), mSlots = Self.section(mixed, .slots)
        var marked = 0
        for e in 0 ..< m.entryCount {
            let identity = mixed.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: frames + 32 * (e / 16) + 28, as: UInt32.self) } >> UInt32(e % 16) & 1
            let slot = mixed.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: mSlots + 4 * e, as: UInt32.self) }
            #expect((identity == 1) == (slot == UInt32(e)), "seed \(seed) entry \(e): identity \(identity), slot \(slot)")
            marked += Int(identity)
        }
        #expect(marked > 0, "seed \(seed): no lane answered from its frame")
        withExtendedLifetime((file, mixedFile)) {}
    }

    /// Every byte of a small file, changed, is refused (the checksum covers the whole file);
    /// every shorter length is refused; nothing crashes.
    @Test func everyCorruptionAndTruncationIsRefused() throws {
        let bytes = Self.build(Self.zones(seed: 9, circles: 40, polygons: 4))
        let intact = Aligned(bytes)
        #expect(throws: Never.self) { _ = try ZoneSet(intact.raw) }
        var rng = SplitMix64(seed: 77)
        for i in 0 ..< bytes.count {
            var bad = bytes
            bad[i] ^= UInt8(1 << rng.int(0 ... 7))
            let file = Aligned(bad)
            do {
                _ = try ZoneSet(file.raw)
                Issue.record("byte \(i) changed was accepted")
            } catch {
                // Refused: corrupt, or (a changed version byte) older or newer.
                _ = error
            }
        }
        for n in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 300)) {
            let file = Aligned(Array(bytes[0 ..< n]))
            #expect(throws: ZoneSetError.self, "length \(n)") { _ = try ZoneSet(file.raw) }
        }
    }

    /// Damage with a correct checksum (a writer's bug, or a crafted file): the structure checks
    /// refuse it instead of reading outside the file.
    @Test func structuralDamageWithAValidChecksumIsRefused() throws {
        let bytes = Self.build(Self.zones(seed: 11, circles: 100, polygons: 10))
        func section(_ s: ZoneSetFormat.Section) -> Int { Self.section(bytes, s) }
        let leafCount = bytes.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 88, as: UInt32.self)) }
        func resealed(_ change: (inout [UInt8]) -> Void) -> [UInt8] { Self.resealed(bytes, change) }
        let cases: [(String, (inout [UInt8]) -> Void)] = [
            ("slot beyond the zones", { $0[section(.slots) + 2] = 0x7F }),
            ("string beyond the table", { $0[section(.zones) + 8 + 3] = 0x7F }),
            ("polygon beyond the table", { let at = section(.zones) + 80 * Self.firstZone(ofKind: 1, bytes) + 4; $0[at + 3] = 0x7F }),
            // A lane its frame marks as its own zone number, with another (valid) zone in its slot.
            ("identity lane with another slot", { let e = Self.firstIdentityEntry(bytes); $0[section(.slots) + 4 * e] ^= 1 }),
            ("polygon block with more nodes than bytes", { $0[section(.polygonData) + 12] = 0x7F }),
            ("zone count larger", { $0[40] &+= 1 }),
            ("levels", { $0[52] &+= 1 }),
            ("section offset misaligned", { $0[128 + 16 * 3] &+= 8 }),
            ("circle radius negative", { $0[section(.zones) + 48 + 7] |= 0x80 }),
            // Leaf frames: decidable lanes past the entries (bits 16–31 at least), a NaN band.
            ("frame decides an empty lane", { b in let at = section(.frames) + 32 * (leafCount - 1) + 24; for k in 0 ..< 4 { b[at + k] = 0xFF } }),
            ("frame band not a number", { b in let at = section(.frames) + 20; for k in 0 ..< 4 { b[at + k] = 0xFF } }),
        ]
        for (what, change) in cases {
            let file = Aligned(resealed(change))
            #expect(throws: ZoneSetError.self, "\(what)") { _ = try ZoneSet(file.raw) }
        }
        // Every geometry entry naming a polygon that does not exist.
        let g = section(.geometry)
        let file = Aligned(resealed { b in withUnsafeBytes(of: (-1e9).bitPattern.littleEndian) { for k in 0 ..< 8 { b[g + 24 + k] = $0[k] } } })
        #expect(throws: ZoneSetError.self) { _ = try ZoneSet(file.raw) }
    }

    /// A header that says zero inner levels over a tree that needs one, with its (empty) level
    /// section placed at the very end of the file and the checksum made right: refused, without
    /// reading the first level's start past the end of the mapping.
    @Test func zeroLevelsWithAValidChecksumIsRefusedWithoutReadingPastTheFile() throws {
        var b = Self.build(Self.zones(seed: 12, circles: 100, polygons: 10))
        let leaves = b.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 88, as: UInt32.self)) }
        #expect(leaves > 1 && b.count % 64 == 0)
        func put<T: FixedWidthInteger>(_ v: T, _ at: Int) {
            withUnsafeBytes(of: v.littleEndian) { for k in 0 ..< MemoryLayout<T>.size { b[at + k] = $0[k] } }
        }
        put(UInt32(0), 52)
        let s = 128 + 16 * ZoneSetFormat.Section.levelStarts.rawValue
        put(UInt64(b.count), s)
        put(UInt64(0), s + 8)
        put(UInt64(0), 16)
        put(b.withUnsafeBytes { ZoneSetFormat.checksum(of: $0) }, 16)
        let file = Aligned(b)
        #expect(throws: ZoneSetError.self) { _ = try ZoneSet(file.raw) }
    }

    @Test func versionsOlderAreRebuiltNewerRefused() throws {
        let bytes = Self.build(Self.zones(seed: 3, circles: 10, polygons: 1))
        // Version 1 (16-byte leaf frames, before the leaf decision) and version 2 (no grid) are
        // rebuilt, not read.
        for (v, expected) in [(UInt32(0), ZoneSetError.olderVersion(0)), (1, .olderVersion(1)), (2, .olderVersion(2)),
                              (ZoneSetFormat.version + 1, .newerVersion(ZoneSetFormat.version + 1))] {
            var b = bytes
            withUnsafeBytes(of: v.littleEndian) { for k in 0 ..< 4 { b[8 + k] = $0[k] } }
            let file = Aligned(b)
            #expect(throws: expected) { _ = try ZoneSet(file.raw) }
        }
        #expect(ZoneSetError.newerVersion(2).description.contains("newer fencepost"))
        #expect(!ZoneSetError.newerVersion(2).needsRebuild)
        #expect(ZoneSetError.olderVersion(0).needsRebuild)
    }

    /// The header says little-endian everywhere: a set built here has its counts where a board
    /// of the other architecture reads them (spot checks of the raw bytes).
    @Test func headerIsLittleEndian() throws {
        let bytes = Self.build(Self.zones(seed: 4, circles: 300, polygons: 0), hash: 0x0102_0304_0506_0708)
        #expect(Array(bytes[0 ..< 8]) == Array("FPZONES".utf8) + [0])
        #expect(Array(bytes[8 ..< 12]) == [UInt8(ZoneSetFormat.version), 0, 0, 0])
        #expect(Array(bytes[32 ..< 40]) == [8, 7, 6, 5, 4, 3, 2, 1])
        #expect(Int(bytes[40]) | Int(bytes[41]) << 8 == 300)
        #expect(bytes.count % 64 == 0)
    }
}

/// The content hash taken piece by piece (as the build reads the GeoJSON) is the one-pass hash.
@Suite struct ZoneSetContentHashTests {
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func piecesGiveTheOnePassHash(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let bytes = (0 ..< rng.int(0 ... 5000)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        bytes.withUnsafeBytes { all in
            var hasher = ZoneSetFormat.ContentHasher()
            var at = 0
            while at < all.count {
                let end = min(all.count, at + rng.int(1 ... 40))
                hasher.add(UnsafeRawBufferPointer(rebasing: all[at ..< end]))
                at = end
            }
            #expect(hasher.bytesHashed == all.count, "seed \(seed)")
            #expect(hasher.finish() == ZoneSetFormat.contentHash(all), "seed \(seed), \(all.count) bytes")
        }
    }

    /// The checksum pass tells its caller of every byte after the checksum field, in order, once.
    @Test func checksumReleasesEveryByteOnce() {
        let size = 3 * ZoneSetFormat.releaseChunk + 1234
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 64)
        defer { bytes.deallocate() }
        for i in 0 ..< size { bytes[i] = UInt8(truncatingIfNeeded: i &* 31) }
        var next = 24
        let c = ZoneSetFormat.checksum(of: UnsafeRawBufferPointer(bytes)) { offset, length in
            #expect(offset == next)
            next = offset + length
        }
        #expect(next == size)
        #expect(c == ZoneSetFormat.checksum(of: UnsafeRawBufferPointer(bytes)))
    }
}
