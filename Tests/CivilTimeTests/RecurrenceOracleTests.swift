import CivilTime
import FencepostLinux
import FencepostTestSupport
import Foundation
import SeededRandom
import Testing

/// Recurrence rules against python-dateutil's `rrule` (PyPI), on seeded random rules from DTSTARTs
/// in 1990…2035 across zones with DST (and a 30-minute one, and a skipped day).
///
/// Per case the first 30 instances are compared twice: the civil times (ours
/// `localInstances` against dateutil's expansion), and the instants by chaining `nextDate` in the
/// zone against dateutil's civil times mapped by Python's zoneinfo (fold=0: the offset before a gap,
/// the first of two repeated times, RFC 5545 §3.3.5). A difference passes only when it falls into a
/// class of ``DocumentedDateutilDifference`` (each with its reason); anything else fails with the
/// seed, the case index, the rule and both answers.
///
/// The child is bounded: each rule's expansion by a window, a count and a CPU-time budget (see
/// the script), the whole run by ``DateutilOracle/timeLimit`` (killed and reported with the cases
/// it answered and the one it was on). Its output goes to a file, not a pipe: a pipe's write end
/// inherited by a child that another test spawns meanwhile (tests run in parallel, in one
/// process) keeps the read end from seeing EOF for as long as that child lives.
///
/// Skipped with a message when python3 with dateutil is missing; a failure under
/// FENCEPOST_REQUIRE_SHARED_TESTDATA (CI). `FENCEPOST_ORACLE_SEED=<n>` changes the seed;
/// rerun one case by hand: `echo '{"rule":…,"dtstart":…,"tz":…,"n":30}' | python3 Tests/Oracles/dateutil_rrule.py`.
@Suite(.processes) struct RecurrenceOracleTests {
    static let defaultSeed: UInt64 = 0x0528_2026_7272_0001
    static var caseCount: Int { ProcessInfo.processInfo.environment["FENCEPOST_RRULE_CASES"].flatMap(Int.init) ?? 600 }
    static let instancesPerCase = 30
    static let zoneNames = [
        "UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia", "America/Sao_Paulo",
        "Europe/London", "Australia/Sydney", "America/Santiago",
    ]

    static var seed: UInt64 {
        guard let s = ProcessInfo.processInfo.environment["FENCEPOST_ORACLE_SEED"] else { return defaultSeed }
        if s.hasPrefix("0x") { return UInt64(s.dropFirst(2), radix: 16) ?? defaultSeed }
        return UInt64(s) ?? defaultSeed
    }

