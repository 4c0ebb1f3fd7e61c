// The zone-set file (design §8 "Zone sets"): a million zones as data, mapped read-only, instead of
// a million requests held in memory.
//
// Byte order: every field is little-endian, and the sections are laid out so that a little-endian
// host (x86_64, aarch64, armv7 as Raspberry Pi OS runs them) uses them in place; a big-endian host
// refuses the file (`ZoneSetError.bigEndianHost`) rather than reading it wrong.
//
// Header (512 bytes)
//   0   8  magic "FPZONES\0"
//   8   4  format version (``ZoneSetFormat/version``); older → rebuild, newer → refused
//   12  4  header size (512)
//   16  8  checksum: ``ZoneSetFormat/checksum`` of the whole file with these 8 bytes zero
//   24  8  file size
//   32  8  source hash (the GeoJSON's bytes, ``ZoneSetFormat/contentHash``)
//   40  4  zones            44  4  polygons        48  4  index entries   52  4  inner levels
//   56  32 bounds of the zones' boxes: min lat, max lat, min lon, max lon (f64)
//   88  4  leaves           92  4  inner nodes     96  8  reserved (0)
//   104 4  string bytes     108 4  grid words      112 8  polygon data bytes   120 8 reserved (0)
//   128 12 × (offset u64, length u64): the sections below, each at a multiple of 64
//
// Sections
//   nodes        inner nodes of the packed R-tree, 256 B (4 × 16 f32: min lat, max lat, min lon, max lon)
//   levelStarts  u32 per inner level: its first node
//   leaves       128 B per leaf (4 × 16 i16 in the leaf's frame)
//   frames       32 B per leaf: 4 f32 (min lat, min lon, scale lat, scale lon), tolerance (f32),
//                band (f32), decidable lanes (u32), identity lanes (u32: bit i set when lane i's
//                slot is its entry number; 0 in files written before, which read the same); see
//                LeafDecision.swift. Version 2 (version 1 had the 16-byte frames alone)
//   slots        u32 per entry (leaves × 16): zone number, bit 31 = the zone has two entries.
//                Zones are numbered in the order of their first entries, so slot k is k for
//                every entry before the first zone with two
//   geometry     32 B per entry: centre unit vector (3 f64), squared chord of the radius, or
//                box centre and −(polygon + 1) for a polygon
//   polygons     16 B: offset of the polygon's block in polygonData (u64, a multiple of 8), its
//                length (u64)
//   polygonData  the polygons' blocks (geometry and edge index, PolygonGeometry.swift), each
//                checked when the set is opened. Version 4 (versions 1–3 held great-circle
//                polygons without an index: rebuilt)
//   zones        80 B per zone (``ZoneSetFormat/ZoneField``)
//   strings      UTF-8 bytes of ids, titles and sounds
//   lookup       16 B per zone: hash of the id (u64), zone (u32), 0 (u32); sorted by hash, zone
//   grid         u32 words: where a query enters the tree (TreeGrid.swift); none for a tree of
//                fewer than 3 levels. Version 3 (versions 1 and 2 entered every query at the root)
//
// The index sections are exactly `RegionIndex`'s arrays: the mapped set and the in-memory index
// answer queries with one search (IndexView.swift).

/// Constants and functions of the zone-set file format.
public enum ZoneSetFormat {
    /// The version this build writes and reads.
    public static let version: UInt32 = 4
    static let magic: [UInt8] = Array("FPZONES".utf8) + [0]
    static let headerSize = 512
    static let sectionAlignment = 64
    static let zoneRecordSize = 80
    static let polygonRecordSize = 16
    static let lookupRecordSize = 16

    /// The sections, in file order.
    enum Section: Int, CaseIterable {
        case nodes, levelStarts, leaves, frames, slots, geometry, polygons, polygonData, zones, strings, lookup, grid
    }

    /// Byte offsets of a zone record's fields.
    enum ZoneField {
        static let kind = 0          // u8: 0 circle, 1 polygon
        static let flags = 1         // u8: ZoneFlags
        static let level = 2         // u8: interruption level code
        static let polygon = 4       // u32 (polygon number; 0xFFFF_FFFF for a circle)
        static let idOffset = 8, idLength = 12
        static let titleOffset = 16, titleLength = 20
        static let soundOffset = 24, soundLength = 28
        static let latitude = 32, longitude = 40, radius = 48   // f64: circle centre and radius; polygon: box centre, 0
        static let dwell = 56, cooldown = 64                     // f64 seconds
        static let fingerprint = 72                              // u64
    }

    /// Bits of a zone record's flags.
    enum ZoneFlags {
        static let notifyOnEntry: UInt8 = 1, notifyOnExit: UInt8 = 2, hasDwell: UInt8 = 4, repeats: UInt8 = 8
        /// Its entries and exits are also reported (the fleet link's transition events).
        static let report: UInt8 = 16
    }

