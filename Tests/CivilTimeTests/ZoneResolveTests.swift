import Testing
@testable import CivilTime
@testable import FencepostLinux
import SeededRandom

@Suite("Zone civil time resolution and transitions")
struct ZoneResolveTests {
    let zones = SystemZones(directory: ZoneTestFiles.directory)
    static func at(_ y: Int64, _ m: Int, _ d: Int, _ h: Int = 0, _ mi: Int = 0, _ s: Int = 0) -> Int64 {
        zoneTestSeconds(y, m, d, h, mi, s)
    }

    @Test func apiaSkipsAWholeDay() throws {
        // Samoa moved across the date line: 2011-12-29 24:00 (−10) became 2011-12-31 00:00 (+14).
        let z = try zones.rules(named: "Pacific/Apia")
        let t = Self.at(2011, 12, 30, 10, 0, 0)
        #expect(z.nextTransition(after: t - 3600) == t)
        for local in [Self.at(2011, 12, 30), Self.at(2011, 12, 30, 12), Self.at(2011, 12, 30, 23, 59, 59)] {
            #expect(z.resolve(localSeconds: local) == .skipped(transition: t, gapSeconds: 86400))
        }
        #expect(z.resolve(localSeconds: Self.at(2011, 12, 29, 23, 59, 59)) == .unique(t - 1))
        #expect(z.resolve(localSeconds: Self.at(2011, 12, 31)) == .unique(t))
    }