    // No `.timeLimit`: Swift Testing counts it from the test's start, including the time the test
    // waits in a full run for one of the cooperative pool's threads (one per core). The oracle
    // child has its own limit (``DateutilOracle/timeLimit``), killed and reported with its cases.
    @Test func dateutilAgreesOrTheDifferenceIsDocumented() throws {
        guard DateutilOracle.available else {
            if DateutilOracle.required {
                Issue.record("python3 with python-dateutil is missing (board/install-deps installs it) and FENCEPOST_REQUIRE_SHARED_TESTDATA is set")
            } else {
                print("RecurrenceOracleTests: skipped: python3 with python-dateutil is missing (board/install-deps installs it; set FENCEPOST_REQUIRE_SHARED_TESTDATA to make this a failure)")
            }
            return
        }
        let seed = Self.seed
        let system = SystemZones()
        let zones = try Self.zoneNames.map { try system.rules(named: $0) }
        var cases: [RuleCase] = []
        var random = SplitMix64(seed: seed)
        for index in 0 ..< Self.caseCount { cases.append(RuleCase.random(&random, index: index, zones: Self.zoneNames)) }

        // Ours first: rules we refuse for having no instance are not given to dateutil (it would
        // walk to year 9999).
        let began = Date()
        var compiled: [RecurrenceSchedule?] = []
        var refusedNoInstance = 0
        for c in cases {
            let compileBegan = Date()
            defer { if Date().timeIntervalSince(compileBegan) > 0.2 { print("RecurrenceOracleTests: slow compile \(Date().timeIntervalSince(compileBegan)) s: case \(c.index) \(c.rule) DTSTART \(c.dtstart)") } }
            do {
                let rule = try RecurrenceRule(parsing: c.rule)
                compiled.append(try RecurrenceSchedule(rule, start: c.start))
            } catch {
                try #require(error.part == "RRULE" || error.part == "UNTIL" || error.part == "BYSETPOS",
                             "seed \(seed) case \(c.index): \(c.rule) refused: \(error)")
                refusedNoInstance += 1
                compiled.append(nil)
            }
        }
        // A refused rule must have no instance in dateutil either (within 400 years, or dateutil
        // finds none before its time limit).
        let compiledIn = Date().timeIntervalSince(began)
        let refused = cases.indices.filter { compiled[$0] == nil }
        // dateutil walks period by period, so confirming "none in 400 years" costs up to 17
        // million steps for a sub-daily rule: 0.1 s of CPU each, and what it did not finish in
        // that is counted, not failed.
        var refusedConfirmed = 0, refusedOutOfBudget = 0
        for (k, answer) in try DateutilOracle.ask(refused.map { cases[$0] }, n: 1, budget: 0.1, seed: seed).enumerated() {
            let c = cases[refused[k]]
            if answer.timeout { refusedOutOfBudget += 1 } else if answer.local.isEmpty && answer.error == nil { refusedConfirmed += 1 }
            if let first = answer.local.first, first < "\(c.start.year + 400)" {
                Issue.record("seed \(seed) case \(c.index): \(c.rule) DTSTART \(c.dtstart) refused, but dateutil has \(first)")
            }
        }
        let asked = cases.indices.filter { compiled[$0] != nil }
        let asking = Date()
        let answers = try DateutilOracle.ask(asked.map { cases[$0] }, n: Self.instancesPerCase, budget: 0.5, seed: seed)
        let askedIn = Date().timeIntervalSince(asking)
        var tally: [String: Int] = [:]
        var failures: [String] = []
        var agreed = 0, timeouts = 0
        for (k, i) in asked.enumerated() {
            let c = cases[i], ours = compiled[i]!, zone = zones[Self.zoneNames.firstIndex(of: c.zone)!]
            let answer = answers[k]
            if answer.timeout { timeouts += 1; continue }
            if let e = answer.error { failures.append("seed \(seed) case \(i): dateutil refused \(c.rule) DTSTART \(c.dtstart): \(e)"); continue }
            let local = ours.localInstances(from: c.start, limit: Self.instancesPerCase).map { $0.iso8601 }
            if local != answer.local {
                if let why = DocumentedDateutilDifference.classify(c, ours: local, dateutil: answer.local) {
                    tally[why, default: 0] += 1
                    continue
                }
                failures.append("seed \(seed) case \(i): \(c.rule) DTSTART \(c.dtstart) \(c.zone)\n  ours     \(local.prefix(8))\n  dateutil \(answer.local.prefix(8))")
                continue
            }
            // Instants: chain nextDate; compare up to a cutoff beyond which instances not listed
            // could map earlier (a civil time in a gap maps up to a day later).
            let expected = Array(Set(answer.utc)).sorted()
            guard let last = answer.utc.last, let firstUTC = expected.first else { agreed += 1; continue }
            let quiet = (zone.nextTransition(after: firstUTC - 90_000) ?? .max) > last + 90_000
            let cutoff = quiet ? last : last - 90_000
            var chain: [Int64] = []
            var t = firstUTC - 1
            while chain.count < 2 * Self.instancesPerCase, let n = ours.nextDate(after: WallInstant(secondsSinceEpoch: t), in: zone), n.secondsSinceEpoch <= cutoff {
                chain.append(n.secondsSinceEpoch)
                t = n.secondsSinceEpoch
            }
            let wanted = expected.filter { $0 <= cutoff }
            if chain != wanted {
                failures.append("seed \(seed) case \(i): \(c.rule) DTSTART \(c.dtstart) \(c.zone): instants differ\n  ours     \(chain.prefix(8).map { WallInstant(secondsSinceEpoch: $0) })\n  expected \(wanted.prefix(8).map { WallInstant(secondsSinceEpoch: $0) })")
                continue
            }
            agreed += 1
        }
        print("RecurrenceOracleTests: seed \(seed): \(cases.count) rules, \(agreed) agree with dateutil, \(refusedNoInstance) refused (no instance; dateutil: none in 400 years \(refusedConfirmed), out of its 0.1 s budget \(refusedOutOfBudget)), \(timeouts) dateutil timeouts, documented differences \(tally.sorted { $0.key < $1.key }); "
              + "ours compiled in \(Int(compiledIn * 1000)) ms, dateutil answered in \(Int(askedIn * 1000)) ms wall (\(answers.reduce(0) { $0 + $1.cpuMilliseconds }) ms CPU, slowest \(answers.map(\.cpuMilliseconds).max() ?? 0) ms), \(Int(Date().timeIntervalSince(began) * 1000)) ms in all")
        for f in failures.prefix(20) { Issue.record(Comment(rawValue: f)) }
        #expect(failures.isEmpty, "\(failures.count) unexplained differences (seed \(seed))")
        #expect(agreed > cases.count * 8 / 10, "too few cases compared: \(agreed)")
    }
}

