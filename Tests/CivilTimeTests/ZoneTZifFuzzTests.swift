import Testing
@testable import CivilTime
import SeededRandom

/// Damaged input must give a ``ZoneError`` or valid rules, never a trap. A trap ends the test
/// process, so the seed is printed before the run; replay with `ZONE_TEST_SEED=<seed>`.
@Suite("Zone TZif damaged input")
struct ZoneTZifFuzzTests {
    static let files = ZoneTestFiles.allDistinctZoneFiles()

    /// Uses rules loaded from damaged bytes the way the calendar would.
    static func exercise(_ z: ZoneRules, _ rng: inout SplitMix64) {
        for _ in 0..<8 {
            let t = Int64.random(in: ZoneTestFiles.y1900...ZoneTestFiles.y2200 * 2, using: &rng)
            _ = z.utcOffset(atSecondsSinceEpoch: t)
            _ = z.offset(at: WallInstant(secondsSinceEpoch: t))
            _ = z.resolve(localSeconds: t)
            if let n = z.nextTransition(after: t) { #expect(n > t) }
            if let p = z.previousTransition(before: t) { #expect(p < t) }
        }
        for t: Int64 in [.min, .max] {
            _ = z.utcOffset(atSecondsSinceEpoch: t)
            _ = z.resolve(localSeconds: t)
            _ = z.nextTransition(after: t)
            _ = z.previousTransition(before: t)
        }
    }

    @Test("every strict prefix of every zone file is .truncated at its length")
    func truncatedPrefixes() {
        let seed = SplitMix64.zoneTestSeed(0x7A0E_2026_0004)
        print("ZoneTZifFuzzTests.truncatedPrefixes seed \(seed)")
        var rng = SplitMix64(seed: seed)
        var failures: [String] = []
        // All prefixes of a few files of each kind, sampled prefixes of every file.
        let full: Set<String> = ["America/New_York", "Europe/Dublin", "Pacific/Apia", "Factory", "right/Europe/London", "Asia/Gaza"]
        for (name, path) in Self.files {
            let bytes = ZoneTestFiles.bytes(path)
            var lengths: [Int]
            if full.contains(name) {
                lengths = Array(0..<bytes.count)
            } else {
                lengths = Array(0..<min(50, bytes.count)) + (max(0, bytes.count - 40)..<bytes.count)
                for _ in 0..<40 { lengths.append(Int.random(in: 0..<bytes.count, using: &rng)) }
            }
            for n in lengths {
                do {
                    _ = try ZoneRules(tzif: Array(bytes[..<n]), identifier: name)
                    failures.append("\(name): prefix \(n) of \(bytes.count) loaded")
                } catch {
                    guard case .truncated(let zone, _, let at) = error, zone == name, at == n else {
                        failures.append("\(name): prefix \(n): \(error)")
                        continue
                    }
                }
            }
        }
        #expect(failures.isEmpty, "seed \(seed):\n\(failures.prefix(20).joined(separator: "\n"))")
    }

    @Test("seeded byte damage gives an error or usable rules")
    func byteDamage() {
        let seed = SplitMix64.zoneTestSeed(0x7A0E_2026_0005)
        print("ZoneTZifFuzzTests.byteDamage seed \(seed)")
        var rng = SplitMix64(seed: seed)
        var loaded = 0, rejected = 0
        var kinds: [String: Int] = [:]
        for _ in 0..<4000 {
            let (name, path) = Self.files.randomElement(using: &rng)!
            var bytes = ZoneTestFiles.bytes(path)
            guard bytes.count > 60 else { continue }
            // Damage the headers (counts, version), the footer, or anywhere.
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let i: Int
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: i = Int.random(in: 0..<44, using: &rng)
                case 1: i = Int.random(in: max(0, bytes.count - 40)..<bytes.count, using: &rng)
                default: i = Int.random(in: 0..<bytes.count, using: &rng)
                }
                if Bool.random(using: &rng) { bytes[i] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng) }
                else { bytes[i] = UInt8.random(in: 0...255, using: &rng) }
            }
            do {
                let z = try ZoneRules(tzif: bytes, identifier: name)
                loaded += 1
                Self.exercise(z, &rng)
            } catch {
                rejected += 1
                let kind = Mirror(reflecting: error).children.first?.label ?? "\(error)"
                kinds[kind, default: 0] += 1
            }
        }
        #expect(loaded > 100 && rejected > 100, "seed \(seed): loaded \(loaded), rejected \(rejected) \(kinds)")
    }

    @Test("random bytes behind a valid header")
    func randomBodies() {
        let seed = SplitMix64.zoneTestSeed(0x7A0E_2026_0006)
        print("ZoneTZifFuzzTests.randomBodies seed \(seed)")
        var rng = SplitMix64(seed: seed)
        for _ in 0..<3000 {
            var w = ZoneTZifWriter()
            w.version = [0, UInt8(ascii: "2"), UInt8(ascii: "3")].randomElement(using: &rng)!
            let n = Int.random(in: 0..<6, using: &rng)
            // Version 1 needs Int32 times; later versions also get files that end before 1900.
            var t = Int64.random(in: (w.version == 0 ? -2_000_000_000 : -6_000_000_000)...1_000_000_000, using: &rng)
            for _ in 0..<n {
                w.times.append(t)
                t += Int64.random(in: 1...200_000_000, using: &rng)
                w.indices.append(UInt8.random(in: 0..<3, using: &rng))
            }
            w.types = (0..<3).map { _ in
                .init(utoff: Int32.random(in: -89_999...93_599, using: &rng), isdst: UInt8.random(in: 0...1, using: &rng),
                      idx: UInt8.random(in: 0..<8, using: &rng))
            }
            w.chars = (0..<8).map { _ in UInt8.random(in: 0...127, using: &rng) }
            let rules = ["", "EST5EDT,M3.2.0,M11.1.0", "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", "AAA3BBB,M1.1.0/-167,M12.5.6/167",
                         "EST5EDT4,0/0,J365/25", "XXX-24:59:59YYY24:59:59,J1/167,J365/-167", "ABC0"]
            w.footer = rules.randomElement(using: &rng)!
            do {
                let z = try ZoneRules(tzif: w.bytes, identifier: "random")
                Self.exercise(z, &rng)
                // resolve agrees with the brute-force scan on these odd zones too.
                for _ in 0..<5 {
                    let L = Int64.random(in: -7_000_000_000...4_000_000_000, using: &rng)
                    let r = z.resolve(localSeconds: L), b = ZoneGlibcOracleTests.bruteForceResolve(z, L)
                    #expect(r == b, "seed \(seed): \(w.times) \(w.indices) \(w.types) \(w.footer ?? "") L=\(L)")
                }
            } catch {
                // Only counts and indices are random here; the file is well-formed otherwise.
                Issue.record("seed \(seed): \(error)")
            }
        }
    }
}
