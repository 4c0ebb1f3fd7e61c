import CivilTime
import FencepostLinux
import FencepostTestSupport
import Foundation
import Testing

/// Fencepost's nextDate against the test vectors transcribed from swift-foundation and
/// swift-corelibs-foundation (`../shared/testdata/calendar`, next to the repository).
///
/// The folder lives outside the repository. When it is missing the tests are skipped (the
/// condition trait names the folder), unless `FENCEPOST_REQUIRE_SHARED_TESTDATA` is set: then
/// they run and fail, naming it.
@Suite struct CalendarOracleVectorTests {
    /// `<repo>/../shared/testdata/calendar`, found from this file's path.
    static let folder: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // Tests/CivilTimeTests
        .deletingLastPathComponent()   // Tests
        .deletingLastPathComponent()   // the repository
        .appendingPathComponent("../shared/testdata/calendar").standardizedFileURL

    static var folderExists: Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
    static var required: Bool { TestInputs.required }
    static var shouldRun: Bool { folderExists || required }

    /// Vectors of swift_foundation_nextdate.json that need something nextDate does not have.
    static let expectedSkips = 9
    /// Recurrence-rule vectors that are a plain chain of nextDate.
    static let expectedRecurrenceMapped = 29

    static let zones = SystemZones()

    static func load(_ name: String) throws -> [[String: Any]] {
        let url = folder.appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw VectorError("cannot read \(url.path) (the shared test data folder \(folder.path) is required "
                              + "because FENCEPOST_REQUIRE_SHARED_TESTDATA is set, or the file is missing)")
        }
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let cases = root["cases"] as? [[String: Any]] else { throw VectorError("\(name): no \"cases\" array") }
        return cases
    }

    struct VectorError: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    static func instant(_ v: Any?) -> Int64?? {
        if v is NSNull { return .some(nil) }
        guard let d = v as? [String: Any], let u = (d["unix"] as? NSNumber)?.doubleValue else { return nil }
        return .some(Int64(u.rounded(.down)))
    }

    static func policy(_ s: String?) -> MatchingPolicy? {
        switch s {
        case nil: return nil
        case "strict": return .strict
        case "nextTime": return .nextTime
        case "nextTimePreservingSmallerComponents": return .nextTimePreservingSmallerComponents
        case "previousTimePreservingSmallerComponents": return .previousTimePreservingSmallerComponents
        default: return nil
        }
    }

    /// All results of `match` after `after`, chained, at most `limit`, each before `upper` if given.
    static func chain(_ match: CalendarMatch, after: Int64, zone: ZoneRules, policy: MatchingPolicy,
                      repeated: RepeatedTimePolicy, weekRules: WeekRules = .gregorianDefault, limit: Int,
                      upper: Int64? = nil, upperInclusive: Bool = false) -> [Int64] {
        do { try match.validate() } catch { return [] }
        var out: [Int64] = []
        var t = after
        while out.count < limit,
              let n = match.nextDate(after: WallInstant(secondsSinceEpoch: t), in: zone, policy: policy,
                                     repeatedTime: repeated, weekRules: weekRules)?.secondsSinceEpoch {
            if let upper, upperInclusive ? n > upper : n >= upper { break }
            out.append(n)
            t = n
        }
        return out
    }

    static func matchesAll(_ m: CalendarMatch, _ t: Int64, _ zone: ZoneRules, _ w: WeekRules) -> Bool {
        let off = Int64(zone.utcOffset(atSecondsSinceEpoch: t))
        let l = CivilDateTime(localSeconds: t + off)
        let day = BruteForceNextDate.makeDay(BruteForceNextDate.floorDiv(t + off, 86_400), w)
        return BruteForceNextDate.dateMatches(m, day) && (m.hour.map { $0 == l.hour } ?? true)
            && (m.minute.map { $0 == l.minute } ?? true) && (m.second.map { $0 == l.second } ?? true)
    }

    // MARK: - nextDate / enumerateDates / dates(byMatching:)

    @Test(.enabled(if: shouldRun, "needs ../shared/testdata/calendar next to the repository (set FENCEPOST_REQUIRE_SHARED_TESTDATA to fail without it)"))
    func foundationNextDateVectors() throws {
        #expect(Self.folderExists, "shared test data folder \(Self.folder.path) is missing")
        let cases = try Self.load("swift_foundation_nextdate.json")
        var skipped: [(String, String)] = []
        var ran = 0
        for c in cases {
            let id = c["id"] as? String ?? "?"
            let api = c["api"] as? String ?? ""
            let cal = c["calendar"] as? [String: Any] ?? [:]
            let matching = c["matching"] as? [String: Any] ?? [:]
            if !(cal["identifier"] as? String ?? "").contains("gregorian") { skipped.append((id, "not the Gregorian calendar")); continue }
            if api.contains("bySetting") { skipped.append((id, "date(bySetting…) is not a nextDate search")); continue }
            guard api.contains("nextDate") || api.contains("enumerateDates") || api.contains("dates(byMatching") else {
                skipped.append((id, "api \(api)")); continue
            }
            if (c["direction"] as? String) == "backward" { skipped.append((id, "backward search")); continue }
            if matching["isLeapMonth"] != nil || matching["isRepeatedDay"] != nil {
                skipped.append((id, "isLeapMonth / isRepeatedDay")); continue
            }
            if let ns = matching["nanosecond"] as? Int, ns != 0 { skipped.append((id, "nanosecond \(ns)")); continue }

            var m = CalendarMatch()
            var unknown: [String] = []
            for (k, v) in matching {
                guard let v = v as? Int else { unknown.append(k); continue }
                switch k {
                case "year": m.year = v
                case "month": m.month = v
                case "day": m.day = v
                case "hour": m.hour = v
                case "minute": m.minute = v
                case "second": m.second = v
                case "weekday": m.weekday = v
                case "weekdayOrdinal": m.weekdayOrdinal = v
                case "weekOfMonth": m.weekOfMonth = v
                case "weekOfYear": m.weekOfYear = v
                case "yearForWeekOfYear": m.yearForWeekOfYear = v
                case "dayOfYear": m.dayOfYear = v
                case "nanosecond": break   // 0: whole seconds, which is all we have
                default: unknown.append(k)
                }
            }
            if !unknown.isEmpty { skipped.append((id, "components \(unknown)")); continue }
            let zoneName = cal["timeZone"] as? String ?? "UTC"
            let zone = try Self.zones.rules(named: zoneName)
            let policy = Self.policy(c["matchingPolicy"] as? String) ?? .nextTime
            let repeated: RepeatedTimePolicy = (c["repeatedTimePolicy"] as? String) == "last" ? .last : .first
            guard let afterValue = Self.instant(c["after"]), let after = afterValue else {
                Issue.record("\(id): no start"); continue
            }
            ran += 1
            let label = "\(id) \(OracleFormat.match(m)) in \(zoneName) after \(OracleFormat.utc(after)) (\(policy), \(repeated))"

            if c.keys.contains("expected"), let e = Self.instant(c["expected"]) {
                let got = Self.chain(m, after: after, zone: zone, policy: policy, repeated: repeated, limit: 1).first
                #expect(got == e, "\(label): \(OracleFormat.utc(got)), expected \(OracleFormat.utc(e))")
            }
            for key in ["expected_sequence", "expected_sequence_prefix"] {
                guard let seq = c[key] as? [[String: Any]] else { continue }
                let expected = seq.compactMap { Self.instant($0) ?? nil }
                let got = Self.chain(m, after: after, zone: zone, policy: policy, repeated: repeated, limit: expected.count)
                #expect(got == expected, "\(label) \(key): \(got.map { OracleFormat.utc($0) }) expected \(expected.map { OracleFormat.utc($0) })")
                for (i, item) in seq.enumerated() {
                    guard let exact = item["exactMatch"] as? Bool, i < got.count else { continue }
                    #expect(Self.matchesAll(m, got[i], zone, .gregorianDefault) == exact,
                            "\(label): result \(i) \(OracleFormat.utc(got[i])) exactMatch should be \(exact)")
                }
            }
            if let asserted = c["asserted"] as? [String: Any], let range = c["range"] as? [String: Any] {
                if let n = asserted["forward_count_in_range"] as? Int,
                   let lowerValue = Self.instant(range["lower"]), let lower = lowerValue,
                   let upperValue = Self.instant(range["upper"]), let upper = upperValue {
                    let got = Self.chain(m, after: lower, zone: zone, policy: policy, repeated: repeated, limit: 1000, upper: upper)
                    #expect(got.count == n, "\(label): \(got.count) results in range, expected \(n)")
                }
                if asserted["unbounded_forward_prefix10_increasing"] as? Bool == true {
                    let got = Self.chain(m, after: after, zone: zone, policy: policy, repeated: repeated, limit: 10)
                    #expect(got.count == 10 && zip(got, got.dropFirst()).allSatisfy { $0 < $1 }, "\(label): \(got)")
                }
            }
        }
        print("Foundation nextDate vectors: \(ran) run, \(skipped.count) skipped:")
        for (id, why) in skipped { print("  skipped \(id): \(why)") }
        #expect(skipped.count == Self.expectedSkips, "skipped \(skipped.count), expected \(Self.expectedSkips): \(skipped)")
        #expect(ran + skipped.count == cases.count)
    }

    // MARK: - Recurrence rules that are a plain chain of nextDate

    /// A recurrence rule as one CalendarMatch, if it is one: daily/weekly/monthly/yearly/hourly with
    /// interval 1, at most one filter value, and only filters a single match can express
    /// (weekly's weekday, monthly's n-th weekday (n ≥ 1), yearly's month/day of month/day of year).
    /// The components the rule leaves open come from the start, as RFC 5545 has it.
    static func plainMatch(_ rule: [String: Any], start: Int64, zone: ZoneRules, w: WeekRules) -> (CalendarMatch, String?) {
        let off = Int64(zone.utcOffset(atSecondsSinceEpoch: start))
        let l = CivilDateTime(localSeconds: start + off)
        let day = BruteForceNextDate.makeDay(BruteForceNextDate.floorDiv(start + off, 86_400), w)
        let known: Set = ["frequency", "end", "matchingPolicy", "repeatedTimePolicy", "interval", "months",
                          "daysOfTheMonth", "daysOfTheYear", "weekdays"]
        if let extra = rule.keys.first(where: { !known.contains($0) }) { return (CalendarMatch(), "rule uses \(extra)") }
        if let i = rule["interval"] as? Int, i != 1 { return (CalendarMatch(), "interval \(i)") }
        let frequency = rule["frequency"] as? String ?? ""
        var m = CalendarMatch(hour: l.hour, minute: l.minute, second: l.second)
        let months = rule["months"] as? [Any] ?? []
        let days = rule["daysOfTheMonth"] as? [Any] ?? []
        let daysOfYear = rule["daysOfTheYear"] as? [Any] ?? []
        let weekdays = rule["weekdays"] as? [[String: Any]] ?? []
        if months.count > 1 || days.count > 1 || daysOfYear.count > 1 || weekdays.count > 1 {
            return (m, "several values in one filter (an expansion, not one match)")
        }
        let names = ["sunday": 1, "monday": 2, "tuesday": 3, "wednesday": 4, "thursday": 5, "friday": 6, "saturday": 7]
        switch frequency {
        case "hourly", "daily", "weekly":
            if !months.isEmpty || !days.isEmpty || !daysOfYear.isEmpty {
                return (m, "\(frequency) with a month or day filter (SEMANTICS: {month, hour} fires once a year, not daily)")
            }
            if frequency == "hourly" { m.hour = nil }
            if frequency == "weekly" { m.weekday = day.weekday }
            if let wd = weekdays.first {
                guard let every = wd["every"] as? String, let n = names[every] else { return (m, "n-th weekday in a \(frequency) rule") }
                m.weekday = n
            }
        case "monthly":
            if !months.isEmpty || !days.isEmpty || !daysOfYear.isEmpty { return (m, "monthly with a month or day filter") }
            if let wd = weekdays.first {
                guard let nth = wd["nth"] as? Int, nth >= 1, let name = wd["weekday"] as? String, let n = names[name] else {
                    return (m, "weekday filter other than the n-th (n ≥ 1) weekday of the month")
                }
                m.weekday = n; m.weekdayOrdinal = nth
            } else {
                m.day = day.day
            }
        case "yearly":
            if !weekdays.isEmpty { return (m, "yearly with a weekday filter (n-th weekday of the year)") }
            if let d = daysOfYear.first {
                guard let v = d as? Int, v >= 1 else { return (m, "day of the year counted from the end") }
                m.dayOfYear = v
            } else {
                guard months.allSatisfy({ $0 is Int }) else { return (m, "leap month") }
                m.month = (months.first as? Int) ?? l.month
                guard let d = (days.first as? Int) ?? Optional(l.day), d >= 1 else { return (m, "day counted from the end") }
                m.day = d
            }
        default:
            return (m, "frequency \(frequency)")
        }
        return (m, nil)
    }

    @Test(.enabled(if: shouldRun, "needs ../shared/testdata/calendar next to the repository (set FENCEPOST_REQUIRE_SHARED_TESTDATA to fail without it)"))
    func recurrenceRuleVectorsThatArePlainNextDate() throws {
        #expect(Self.folderExists, "shared test data folder \(Self.folder.path) is missing")
        let cases = try Self.load("swift_foundation_recurrence_rules.json")
        var notMapped: [(String, String)] = []
        var mapped = 0
        for c in cases {
            let id = c["id"] as? String ?? "?"
            let cal = c["calendar"] as? [String: Any] ?? [:]
            guard (cal["identifier"] as? String) == "gregorian" else { notMapped.append((id, "not the Gregorian calendar")); continue }
            guard let zoneName = cal["timeZone"] as? String, !zoneName.hasPrefix("(") else {
                notMapped.append((id, "the process's default time zone")); continue
            }
            guard let rule = c["rule"] as? [String: Any], let start = c["recurrencesOf"] as? [String: Any],
                  let startUnix = (start["unix"] as? NSNumber)?.doubleValue else { notMapped.append((id, "malformed")); continue }
            guard startUnix == startUnix.rounded(.down) else { notMapped.append((id, "start has a fraction of a second")); continue }
            let zone = try Self.zones.rules(named: zoneName)
            let w = WeekRules(firstWeekday: cal["firstWeekday"] as? Int ?? 1, minimumDaysInFirstWeek: cal["minimumDaysInFirstWeek"] as? Int ?? 1)
            let startT = Int64(startUnix)
            let (m, why) = Self.plainMatch(rule, start: startT, zone: zone, w: w)
            if let why { notMapped.append((id, why)); continue }

            // The sequence: occurrences from the start (which counts if it matches) within the range.
            let range = c["range"] as? [String: Any]
            var from = startT
            if let lowerValue = Self.instant(range?["lower"]), let lower = lowerValue { from = max(from, lower) }
            var count = Int.max
            if let end = rule["end"] as? [String: Any] {
                if let n = end["afterOccurrences"] as? Int {
                    guard from == startT else { notMapped.append((id, "count with a range starting later")); continue }
                    count = n
                } else { notMapped.append((id, "end \(end.keys.sorted())")); continue }
            }
            let upper = Self.instant(range?["upper"]) ?? nil
            let upperInclusive = range?["upperInclusive"] as? Bool ?? false
            let expected = (c["expected"] as? [[String: Any]] ?? []).compactMap { Self.instant($0) ?? nil }
            let limit = (c["kind"] as? String) == "iterator-prefix" ? expected.count : min(count, expected.count + 5)
            let policy = Self.policy(rule["matchingPolicy"] as? String) ?? .nextTimePreservingSmallerComponents
            let repeated: RepeatedTimePolicy = (rule["repeatedTimePolicy"] as? String) == "last" ? .last : .first
            let got = Self.chain(m, after: from - 1, zone: zone, policy: policy, repeated: repeated, weekRules: w,
                                 limit: limit, upper: upper, upperInclusive: upperInclusive)
            #expect(got == expected, "\(id) as \(OracleFormat.match(m)) (\(policy), \(repeated)): \(got.map { OracleFormat.utc($0) }) expected \(expected.map { OracleFormat.utc($0) })")
            mapped += 1
        }
        print("Recurrence-rule vectors: \(mapped) run as a nextDate chain, \(notMapped.count) not:")
        for (id, why) in notMapped { print("  not mapped \(id): \(why)") }
        #expect(mapped == Self.expectedRecurrenceMapped, "mapped \(mapped), expected \(Self.expectedRecurrenceMapped)")
    }
}
