@testable import Geofencing
import Position
import SeededRandom
import Testing

/// The zone-set check of every reference run in slices (the agent's swap after a SIGHUP rebuild)
/// finds exactly what the whole check at open finds, whatever the slice, and always ends.
@Suite struct ZoneSetStructureCheckTests {
    typealias Aligned = ZoneSetTests.Aligned

    /// Runs the deferred check in slices of `budget`; the error it throws, or nil when it passed.
    /// Also checks that the released ranges stay inside the file.
    static func sliced(_ file: Aligned, budget: Int) throws -> ZoneSetError? {
        let set = try ZoneSet(file.raw, deferStructureCheck: true)
        var check = try #require(set.deferredCheck)
        var calls = 0
        do {
            while try !check.advance(budget: budget, release: { offset, length in
                #expect(offset >= 0 && length >= 0 && offset + length <= file.raw.count, "released \(offset) + \(length)")
            }) {
                calls += 1
                if calls > 10_000_000 { Issue.record("the check does not end with budget \(budget)"); return nil }
            }
        } catch {
            return error
        }
        #expect(check.isDone)
        return nil
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func anIntactSetPassesInEverySlicing(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        for n in [0, 1, 16, 17, 500] {
            let bytes = ZoneSetTests.build(ZoneSetTests.zones(seed: seed, circles: n, polygons: n / 50))
            let file = Aligned(bytes)
            #expect(try ZoneSet(file.raw).deferredCheck == nil, "a set checked at open keeps a check to run")
            for budget in [1, 2, rng.int(3 ... 100), 1 << 16, Int.max] {
                #expect(try Self.sliced(file, budget: budget) == nil, "seed \(seed), \(n) zones, budget \(budget)")
            }
        }
    }

    /// A slice's work is bounded by bytes, not by the number of polygons: twenty polygons of 4,000
    /// vertices take a slice each at a budget of 1,000 items (each block is over 64,000 bytes), where
    /// a count of polygons would check all twenty in one loop turn.
    @Test func largePolygonsAreCheckedAFewPerSlice() throws {
        var zones: [(Region, ZoneContent)] = []
        for k in 0 ..< 20 {
            let c = Coordinate(latitude: Double(k) - 10, longitude: 8)
            let ring = (0 ..< 4000).map { i in destination(c, bearing: Double(i) * 360 / 4000, distance: 20_000) }
            zones.append((Region(identifier: "big\(k)", shape: .polygon(try PolygonRegion(vertices: ring)), dwell: nil, cooldown: 0), ZoneContent(title: "big\(k)")))
        }
        let file = Aligned(ZoneSetTests.build(zones))
        var check = try #require(try ZoneSet(file.raw, deferStructureCheck: true).deferredCheck)
        var polygonSlices = 0
        while true {
            let inPolygons = check.phase == .polygons
            let done = try check.advance(budget: 1000, release: { _, _ in })
            if inPolygons { polygonSlices += 1 }
            if done { break }
        }
        #expect(polygonSlices >= 19, "\(polygonSlices) slices checked twenty polygons of 4,000 vertices")
    }

    /// Damage behind a valid checksum: the deferred open accepts the header, and the sliced check
    /// throws the error the whole check throws at open.
    @Test func damageIsFoundTheSameWayInSlices() throws {
        let bytes = ZoneSetTests.build(ZoneSetTests.zones(seed: 11, circles: 300, polygons: 10))
        let s = { (x: ZoneSetFormat.Section) in ZoneSetTests.section(bytes, x) }
        let cases: [(String, (inout [UInt8]) -> Void)] = [
            ("slot beyond the zones", { $0[s(.slots) + 4 * 250 + 2] = 0x7F }),
            ("string beyond the table", { $0[s(.zones) + 80 * 299 + 8 + 3] = 0x7F }),
            ("polygon beyond the table", { $0[s(.zones) + 80 * ZoneSetTests.firstZone(ofKind: 1, bytes) + 4 + 3] = 0x7F }),
            ("identity lane with another slot", { $0[s(.slots) + 4 * ZoneSetTests.firstIdentityEntry(bytes)] ^= 1 }),
            ("polygon block with more nodes than bytes", { $0[s(.polygonData) + 12] = 0x7F }),
            ("circle radius negative", { $0[s(.zones) + 80 * 123 + 48 + 7] |= 0x80 }),
            ("geometry names no polygon", { b in withUnsafeBytes(of: (-1e9).bitPattern.littleEndian) { for k in 0 ..< 8 { b[s(.geometry) + 32 * 77 + 24 + k] = $0[k] } } }),
        ]
        var rng = SplitMix64(seed: 5)
        for (what, change) in cases {
            let file = Aligned(ZoneSetTests.resealed(bytes, change))
            var whole: ZoneSetError?
            do { _ = try ZoneSet(file.raw) } catch { whole = error }
            #expect(whole != nil, "\(what): not refused at open")
            for budget in [1, rng.int(2 ... 50), 1 << 17] {
                let sliced = try Self.sliced(file, budget: budget)
                #expect(sliced == whole, "\(what), budget \(budget): \(String(describing: sliced)) against \(String(describing: whole))")
            }
        }
    }
}