    @Test func newYorkLordHoweDublinFromFiles() throws {
        let ny = try zones.rules(named: "America/New_York")
        #expect(ny.resolve(localSeconds: Self.at(2024, 3, 10, 2, 30)) == .skipped(transition: Self.at(2024, 3, 10, 7), gapSeconds: 3600))
        #expect(ny.resolve(localSeconds: Self.at(2024, 11, 3, 1, 30))
                == .repeated(first: Self.at(2024, 11, 3, 5, 30), last: Self.at(2024, 11, 3, 6, 30)))
        // Lord Howe: 30-minute DST; the gap 02:00–02:30 local on 2024-10-06 (+10:30 → +11).
        let lh = try zones.rules(named: "Australia/Lord_Howe")
        #expect(lh.resolve(localSeconds: Self.at(2024, 10, 6, 2, 10))
                == .skipped(transition: Self.at(2024, 10, 5, 15, 30), gapSeconds: 1800))
        #expect(lh.resolve(localSeconds: Self.at(2024, 10, 6, 2, 30)) == .unique(Self.at(2024, 10, 5, 15, 30)))
        // Dublin's winter time is flagged DST (negative save), as in tzdata's main form.
        let dublin = try zones.rules(named: "Europe/Dublin")
        let winter = dublin.offset(at: WallInstant(secondsSinceEpoch: Self.at(2024, 1, 15)))
        let summer = dublin.offset(at: WallInstant(secondsSinceEpoch: Self.at(2024, 7, 15)))
        #expect(winter.utcOffsetSeconds == 0 && summer.utcOffsetSeconds == 3600 && summer.abbreviation == "IST")
        #expect(winter.isDST != summer.isDST)
    }

    @Test func fixedOffsets() {
        let z = ZoneRules(fixedOffsetSeconds: 19800, identifier: "India")
        #expect(z.identifier == "India")
        #expect(z.offset(at: WallInstant(secondsSinceEpoch: 0)) == ZoneOffset(utcOffsetSeconds: 19800, isDST: false, abbreviation: "+0530"))
        for t: Int64 in [.min, -1, 0, .max] { #expect(z.utcOffset(atSecondsSinceEpoch: t) == 19800) }
        #expect(z.nextTransition(after: 0) == nil && z.previousTransition(before: 0) == nil)
        #expect(z.resolve(localSeconds: 19800) == .unique(0))
        #expect(z.resolve(localSeconds: .min) == .unique(.min))          // clamped, no trap
        let abbreviations = [-12600: "-0330", 3600: "+01", 0: "+00", 45296: "+123456", -36000: "-10"]
        for (offset, abbreviation) in abbreviations {
            #expect(ZoneRules(fixedOffsetSeconds: offset, identifier: "x").offset(at: WallInstant(secondsSinceEpoch: 0)).abbreviation == abbreviation)
        }
        #expect(ZoneRules.utc.identifier == "UTC")
        #expect(ZoneRules.utc.offset(at: WallInstant(secondsSinceEpoch: 0)) == ZoneOffset(utcOffsetSeconds: 0, isDST: false, abbreviation: "UTC"))
    }

    @Test func extremeOffsetsAndTransitionsHoursApart() throws {
        // Offsets of ±25 h flipping every 3 hours: a civil time can occur many times.
        var w = ZoneTZifWriter()
        w.types = [.init(utoff: 0, idx: 0), .init(utoff: 89_999, idx: 0), .init(utoff: -89_999, idx: 0)]
        w.chars = Array("ABC\0".utf8)
        for k in 0..<40 {
            w.times.append(Int64(k) * 3 * 3600)
            w.indices.append(UInt8(1 + k % 2))
        }
        let z = try ZoneRules(tzif: w.bytes, identifier: "Flip")
        var seen = Set<String>()
        for L in stride(from: Int64(-30 * 3600), through: 150 * 3600, by: 617) {
            let r = z.resolve(localSeconds: L)
            #expect(r == ZoneGlibcOracleTests.bruteForceResolve(z, L), "L=\(L)")
            seen.insert("\(r)".prefix(6).description)
        }
        #expect(seen.count == 3, "\(seen)")   // unique, repeated and skipped all occur
    }

    /// nextTransition/previousTransition agree with offset(at:) everywhere, including at the
    /// seams between the table and the rule (1900, 2200, the last file transition).
    @Test func transitionsAreConsistentWithOffsets() throws {
        let seed = SplitMix64.zoneTestSeed(0x7A0E_2026_0007)
        var rng = SplitMix64(seed: seed)
        var zonesToCheck = try ZoneTestFiles.allDistinctZoneFiles().filter { _ in Int.random(in: 0..<4, using: &rng) == 0 }
            .map { try ZoneRules(tzif: ZoneTestFiles.bytes($0.path), identifier: $0.name) }
        zonesToCheck += try ["EST5EDT,M3.2.0,M11.1.0", "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", "IST-1GMT0,M10.5.0,M3.5.0/1",
                             "EST5EDT4,0/0,J365/25"].map { try ZoneRules(posixTZ: $0) }
        func type(_ z: ZoneRules, _ t: Int64) -> ZoneOffset { z.offset(at: WallInstant(secondsSinceEpoch: t)) }
        var failures: [String] = []
        for z in zonesToCheck {
            var probes: [Int64] = (0..<100).map { _ in Int64.random(in: Self.at(1800, 1, 1)..<Self.at(2400, 1, 1), using: &rng) }
            for seam in [ZoneTestFiles.y1900, ZoneTestFiles.y2200, z._times.last ?? 0] { probes += (-2...2).map { seam + $0 } }
            for t in probes {
                if let n = z.nextTransition(after: t) {
                    if !(n > t && type(z, n - 1) == type(z, t) && type(z, n) != type(z, n - 1)) {
                        failures.append("\(z.identifier): next(after: \(t)) = \(n)")
                    }
                    if z.previousTransition(before: n + 1) != n { failures.append("\(z.identifier): previous(before: \(n + 1)) != \(n)") }
                } else if type(z, t) != type(z, Self.at(9999, 1, 1)) {
                    failures.append("\(z.identifier): no transition after \(t) but the offset changes")
                }
                if let p = z.previousTransition(before: t) {
                    if !(p < t && type(z, p) == type(z, t - 1) && type(z, p - 1) != type(z, p)) {
                        failures.append("\(z.identifier): previous(before: \(t)) = \(p)")
                    }
                    if z.nextTransition(after: p - 1) != p { failures.append("\(z.identifier): next(after: \(p - 1)) != \(p)") }
                }
            }
        }
        #expect(failures.isEmpty, "seed \(seed):\n\(failures.prefix(20).joined(separator: "\n"))")
    }
}
