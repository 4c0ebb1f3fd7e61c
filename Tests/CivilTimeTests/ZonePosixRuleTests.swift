import Glibc
import Testing
@testable import CivilTime
import SeededRandom

/// UTC seconds of a civil time (or local seconds, read as such).
func zoneTestSeconds(_ y: Int64, _ m: Int, _ d: Int, _ h: Int = 0, _ mi: Int = 0, _ s: Int = 0) -> Int64 {
    CivilDateTime(year: y, month: m, day: d, hour: h, minute: mi, second: s).localSeconds
}

@Suite("Zone POSIX TZ rules")
struct ZonePosixRuleTests {
    typealias S = ZonePosixRuleTests
    static func at(_ y: Int64, _ m: Int, _ d: Int, _ h: Int = 0, _ mi: Int = 0, _ s: Int = 0) -> Int64 {
        zoneTestSeconds(y, m, d, h, mi, s)
    }

    func offset(_ z: ZoneRules, _ t: Int64) -> ZoneOffset { z.offset(at: WallInstant(secondsSinceEpoch: t)) }

    @Test func usEasternRule() throws {
        let z = try ZoneRules(posixTZ: "EST5EDT,M3.2.0,M11.1.0")
        #expect(z.identifier == "EST5EDT,M3.2.0,M11.1.0")
        let start = S.at(2024, 3, 10, 7), end = S.at(2024, 11, 3, 6)
        #expect(offset(z, start - 1) == ZoneOffset(utcOffsetSeconds: -18000, isDST: false, abbreviation: "EST"))
        #expect(offset(z, start) == ZoneOffset(utcOffsetSeconds: -14400, isDST: true, abbreviation: "EDT"))
        #expect(z.utcOffset(atSecondsSinceEpoch: end - 1) == -14400)
        #expect(z.utcOffset(atSecondsSinceEpoch: end) == -18000)
        #expect(z.nextTransition(after: S.at(2024, 1, 1)) == start)
        #expect(z.nextTransition(after: start) == end)
        #expect(z.previousTransition(before: start) == S.at(2023, 11, 5, 6))
        #expect(z.previousTransition(before: start + 1) == start)
        // Civil times: the skipped hour and the repeated one.
        #expect(z.resolve(localSeconds: S.at(2024, 3, 10, 2, 30)) == .skipped(transition: start, gapSeconds: 3600))
        #expect(z.resolve(localSeconds: S.at(2024, 3, 10, 3)) == .unique(start))
        #expect(z.resolve(localSeconds: S.at(2024, 3, 10, 1, 59, 59)) == .unique(start - 1))
        #expect(z.resolve(localSeconds: S.at(2024, 11, 3, 1, 30))
                == .repeated(first: S.at(2024, 11, 3, 5, 30), last: S.at(2024, 11, 3, 6, 30)))
        #expect(z.resolve(localSeconds: S.at(2024, 11, 3, 2)) == .unique(end + 3600))
        // A DST part without dates takes the same US rule.
        let d = try ZoneRules(posixTZ: "EST5EDT")
        for t in [start - 1, start, end - 1, end, S.at(2300, 7, 1)] {
            #expect(d.utcOffset(atSecondsSinceEpoch: t) == z.utcOffset(atSecondsSinceEpoch: t))
        }
    }

    @Test func quotedNamesAndFixedOffsets() throws {
        let z = try ZoneRules(posixTZ: "<+0330>-3:30")
        #expect(offset(z, 0) == ZoneOffset(utcOffsetSeconds: 12600, isDST: false, abbreviation: "+0330"))
        #expect(z.nextTransition(after: 0) == nil && z.previousTransition(before: 0) == nil)
        #expect(z.resolve(localSeconds: 12600) == .unique(0))
        let m = try ZoneRules(posixTZ: "<-0930>9:30")
        #expect(m.utcOffset(atSecondsSinceEpoch: .max) == -34200 && m.utcOffset(atSecondsSinceEpoch: .min) == -34200)
        let s = try ZoneRules(posixTZ: "<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45")
        #expect(s.utcOffset(atSecondsSinceEpoch: S.at(2024, 1, 1)) == 49500)
        #expect(s.utcOffset(atSecondsSinceEpoch: S.at(2024, 7, 1)) == 45900)
    }

    @Test func dublinNegativeDST() throws {
        // Irish Standard Time is the summer time; "DST" (GMT) is winter, one hour back.
        let z = try ZoneRules(posixTZ: "IST-1GMT0,M10.5.0,M3.5.0/1")
        #expect(offset(z, S.at(2024, 7, 1)) == ZoneOffset(utcOffsetSeconds: 3600, isDST: false, abbreviation: "IST"))
        #expect(offset(z, S.at(2024, 12, 1)) == ZoneOffset(utcOffsetSeconds: 0, isDST: true, abbreviation: "GMT"))
        #expect(z.nextTransition(after: S.at(2024, 7, 1)) == S.at(2024, 10, 27, 1))
        #expect(z.previousTransition(before: S.at(2024, 7, 1)) == S.at(2024, 3, 31, 1))
        #expect(z.resolve(localSeconds: S.at(2024, 10, 27, 1, 30))
                == .repeated(first: S.at(2024, 10, 27, 0, 30), last: S.at(2024, 10, 27, 1, 30)))
        #expect(z.resolve(localSeconds: S.at(2024, 3, 31, 1, 30)) == .skipped(transition: S.at(2024, 3, 31, 1), gapSeconds: 3600))
    }

    @Test func ruleTimesOutsideTheDay() throws {
        // Nuuk: DST starts the Saturday before the last Sunday of March at 23:00 (-1:00).
        let nuuk = try ZoneRules(posixTZ: "<-02>2<-01>,M3.5.0/-1,M10.5.0/0")
        #expect(nuuk.nextTransition(after: S.at(2024, 1, 1)) == S.at(2024, 3, 31, 1))
        #expect(nuuk.nextTransition(after: S.at(2024, 6, 1)) == S.at(2024, 10, 27, 1))
        // Israel: the Friday after the fourth Thursday at 02:00 (Thursday 26:00).
        let israel = try ZoneRules(posixTZ: "IST-2IDT,M3.4.4/26,M10.5.0")
        #expect(israel.nextTransition(after: S.at(2024, 1, 1)) == S.at(2024, 3, 29))
        #expect(israel.nextTransition(after: S.at(2024, 6, 1)) == S.at(2024, 10, 26, 23))
        // Gaza: Thursday 50:00 = Saturday 02:00.
        let gaza = try ZoneRules(posixTZ: "EET-2EEST,M3.4.4/50,M10.4.4/50")
        #expect(gaza.nextTransition(after: S.at(2024, 1, 1)) == S.at(2024, 3, 30))
        #expect(gaza.nextTransition(after: S.at(2024, 6, 1)) == S.at(2024, 10, 25, 23))
        // The RFC 8536 extremes parse.
        _ = try ZoneRules(posixTZ: "AAA3BBB,M1.1.0/-167,M12.5.6/167")
    }

    @Test func julianDayForms() throws {
        // Jn never counts February 29: J60 is March 1 in every year.
        let j = try ZoneRules(posixTZ: "AAA3BBB,J60/0,J300/0")
        #expect(j.nextTransition(after: S.at(2024, 1, 1)) == S.at(2024, 3, 1, 3))
        #expect(j.nextTransition(after: S.at(2023, 1, 1)) == S.at(2023, 3, 1, 3))
        // n counts it: day 59 is February 29 in a leap year, March 1 otherwise.
        let n = try ZoneRules(posixTZ: "AAA3BBB,59/0,299/0")
        #expect(n.nextTransition(after: S.at(2024, 1, 1)) == S.at(2024, 2, 29, 3))
        #expect(n.nextTransition(after: S.at(2023, 1, 1)) == S.at(2023, 3, 1, 3))
    }

    @Test func dstAllYear() throws {
        // RFC 8536 §3.3.1: DST from January 1 00:00 to December 31 24:00 + the save: never ends.
        let z = try ZoneRules(posixTZ: "EST5EDT4,0/0,J365/25")
        var rng = SplitMix64(seed: 7)
        for _ in 0..<2000 {
            let t = Int64.random(in: S.at(1000, 1, 1)..<S.at(3000, 1, 1), using: &rng)
            #expect(offset(z, t) == ZoneOffset(utcOffsetSeconds: -14400, isDST: true, abbreviation: "EDT"))
        }
        for t in [S.at(2024, 1, 1, 5) - 1, S.at(2024, 1, 1, 5), S.at(2300, 1, 1, 5)] {
            #expect(z.utcOffset(atSecondsSinceEpoch: t) == -14400)
            #expect(z.nextTransition(after: t) == nil && z.previousTransition(before: t) == nil)
        }
        #expect(z.resolve(localSeconds: S.at(2024, 1, 1)) == .unique(S.at(2024, 1, 1, 4)))
    }

    @Test func lordHoweHalfHour() throws {
        let z = try ZoneRules(posixTZ: "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0")
        // 2024-10-06 02:00 local (+10:30) = 2024-10-05T15:30Z: clocks go to 02:30.
        let t = S.at(2024, 10, 5, 15, 30)
        #expect(z.nextTransition(after: S.at(2024, 7, 1)) == t)
        #expect(z.resolve(localSeconds: S.at(2024, 10, 6, 2, 15)) == .skipped(transition: t, gapSeconds: 1800))
    }

    @Test(arguments: [
        ("", 0, PosixTZFault.expectedName),
        ("EST", 3, .expectedOffset),
        ("ES5", 0, .nameTooShort),
        ("<+03", 0, .unterminatedName),
        ("<+0 3>-3", 3, .badNameCharacter),
        ("<ab>3", 0, .nameTooShort),
        ("EST25", 3, .valueOutOfRange),
        ("EST5:60", 5, .valueOutOfRange),
        ("EST5:", 5, .expectedOffset),
        ("EST+", 4, .expectedOffset),
        ("EST5,M3.2.0,M11.1.0", 4, .expectedName),
        ("EST5EDT,M3.2.0", 14, .expectedComma),
        ("EST5EDT;M3.2.0,M11.1.0", 7, .expectedComma),
        ("EST5EDT,M13.2.0,M11.1.0", 8, .valueOutOfRange),
        ("EST5EDT,M3.6.0,M11.1.0", 8, .valueOutOfRange),
        ("EST5EDT,M3.2.7,M11.1.0", 8, .valueOutOfRange),
        ("EST5EDT,M3.2,M11.1.0", 12, .expectedRule),
        ("EST5EDT,J0,J365", 8, .valueOutOfRange),
        ("EST5EDT,366,0", 8, .valueOutOfRange),
        ("EST5EDT,X,Y", 8, .expectedRule),
        ("EST5EDT,M3.2.0/168,M11.1.0", 15, .valueOutOfRange),
        ("EST5EDT,M3.2.0,M11.1.0x", 22, .trailingCharacters),
        ("EST5 EDT", 4, .expectedName),
    ])
    func parseErrors(text: String, position: Int, fault: PosixTZFault) {
        #expect(throws: ZoneError.badPosixTZ(text: text, position: position, fault: fault)) {
            try ZoneRules(posixTZ: text)
        }
    }

    /// Rules evaluated by us and by glibc (`TZ=rule`, no file of that name) for 2000 random
    /// instants in 1970…3000 (within and after the precomputed table) and every transition ±1 s
    /// in 1970…2210. (glibc evaluates every year before 1970 as if it were 1970; our rules are
    /// proleptic, checked by periodicity in `extremeInstantsDoNotTrap`.)
    @Test(arguments: [
        "EST5EDT,M3.2.0,M11.1.0", "CET-1CEST,M3.5.0,M10.5.0/3", "IST-1GMT0,M10.5.0,M3.5.0/1",
        "<-02>2<-01>,M3.5.0/-1,M10.5.0/0", "IST-2IDT,M3.4.4/26,M10.5.0", "EET-2EEST,M3.4.4/50,M10.4.4/50",
        "AEST-10AEDT,M10.1.0,M4.1.0/3", "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", "<-04>4<-03>,M9.1.6/24,M4.1.6/24",
        "NZST-12NZDT,M9.5.0,M4.1.0/3", "EET-2EEST,M4.5.5/0,M10.5.4/24", "AAA3BBB,J60/0,J300/0",
        "AAA3BBB,59/0,299/0", "<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45", "XXX-14YYY-13,M3.2.0,M11.1.0",
        "XXX12YYY,M6.1.0/-100,M7.1.0/100",
    ])
    func agreesWithGlibc(rule: String) throws {
        let z = try ZoneRules(posixTZ: rule)
        let seed = SplitMix64.zoneTestSeed(0x7A0E_2026_0003)
        var rng = SplitMix64(seed: seed)
        GlibcZoneOracle.lock.lock()
        let saved = getenv("TZ").map { String(cString: $0) }
        defer { GlibcZoneOracle.restore(saved); GlibcZoneOracle.lock.unlock() }
        setenv("TZ", rule, 1)
        tzset()
        var failures: [String] = []
        func check(_ t: Int64) {
            guard let g = GlibcZoneOracle.offset(t) else { return }
            let o = offset(z, t)
            if o.utcOffsetSeconds != g.gmtoff || o.isDST != g.isDST || z.utcOffset(atSecondsSinceEpoch: t) != g.gmtoff {
                if failures.count < 10 { failures.append("t=\(t) \(zoneTestISO(t)): ours \(o), glibc \(g)") }
            }
        }
        for _ in 0..<2000 { check(Int64.random(in: S.at(1970, 1, 1)..<S.at(3000, 1, 1), using: &rng)) }
        let transitions = z.transitions(from: S.at(1970, 1, 1), to: S.at(2210, 1, 1))
        #expect(transitions.count >= 2 * 239)
        for t in transitions { check(t - 1); check(t); check(t + 1) }
        #expect(failures.isEmpty, "seed \(seed) \(rule):\n\(failures.joined(separator: "\n"))")
    }

    @Test func extremeInstantsDoNotTrap() throws {
        for rule in ["EST5EDT,M3.2.0,M11.1.0", "AAA3BBB,M1.1.0/-167,M12.5.6/167", "EST5EDT4,0/0,J365/25"] {
            let z = try ZoneRules(posixTZ: rule)
            for t: Int64 in [.min, .min + 1, .min + 86400 * 400, -1, 0, .max - 86400 * 400, .max - 1, .max] {
                _ = z.utcOffset(atSecondsSinceEpoch: t)
                _ = z.offset(at: WallInstant(secondsSinceEpoch: t))
                if let n = z.nextTransition(after: t) { #expect(n > t) }
                if let p = z.previousTransition(before: t) { #expect(p < t) }
                _ = z.resolve(localSeconds: t)
            }
        }
        // Periodicity: the same civil moments 400 years apart (146097 days) have the same offsets.
        let z = try ZoneRules(posixTZ: "EST5EDT,M3.2.0,M11.1.0")
        let period: Int64 = 146_097 * 86_400
        var rng = SplitMix64(seed: 11)
        for _ in 0..<500 {
            let t = Int64.random(in: S.at(1970, 1, 1)..<S.at(2370, 1, 1), using: &rng)
            let k = Int64.random(in: -20_000_000...20_000_000, using: &rng)   // ±8 billion years
            #expect(z.utcOffset(atSecondsSinceEpoch: t + k * period) == z.utcOffset(atSecondsSinceEpoch: t))
        }
    }
}
