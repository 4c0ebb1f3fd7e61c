import Glibc
import Testing
@testable import CivilTime
@testable import FencepostLinux
import SeededRandom

/// Every TZif file on the machine, checked against glibc's `localtime_r` (offsets) and against a
/// brute-force scan (civil time → instants). Set `ZONE_TEST_SEED` to replay a failure.
@Suite("Zone rules against glibc", .serialized)
struct ZoneGlibcOracleTests {
    static let files = ZoneTestFiles.allDistinctZoneFiles()

    /// Runs `body` for every zone file with `TZ` pointing at it, under the oracle's lock.
    static func forEveryZone(_ body: (String, String, ZoneRules) -> Void) -> [String] {
        GlibcZoneOracle.lock.lock()
        let saved = getenv("TZ").map { String(cString: $0) }
        defer {
            GlibcZoneOracle.restore(saved)
            GlibcZoneOracle.lock.unlock()
        }
        var loadFailures: [String] = []
        for (name, path) in files {
            do {
                let rules = try ZoneRules(tzif: ZoneTestFiles.bytes(path), identifier: name)
                GlibcZoneOracle.select(path: path)
                body(name, path, rules)
            } catch {
                loadFailures.append("\(name): \(error)")
            }
        }
        return loadFailures
    }

    @Test("offsets equal glibc localtime_r for every zone: 1000 random instants, every transition ±1 s")
    func offsetsMatchGlibc() {
        let seed = SplitMix64.zoneTestSeed(0x7A0E_2026_0001)
        var rng = SplitMix64(seed: seed)
        #expect(Self.files.count > 500, "expected the full tzdata under \(ZoneTestFiles.directory)")
        var failures: [String] = [], failureCount = 0, checks = 0
        let loadFailures = Self.forEveryZone { name, _, rules in
            func check(_ t: Int64, _ what: String) {
                guard let g = GlibcZoneOracle.offset(t) else { return }
                checks += 1
                let o = rules.offset(at: WallInstant(secondsSinceEpoch: t))
                let fast = rules.utcOffset(atSecondsSinceEpoch: t)
                guard fast != g.gmtoff || o.utcOffsetSeconds != g.gmtoff || o.isDST != g.isDST else { return }
                failureCount += 1
                if failures.count < 25 {
                    failures.append("\(name) \(what) t=\(t) (\(zoneTestISO(t))): ours \(fast) \(o), glibc \(g.gmtoff) dst=\(g.isDST)")
                }
            }
            for _ in 0..<1000 { check(Int64.random(in: ZoneTestFiles.y1900..<ZoneTestFiles.y2200, using: &rng), "random") }
            for t in rules.transitions(from: ZoneTestFiles.y1900, to: ZoneTestFiles.y2200) {
                check(t - 1, "transition-1"); check(t, "transition"); check(t + 1, "transition+1")
            }
            // Beyond the precomputed table: the footer rule, evaluated (up to year 9999).
            for _ in 0..<100 { check(Int64.random(in: ZoneTestFiles.y2200..<253_402_300_800, using: &rng), "after 2200") }
        }
        #expect(loadFailures.isEmpty, "\(loadFailures)")
        #expect(checks > Self.files.count * 1000, "glibc answered only \(checks) checks")
        #expect(failureCount == 0, "seed \(seed): \(failureCount) of \(checks) offsets differ from glibc:\n\(failures.joined(separator: "\n"))")
    }

    /// The instants whose local time is `L`, by scanning the transitions within ±26 h of `L`
    /// (every offset is within ±26 h) one stretch of constant offset at a time.
    static func bruteForceResolve(_ rules: ZoneRules, _ L: Int64) -> LocalTimeResolution {
        let window: Int64 = 26 * 3600 + 1
        let transitions = rules.transitions(from: L - window + 1, to: L + window)
        let starts = [L - window] + transitions
        var solutions: [Int64] = []
        for (k, s) in starts.enumerated() {
            let e = k + 1 < starts.count ? starts[k + 1] : L + window
            let u = L - Int64(rules.utcOffset(atSecondsSinceEpoch: s))
            if s <= u && u < e { solutions.append(u) }
        }
        if let first = solutions.min(), let last = solutions.max() {
            return first == last ? .unique(first) : .repeated(first: first, last: last)
        }
        for t in transitions {
            let before = Int64(rules.utcOffset(atSecondsSinceEpoch: t - 1)), after = Int64(rules.utcOffset(atSecondsSinceEpoch: t))
            if t + before <= L && L < t + after { return .skipped(transition: t, gapSeconds: after - before) }
        }
        return .skipped(transition: .min, gapSeconds: 0)   // unreachable for real zones: fails the test
    }

    @Test("resolve(localSeconds:) equals a brute-force scan, and glibc agrees with every answer")
    func resolveMatchesBruteForce() {
        let seed = SplitMix64.zoneTestSeed(0x7A0E_2026_0002)
        var rng = SplitMix64(seed: seed)
        var failures: [String] = [], failureCount = 0, kinds = [0, 0, 0]
        _ = Self.forEveryZone { name, _, rules in
            func fail(_ s: String) {
                failureCount += 1
                if failures.count < 25 { failures.append("\(name): " + s) }
            }
            func check(_ L: Int64) {
                let r = rules.resolve(localSeconds: L)
                let expected = Self.bruteForceResolve(rules, L)
                if r != expected { fail("L=\(L) (\(zoneTestISO(L)) local): \(r), brute force \(expected)") }
                // glibc's view of the same answer.
                switch r {
                case .unique(let u):
                    kinds[0] += 1
                    if let g = GlibcZoneOracle.offset(u), u + Int64(g.gmtoff) != L { fail("L=\(L): unique \(u) is not L under glibc") }
                case .repeated(let a, let b):
                    kinds[1] += 1
                    for u in [a, b] {
                        if let g = GlibcZoneOracle.offset(u), u + Int64(g.gmtoff) != L { fail("L=\(L): repeated \(u) is not L under glibc") }
                    }
                case .skipped(let t, let gap):
                    kinds[2] += 1
                    if let g0 = GlibcZoneOracle.offset(t - 1), let g1 = GlibcZoneOracle.offset(t) {
                        if !(t - 1 + Int64(g0.gmtoff) < L && L < t + Int64(g1.gmtoff)) || Int64(g1.gmtoff - g0.gmtoff) != gap {
                            fail("L=\(L): skipped(\(t), \(gap)) disagrees with glibc \(g0.gmtoff) → \(g1.gmtoff)")
                        }
                    }
                }
            }
            // The local times of the offset test's kind of random instants (so they exist) ...
            for _ in 0..<1000 {
                let u = Int64.random(in: ZoneTestFiles.y1900..<ZoneTestFiles.y2200, using: &rng)
                check(u + Int64(rules.utcOffset(atSecondsSinceEpoch: u)))
            }
            // ... and both edges of every gap or overlap.
            for t in rules.transitions(from: ZoneTestFiles.y1900, to: ZoneTestFiles.y2200) {
                let before = Int64(rules.utcOffset(atSecondsSinceEpoch: t - 1)), after = Int64(rules.utcOffset(atSecondsSinceEpoch: t))
                let (low, high) = (t + min(before, after), t + max(before, after))
                for L in [low - 1, low, high - 1, high] { check(L) }
            }
        }
        #expect(kinds[1] > 0 && kinds[2] > 0, "the sample should contain repeated and skipped times: \(kinds)")
        #expect(failureCount == 0, "seed \(seed): \(failureCount) resolutions wrong:\n\(failures.joined(separator: "\n"))")
    }
}
