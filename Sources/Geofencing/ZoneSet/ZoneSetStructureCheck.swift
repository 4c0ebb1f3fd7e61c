// The O(zones) part of opening a zone set: every entry's zone number and geometry, every
// polygon's rings, every zone record's strings and numbers. `ZoneSet.init` runs it to its end;
// the agent's swap after a SIGHUP rebuild opens the new set with the check deferred and runs it
// in slices over several loop turns (1M zones: ~20 ms in one piece here, several times that on a
// board's core), swapping the set in only once it has passed. A set is not queried before.
import Position

/// A resumable check of a zone set's references (see the top of the file).
public struct ZoneSetStructureCheck: @unchecked Sendable {
    enum Phase { case entries, polygons, zones, done }

    let bytes: UnsafeRawBufferPointer
    let slotsBase: Int, framesBase: Int, geometryBase: Int, polygonsBase: Int, polygonDataBase: Int, zonesBase: Int, lookupBase: Int
    let entryCount: Int, polygonCount: Int, count: Int, polygonDataBytes: Int, stringBytes: Int
    private(set) var phase = Phase.entries
    /// The next item of the phase.
    private var next = 0

    init(bytes: UnsafeRawBufferPointer, slotsBase: Int, framesBase: Int, geometryBase: Int, polygonsBase: Int, polygonDataBase: Int,
         zonesBase: Int, lookupBase: Int, entryCount: Int, polygonCount: Int, count: Int, polygonDataBytes: Int, stringBytes: Int) {
        self.bytes = bytes
        self.slotsBase = slotsBase; self.framesBase = framesBase; self.geometryBase = geometryBase; self.polygonsBase = polygonsBase
        self.polygonDataBase = polygonDataBase; self.zonesBase = zonesBase; self.lookupBase = lookupBase
        self.entryCount = entryCount; self.polygonCount = polygonCount; self.count = count
        self.polygonDataBytes = polygonDataBytes; self.stringBytes = stringBytes
    }

    /// Items between two calls of `release` (pages the check is done with).
    static let chunk = 1 << 16

    /// Whether every item has been checked.
    public var isDone: Bool { phase == .done }

    /// Checks up to `budget` more items (entries, then polygons, then zones); returns true once
    /// all are checked. `release` gets the byte ranges the check is done with.
    /// - Throws: ``ZoneSetError/corrupt(_:)`` naming the first bad item; the check stops there.
    /// - Complexity: O(budget), plus at most one polygon's block beyond it.
    public mutating func advance(budget: Int, release: (_ offset: Int, _ length: Int) -> Void) throws(ZoneSetError) -> Bool {
        var left = budget
        while left > 0 {
            switch phase {
            case .entries:
                let end = min(entryCount, next + min(left, Self.chunk - next % Self.chunk))
                try checkEntries(next ..< end)
                left -= end - next
                next = end
                if next % Self.chunk == 0 || next == entryCount {
                    let from = (next - 1) / Self.chunk * Self.chunk
                    if next > 0 {
                        release(slotsBase + 4 * from, 4 * (next - from))
                        release(geometryBase + 32 * from, 32 * (next - from))
                    }
                }
                if next == entryCount { phase = .polygons; next = 0 }
            case .polygons:
                // A polygon costs its block's bytes / 64 items (its rings, parts, nodes and edge
                // references are read), so a slice holds few large polygons or many small ones.
                while next < polygonCount && left > 0 {
                    left -= max(1, try checkPolygon(next) / 64)
                    next += 1
                }
                if next == polygonCount { phase = .zones; next = 0 }
            case .zones:
                let end = min(count, next + min(left, Self.chunk - next % Self.chunk))
                try checkZones(next ..< end)
                left -= max(1, end - next)
                next = end
                if next > 0 && (next % Self.chunk == 0 || next == count) {
                    let from = (next - 1) / Self.chunk * Self.chunk
                    release(zonesBase + ZoneSetFormat.zoneRecordSize * from, ZoneSetFormat.zoneRecordSize * (next - from))
                    release(lookupBase + ZoneSetFormat.lookupRecordSize * from, ZoneSetFormat.lookupRecordSize * (next - from))
                }
                if next == count { phase = .done }
            case .done:
                return true
            }
        }
        return phase == .done
    }

