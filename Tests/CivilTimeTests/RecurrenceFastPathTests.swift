@testable import CivilTime
import FencepostLinux
import Foundation
import SeededRandom
import Testing

/// The two shortcuts of `RecurrenceSchedule.nextDate(after:in:)` against what they stand for, on
/// seeded random rules (the generator of ``RecurrenceOracleTests``, with EXDATE and RDATE added
/// to some) across zones with DST, a 30-minute one and a skipped day:
///
/// - the zone shortcut (one lookup when the answer lies in the query's stretch of constant
///   offset, and the month index of 1970…2099) against `nextDate(after:_:resolvingEvery: true)`,
///   which resolves every civil time it tries and computes every month; queries at random
///   instants of 1990…2040, around the index's ends, around each zone's transitions, just
///   before and at each answer (the re-arm after a fire);
/// - the month-mask search of `firstMatch` against a day-by-day scan of ``dayMask`` (computed
///   for each day's month, no table) and the time masks.
///
/// A failure names the seed (`FENCEPOST_FASTPATH_SEED=<n>` reruns it), the case, the rule and
/// the query.
@Suite struct RecurrenceFastPathTests {
    static let defaultSeed: UInt64 = 0x0528_2026_FA57_0001
    static var seed: UInt64 {
        guard let s = ProcessInfo.processInfo.environment["FENCEPOST_FASTPATH_SEED"] else { return defaultSeed }
        if s.hasPrefix("0x") { return UInt64(s.dropFirst(2), radix: 16) ?? defaultSeed }
        return UInt64(s) ?? defaultSeed
    }

    static func schedules(_ random: inout SplitMix64, count: Int, zones: [String]) -> [(RuleCase, RecurrenceSchedule)] {
        var out: [(RuleCase, RecurrenceSchedule)] = []
        for index in 0 ..< count {
            let c = RuleCase.random(&random, index: index, zones: zones)
            guard let rule = try? RecurrenceRule(parsing: c.rule) else { continue }
            var exclusions = RecurrenceDates(), additions = RecurrenceDates()
            if random.chance(0.15) {
                // Near DTSTART, so that some fall on instances.
                for _ in 0 ..< random.int(1 ... 4) {
                    let t = c.start.localSeconds + Int64(random.int(0 ... 400)) * 86_400 / Int64(random.int(1 ... 8))
                    let civil = CivilDateTime(localSeconds: t - t % (random.chance(0.5) ? 3600 : 86_400))
                    if random.chance(0.5) { exclusions.add(local: civil) } else { exclusions.add(day: Int64(floorDiv(t, 86_400))) }
                }
            }
            if random.chance(0.1) { additions.add(local: CivilDateTime(localSeconds: c.start.localSeconds + Int64(random.int(0 ... 1000)) * 3600)) }
            guard let s = try? RecurrenceSchedule(rule, start: c.start, exclusions: exclusions, additions: additions) else { continue }
            out.append((c, s))
        }
        return out
    }