/// One random rule with its DTSTART and zone.
struct RuleCase {
    var index: Int
    var rule: String
    var start: CivilDateTime
    var zone: String
    var dtstart: String { RecurrenceText.basic(start) }

    static func random(_ r: inout SplitMix64, index: Int, zones: [String]) -> RuleCase {
        let freqs = ["MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"]
        let f = r.int(0 ... 5)
        // Weighted toward the day-and-longer frequencies the device uses.
        let freq = f < 2 && r.chance(0.5) ? freqs[r.int(2 ... 5)] : freqs[f]
        var parts = ["FREQ=\(freq)"]
        if r.chance(0.3) { parts.append("INTERVAL=\(r.int(2 ... 5))") }
        let days = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"]
        func list(_ n: Int, _ gen: (inout SplitMix64) -> Int) -> String {
            var set: [Int] = []
            for _ in 0 ..< n { let v = gen(&r); if !set.contains(v) { set.append(v) } }
            return set.map(String.init).joined(separator: ",")
        }
        let sub = freq == "MINUTELY" || freq == "HOURLY"
        if r.chance(sub ? 0.2 : 0.3) { parts.append("BYMONTH=" + list(r.int(1 ... 3)) { $0.int(1 ... 12) }) }
        if freq == "YEARLY" && r.chance(0.15) { parts.append("BYWEEKNO=" + list(r.int(1 ... 2)) { g in g.chance(0.8) ? g.int(1 ... 53) : -g.int(1 ... 3) }) }
        if (freq == "YEARLY" || sub) && r.chance(0.15) { parts.append("BYYEARDAY=" + list(r.int(1 ... 3)) { g in g.chance(0.7) ? g.int(1 ... 366) : -g.int(1 ... 366) }) }
        if freq != "WEEKLY" && r.chance(0.35) { parts.append("BYMONTHDAY=" + list(r.int(1 ... 3)) { g in g.chance(0.7) ? g.int(1 ... 31) : -g.int(1 ... 31) }) }
        if r.chance(0.5) {
            let ordinals = (freq == "MONTHLY" || (freq == "YEARLY" && !parts.contains { $0.hasPrefix("BYWEEKNO") })) && r.chance(0.5)
            var items: [String] = []
            for _ in 0 ..< r.int(1 ... 4) {
                let d = days[r.int(0 ... 6)]
                if ordinals {
                    let n = freq == "MONTHLY" ? r.int(1 ... 5) : r.int(1 ... 53)
                    items.append("\(r.chance(0.5) ? -n : n)\(d)")
                } else {
                    items.append(d)
                }
            }
            parts.append("BYDAY=" + Array(Set(items)).sorted().joined(separator: ","))
        }
        if freq != "MINUTELY" && freq != "HOURLY" && r.chance(0.5) { parts.append("BYHOUR=" + list(r.int(1 ... 4)) { $0.int(0 ... 23) }) }
        else if freq == "MINUTELY" && r.chance(0.3) { parts.append("BYHOUR=" + list(r.int(1 ... 3)) { $0.int(0 ... 23) }) }
        if freq != "MINUTELY" && r.chance(0.4) { parts.append("BYMINUTE=" + list(r.int(1 ... 3)) { $0.int(0 ... 59) }) }
        if r.chance(0.15) { parts.append("BYSECOND=" + list(r.int(1 ... 2)) { $0.int(0 ... 59) }) }
        if parts.count > 1 && r.chance(0.15) { parts.append("BYSETPOS=" + list(r.int(1 ... 2)) { g in g.chance(0.5) ? g.int(1 ... 4) : -g.int(1 ... 4) }) }
        if r.chance(0.2) { parts.append("WKST=\(days[r.int(0 ... 6)])") }
        let start = CivilDateTime(year: Int64(r.int(1990 ... 2035)), month: r.int(1 ... 12), day: r.int(1 ... 28),
                                  hour: r.int(0 ... 23), minute: r.chance(0.5) ? 0 : r.int(0 ... 59), second: r.chance(0.8) ? 0 : r.int(0 ... 59))
        if r.chance(0.15) { parts.append("COUNT=\(r.int(1 ... 40))") }
        else if r.chance(0.15) {
            let until = CivilDateTime(localSeconds: start.localSeconds + Int64(r.int(0 ... 3 * 366)) * 86_400 + Int64(r.int(0 ... 86_399)))
            parts.append("UNTIL=\(RecurrenceText.basic(until))")
        }
        return RuleCase(index: index, rule: parts.joined(separator: ";"), start: start, zone: zones[r.int(0 ... zones.count - 1)])
    }
}