    private func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
    private func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }

    /// Every entry names a zone of the set; a polygon entry's geometry names a polygon.
    private func checkEntries(_ range: Range<Int>) throws(ZoneSetError) {
        for e in range {
            let raw = u32(slotsBase + 4 * e), slot = raw & ~RegionIndex.multiple
            guard Int(slot) < count else { throw .corrupt("entry \(e) names zone \(slot)") }
            // A lane its leaf's frame marks as its own entry number is answered without the slot.
            let identity = u32(framesBase + MemoryLayout<RegionIndex.LeafFrame>.stride * (e >> 4) + 28)
            if identity >> UInt32(e & 15) & 1 != 0, raw != UInt32(e) {
                throw .corrupt("entry \(e): its leaf's frame says zone \(e), its slot \(raw)")
            }
            let r = Double(bitPattern: u64(geometryBase + 32 * e + 24))
            if !(r >= 0) {
                guard r.isFinite, r == r.rounded(), -r - 1 < Double(polygonCount) else { throw .corrupt("entry \(e) has geometry \(r)") }
            }
        }
    }

    /// Polygon `p`'s block lies in the polygon data, aligned, and is one every query can read
    /// (``PolygonView/validate(_:length:)``). Returns the block's length in bytes.
    private func checkPolygon(_ p: Int) throws(ZoneSetError) -> Int {
        let at = polygonsBase + ZoneSetFormat.polygonRecordSize * p
        let offset = u64(at), length = u64(at + 8)
        guard offset <= UInt64(polygonDataBytes), length <= UInt64(polygonDataBytes) - offset, offset % 8 == 0,
              PolygonView.validate(bytes.baseAddress! + polygonDataBase + Int(offset), length: Int(length))
        else { throw .corrupt("polygon \(p)") }
        return Int(length)
    }

    /// Every zone record: its kind, its strings inside the string section, a non-empty id, a
    /// usable circle or an existing polygon, and its lookup entry.
    private func checkZones(_ range: Range<Int>) throws(ZoneSetError) {
        for z in range {
            let at = zonesBase + ZoneSetFormat.zoneRecordSize * z
            let kind = bytes[at]
            guard kind <= 1 else { throw .corrupt("zone \(z) kind \(kind)") }
            for f in [ZoneSetFormat.ZoneField.idOffset, ZoneSetFormat.ZoneField.titleOffset, ZoneSetFormat.ZoneField.soundOffset] {
                let o = UInt64(u32(at + f)), l = UInt64(u32(at + f + 4))
                guard o + l <= UInt64(stringBytes) else { throw .corrupt("zone \(z) strings") }
            }
            guard u32(at + ZoneSetFormat.ZoneField.idLength) > 0 else { throw .corrupt("zone \(z) has an empty id") }
            let lat = Double(bitPattern: u64(at + 32)), lon = Double(bitPattern: u64(at + 40)), radius = Double(bitPattern: u64(at + 48))
            if kind == 0 {
                // CircularRegion's own checks, without its trigonometry (a million zones).
                guard lat.isFinite, lon.isFinite, abs(lat) <= 90, abs(lon) <= 180, radius.isFinite, radius > 0, radius < 10_000_000 else {
                    throw .corrupt("zone \(z) circle")
                }
            } else {
                guard Int(u32(at + 4)) < polygonCount else { throw .corrupt("zone \(z) polygon") }
            }
            let lz = Int(u32(lookupBase + ZoneSetFormat.lookupRecordSize * z + 8))
            guard lz < count else { throw .corrupt("lookup entry \(z)") }
        }
    }
}