    @Test func nextDateEqualsTheResolvingPath() throws {
        let seed = Self.seed
        var random = SplitMix64(seed: seed)
        let system = SystemZones()
        let names = RecurrenceOracleTests.zoneNames
        let zones = try names.map { try system.rules(named: $0) }
        var failures: [String] = [], compared = 0, sameStretch = 0
        // Besides the random rules, in every zone rules with instances in the hours that
        // transitions skip or repeat (the cases a shortcut would get wrong first).
        var cases = Self.schedules(&random, count: 400, zones: names)
        for (k, text) in ["FREQ=HOURLY;BYMINUTE=15,45", "FREQ=MINUTELY;INTERVAL=13", "FREQ=DAILY;BYHOUR=0,1,2,3,23;BYMINUTE=30"].enumerated() {
            for name in names {
                let c = RuleCase(index: -1 - k, rule: text, start: CivilDateTime(year: 2000 + Int64(random.int(0 ... 30)), month: 1, day: 1), zone: name)
                cases.append((c, try RecurrenceSchedule(try RecurrenceRule(parsing: text), start: c.start)))
            }
        }
        // Month rules begun before 1970 and running past 2099: both ends of the month index
        // (2100 is no leap year: the 29th of February steps from 2096 to 2104).
        for (k, text) in ["FREQ=MONTHLY;BYDAY=-1FR", "FREQ=MONTHLY;BYMONTHDAY=1,-1;BYHOUR=0,23", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
                          "FREQ=MONTHLY;BYMONTH=1,12;BYDAY=1MO,-1SU"].enumerated() {
            for name in names {
                let c = RuleCase(index: -10 - k, rule: text, start: CivilDateTime(year: 1969, month: random.int(1 ... 12), day: random.int(1 ... 28)), zone: name)
                cases.append((c, try RecurrenceSchedule(try RecurrenceRule(parsing: text), start: c.start)))
            }
        }
        for (c, s) in cases {
            let zone = zones[names.firstIndex(of: c.zone)!]
            let startUTC = c.start.localSeconds - 86_400
            var queries: [Int64] = (0 ..< 12).map { _ in startUTC + Int64(random.int(0 ... 3 * 366 * 86_400)) }
            queries += (0 ..< 4).map { _ in Int64(random.int(631_152_000 ... 2_208_988_800)) }   // 1990…2040
            // Around the ends of the month index (2100-01-01, and 1970-01-01 for rules begun before).
            queries += (0 ..< 2).map { _ in 4_102_444_800 + Int64(random.int(-62 * 86_400 ... 40 * 86_400)) }
            if c.start.year < 1970 {
                queries += (0 ..< 4).map { _ in Int64(random.int(-62 * 86_400 ... 40 * 86_400)) }
                queries += [4_102_444_800 - 86_400 * 1_400, 4_102_444_800 - 1]   // 2096-03, the index's last second
            }
            var t = startUTC
            for _ in 0 ..< 4 {
                guard let n = zone.nextTransition(after: t) else { break }
                queries += [n - 1, n, n + Int64(random.int(-7200 ... 7200)), n + Int64(random.int(0 ... 3600)), n + Int64(random.int(-2 * 86_400 ... 2 * 86_400))]
                t = n + Int64(random.int(0 ... 200)) * 86_400
            }
            var chain = queries
            var k = 0
            while k < chain.count && k < 80 {
                let a = chain[k]
                let fast = s.nextDate(after: WallInstant(secondsSinceEpoch: a), in: zone)
                let general = s.nextDate(after: a, zone, resolvingEvery: true)
                compared += 1
                if fast != general {
                    failures.append("seed \(seed) case \(c.index): \(c.rule) DTSTART \(c.dtstart) \(c.zone) after \(WallInstant(secondsSinceEpoch: a)) (\(a)): nextDate \(fast.map { "\($0)" } ?? "nil"), resolving \(general.map { "\($0)" } ?? "nil")")
                    break
                }
                if let f = fast {
                    if zone.offsetStretch(containing: a).map({ f.secondsSinceEpoch < $0.end }) ?? false { sameStretch += 1 }
                    // The re-arm after a fire, and the second just before it.
                    if k < queries.count || random.chance(0.5) { chain += [f.secondsSinceEpoch, f.secondsSinceEpoch - 1] }
                }
                k += 1
            }
            if failures.count >= 20 { break }
        }
        print("RecurrenceFastPathTests: seed \(seed): \(compared) queries, \(sameStretch) answered in the query's stretch of constant offset, \(failures.count) differences")
        for f in failures { Issue.record(Comment(rawValue: f)) }
        #expect(sameStretch > compared / 3, "seed \(seed): too few queries took the shortcut: \(sameStretch) of \(compared)")
    }

    @Test func firstMatchEqualsADayByDayScan() {
        let seed = Self.seed
        var random = SplitMix64(seed: seed ^ 0x5CA7)
        var failures: [String] = [], compared = 0
        for (c, s) in Self.schedules(&random, count: 300, zones: ["UTC"]) where s.searchesByMonth {
            for _ in 0 ..< 20 {
                let from = max(s.startLocal, c.start.localSeconds + Int64(random.int(-86_400 ... 800 * 86_400)) + (random.chance(0.3) ? 0 : Int64(random.int(0 ... 86_399))))
                guard from <= s.endLocal else { continue }
                let fast = s.firstMatch(atOrAfter: from)
                // Day by day for up to 4 years, each day's month mask computed afresh.
                var expected: Int64? = nil
                var d = floorDiv(from, 86_400), timeOfDay = from - d * 86_400
                while d <= floorDiv(from, 86_400) + 4 * 366 && d * 86_400 <= s.endLocal {
                    if s.dayMatches(d), let t = s.firstTime(atOrAfter: timeOfDay) {
                        expected = d * 86_400 + t <= s.endLocal ? d * 86_400 + t : nil
                        break
                    }
                    d += 1
                    timeOfDay = 0
                }
                if expected == nil, let f = fast, f < floorDiv(from, 86_400) * 86_400 + 4 * 366 * 86_400 {
                    failures.append("seed \(seed) case \(c.index): \(c.rule) DTSTART \(c.dtstart) from \(CivilDateTime(localSeconds: from).iso8601): firstMatch \(CivilDateTime(localSeconds: f).iso8601), the scan finds none")
                } else if let e = expected, fast != e {
                    failures.append("seed \(seed) case \(c.index): \(c.rule) DTSTART \(c.dtstart) from \(CivilDateTime(localSeconds: from).iso8601): firstMatch \(fast.map { CivilDateTime(localSeconds: $0).iso8601 } ?? "nil"), the scan \(CivilDateTime(localSeconds: e).iso8601)")
                }
                compared += 1
            }
            if failures.count >= 20 { break }
        }
        print("RecurrenceFastPathTests: seed \(seed): firstMatch compared with a day-by-day scan at \(compared) civil times")
        for f in failures { Issue.record(Comment(rawValue: f)) }
        #expect(compared > 1000, "seed \(seed): too few comparisons: \(compared)")
    }
}