/// Where dateutil and Fencepost differ by a documented choice (SEMANTICS.md §6), each with its reason.
enum DocumentedDateutilDifference {
    static func classify(_ c: RuleCase, ours: [String], dateutil: [String]) -> String? {
        let byDay = c.rule.split(separator: ";").first { $0.hasPrefix("BYDAY=") }.map { $0.dropFirst(6).split(separator: ",") } ?? []
        let plain = byDay.contains { $0.count == 2 }, ordinal = byDay.contains { $0.count > 2 }
        if plain && ordinal {
            // RFC 5545: BYDAY is a list, a day matches any entry. dateutil requires a day to match a
            // plain weekday AND an ordinal one (BYDAY=MO,-1FR: never); ours is the union.
            return "BYDAY mixing plain and ordinal weekdays: the RFC's union (dateutil intersects)"
        }
        if c.rule.contains("BYWEEKNO=") {
            // dateutil counts the weeks of the previous year with this year's length, and does not
            // look at negative week numbers for the days of next year's week 1. Ours numbers every
            // day's week in its own week-year (ISO 8601 with WKST).
            let oursSet = Set(ours), theirs = Set(dateutil)
            let differing = oursSet.symmetricDifference(theirs)
            if differing.allSatisfy({ $0.contains("-01-0") || $0.contains("-12-2") || $0.contains("-12-3") }) {
                return "BYWEEKNO in a week across the new year: each day's own week-year (dateutil: previous year's week count, no negative numbers for next year's week 1)"
            }
        }
        return nil
    }
}

/// `Tests/Oracles/dateutil_rrule.py` run by python3.
enum DateutilOracle {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Oracles/dateutil_rrule.py").path

    static var required: Bool { TestInputs.required }

    static let available: Bool = {
        guard let r = try? run(["-c", "import dateutil.rrule, zoneinfo"], input: "") else { return false }
        return r.status == 0
    }()

    struct Answer {
        var local: [String] = []
        var utc: [Int64] = []
        var timeout = false
        var error: String?
        var cpuMilliseconds = 0
    }

    /// The whole child's wall-clock limit, seconds (`FENCEPOST_ORACLE_TIME_LIMIT`).
    static var timeLimit: Double { ProcessInfo.processInfo.environment["FENCEPOST_ORACLE_TIME_LIMIT"].flatMap(Double.init) ?? 120 }

    static func ask(_ cases: [RuleCase], n: Int, budget: Double, seed: UInt64) throws -> [Answer] {
        if cases.isEmpty { return [] }
        var input = ""
        for c in cases {
            let object: [String: Any] = ["rule": c.rule, "dtstart": c.dtstart, "tz": c.zone, "n": n]
            input += String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self) + "\n"
        }
        if let keep = ProcessInfo.processInfo.environment["FENCEPOST_ORACLE_INPUT"] {
            // For a rerun by hand: `python3 Tests/Oracles/dateutil_rrule.py < FILE`.
            try Data(input.utf8).write(to: URL(fileURLWithPath: keep + (n == 1 ? ".refused" : "") + ".jsonl"))
        }
        let result = try run([script, "--budget", "\(budget)"], input: input, timeLimit: timeLimit)
        let lines = result.stdout.split(separator: "\n")
        if result.status == Binaries.timedOut {
            let on = lines.count < cases.count ? "case \(cases[lines.count].index) \(cases[lines.count].rule) DTSTART \(cases[lines.count].dtstart)" : "none"
            Issue.record("seed \(seed): dateutil_rrule.py did not finish \(cases.count) rules in \(Int(timeLimit)) s (killed): \(lines.count) answered, working on \(on); stderr: \(result.stderr.suffix(500))")
            throw Killed()
        }
        try #require(result.status == 0, "dateutil_rrule.py exited \(result.status): \(result.stderr)")
        try #require(lines.count == cases.count, "dateutil_rrule.py answered \(lines.count) of \(cases.count) lines: \(result.stderr)")
        return try lines.map { line in
            let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            var a = Answer()
            a.timeout = o["timeout"] as? Bool ?? false
            a.error = o["error"] as? String
            a.local = o["local"] as? [String] ?? []
            a.utc = (o["utc"] as? [NSNumber] ?? []).map { $0.int64Value }
            a.cpuMilliseconds = (o["cpu_ms"] as? NSNumber)?.intValue ?? 0
            return a
        }
    }

    struct Killed: Error {}

    /// Runs python3 (found on PATH) with `arguments` and `input` on standard input (files, no
    /// pipe), killed (SIGKILL) after `timeLimit` seconds.
    static func run(_ arguments: [String], input: String, timeLimit: Double = 60) throws -> Binaries.Output {
        try Binaries.run(["python3"] + arguments, input: input, environment: [:], executable: URL(fileURLWithPath: "/usr/bin/env"), timeLimit: timeLimit)
    }
}