    /// The 64-bit checksum of a byte stream read as little-endian 8-byte words (a shorter last
    /// word is padded with zeros): each word is xor-ed in, then the state goes through a bijective
    /// mix, so any change confined to one word always changes the result.
    struct Checksum {
        private(set) var state: UInt64 = 0x6A09_E667_F3BC_C908
        private var carry: UInt64 = 0
        private var carried = 0

        mutating func add(word w: UInt64) {
            var h = (state ^ w) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 29
            h = h &* 0xBF58_476D_1CE4_E5B9
            state = h ^ (h >> 32)
        }

        mutating func add(_ bytes: UnsafeRawBufferPointer) {
            var i = 0
            let n = bytes.count
            while carried != 0 && i < n {
                carry |= UInt64(bytes[i]) << (8 * UInt64(carried))
                carried += 1; i += 1
                if carried == 8 { add(word: carry); carry = 0; carried = 0 }
            }
            while i + 8 <= n {
                add(word: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
                i += 8
            }
            while i < n {
                carry |= UInt64(bytes[i]) << (8 * UInt64(carried))
                carried += 1; i += 1
            }
        }

        /// The result (pads the last word).
        func finish() -> UInt64 {
            var c = self
            if c.carried > 0 { c.add(word: c.carry) }
            return c.state
        }
    }

    /// The checksum of `file` as stored in its header: the whole file with the checksum field zero.
    /// `release` is told of each 4 MiB the pass is done with (offset, length).
    /// - Complexity: O(n); ~0.2 s for 150 MB on a Pi 3–class core.
    static func checksum(of file: UnsafeRawBufferPointer, release: (Int, Int) -> Void = { _, _ in }) -> UInt64 {
        var c = Checksum()
        c.add(UnsafeRawBufferPointer(rebasing: file[0 ..< 16]))
        c.add(word: 0)
        var at = 24
        while at < file.count {
            let end = Swift.min(file.count, (at / releaseChunk + 1) * releaseChunk)
            c.add(UnsafeRawBufferPointer(rebasing: file[at ..< end]))
            release(at, end - at)
            at = end
        }
        return c.finish()
    }

    /// Bytes a pass over a mapped file reads before it tells the caller it may let them go.
    public static let releaseChunk = 4 << 20

    /// A hash of a file's content: the key of the zone set built from it (the GeoJSON's bytes).
    /// - Complexity: O(n).
    public static func contentHash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var c = ContentHasher()
        c.add(bytes)
        return c.finish()
    }

    /// ``contentHash(_:)`` fed in pieces of any size (a reader that streams the file hashes
    /// what it has read, and lets go of it).
    public struct ContentHasher {
        private var checksum = Checksum()
        private var count = 0
        public init() {}
        /// Appends the next `bytes` of the file.
        public mutating func add(_ bytes: UnsafeRawBufferPointer) {
            checksum.add(bytes)
            count += bytes.count
        }
        /// Bytes hashed so far.
        public var bytesHashed: Int { count }
        /// The hash of everything added: ``contentHash(_:)`` of those bytes.
        public func finish() -> UInt64 {
            var c = checksum
            c.add(word: UInt64(count))
            return c.finish()
        }
    }

    /// The hash of a zone id in the lookup section (FNV-1a, 64 bit).
    public static func idHash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }

    /// `n` rounded up to the section alignment.
    static func aligned(_ n: Int) -> Int { (n + sectionAlignment - 1) / sectionAlignment * sectionAlignment }
}

/// Why a zone-set file cannot be used.
public enum ZoneSetError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not a zone set, cut short, or its checksum or structure is wrong: rebuild it.
    case corrupt(String)
    /// Written by an older format version: rebuild it.
    case olderVersion(UInt32)
    /// Written by a newer fencepost: refused.
    case newerVersion(UInt32)
    /// This host is big-endian; the format is little-endian.
    case bigEndianHost

    /// Whether building the set again from its source is the remedy.
    public var needsRebuild: Bool {
        switch self {
        case .corrupt, .olderVersion: true
        case .newerVersion, .bigEndianHost: false
        }
    }

    public var description: String {
        switch self {
        case .corrupt(let why): "not a usable zone set (\(why)); it will be rebuilt from its GeoJSON"
        case .olderVersion(let v): "zone set of format version \(v), older than this fencepost's \(ZoneSetFormat.version); it will be rebuilt from its GeoJSON"
        case .newerVersion(let v): "zone set of format version \(v) was written by a newer fencepost (this one reads version \(ZoneSetFormat.version)); refusing it: build it with this version (fencepost zones build) or upgrade"
        case .bigEndianHost: "zone sets are little-endian and this host is big-endian"
        }
    }
}
