import CivilTime
import FencepostLinux
import SeededRandom
import Testing

/// Input that reaches the recurrence engine from a socket `add`, a config file or a fleet document
/// must be refused in bounded time: a range of two billion hours, a range at the end of `Int`, a
/// list of thousands of values, and a rule whose INTERVAL never meets its filters (the search
/// would step through every misaligned period of 400 years).
///
/// "Bounded" is checked as CPU time of the test's own thread (``bounded(_:_:)``), not with a
/// `.timeLimit`: Swift Testing counts that from the test's start, including the minutes a test
/// waits in a full run for one of the cooperative pool's threads (one per core).
struct RecurrenceBoundsTests {
    /// Runs `body` and records an issue when it took more than 2 s of this thread's CPU time: the
    /// refusals below take microseconds; the unbounded walks they replace, minutes to hours.
    static func bounded(_ what: String, _ body: () throws -> Void) rethrows {
        let start = SystemClocks.threadCPUNow()
        try body()
        let spent = Double(SystemClocks.threadCPUNow() - start) / 1e9
        #expect(spent < 2, "\(what) took \(spent) s of CPU time")
    }

    @Test func aHugeRangeIsRefusedNamingTheValue() throws {
        try Self.bounded("a range of two billion hours") {
        let values = try #require(ComponentSets.parse("hour", "0-2000000000"))
        #expect(values.count <= 2 * ComponentSets.limit + 2)
        var sets = ComponentSets()
        sets.add("hour", values)
        #expect(throws: RecurrenceError("hour", "2000000000 is out of range (0…23)")) { try sets.rule() }
        }
    }

    @Test func aRangeAtTheEndOfIntDoesNotTrap() throws {
        try Self.bounded("a range at the end of Int") {
        let values = try #require(ComponentSets.parse("hour", "9223372036854775800-9223372036854775807/5"))
        var sets = ComponentSets()
        sets.add("hour", values)
        #expect(throws: RecurrenceError.self) { try sets.rule() }
        let stepped = try #require(ComponentSets.parse("minute", "0-59/9223372036854775807"))
        #expect(stepped == [0])
        }
    }

    @Test func valuesAreDistinctAndSortedWhateverTheirNumber() {
        Self.bounded("60,000 values") {
        var sets = ComponentSets()
        let many = (0 ..< 60_000).map { $0 % 60 }
        sets.add("minute", many)
        sets.add("minute", [59, 0, 30])
        #expect(sets["minute"] == Array(0 ... 59))
        #expect(ComponentSets.parse("day", "15,1,-1,1") == [-1, 1, 15])
        }
    }

    @Test func anIntervalThatNeverMeetsTheFiltersIsRefusedAtOnce() throws {
        let oddMinutes = (0 ..< 30).map { String(2 * $0 + 1) }.joined(separator: ",")
        let rule = try RecurrenceRule(parsing: "FREQ=MINUTELY;INTERVAL=2;BYMINUTE=\(oddMinutes)")
        let even = CivilDateTime(year: 2026, month: 3, day: 2, hour: 7, minute: 0)
        Self.bounded("an INTERVAL that never meets its filters") {
            #expect(throws: RecurrenceError.self) { try RecurrenceSchedule(rule, start: even) }
        }
        do { _ = try RecurrenceSchedule(rule, start: even) } catch { #expect(error.part == "INTERVAL", "\(error)") }
        // From an odd minute every second minute is odd: the rule fires at once.
        let odd = CivilDateTime(year: 2026, month: 3, day: 2, hour: 7, minute: 1)
        let s = try RecurrenceSchedule(rule, start: odd)
        #expect(s.localInstances(from: odd, limit: 2) == [odd, CivilDateTime(year: 2026, month: 3, day: 2, hour: 7, minute: 3)])

        // Every 7 days from a Monday is never a Tuesday; from a Tuesday it is.
        let weekly = try RecurrenceRule(parsing: "FREQ=DAILY;INTERVAL=7;BYDAY=TU")
        Self.bounded("every 7 days from a Monday on Tuesdays") {
            do throws(RecurrenceError) { _ = try RecurrenceSchedule(weekly, start: CivilDateTime(year: 2026, month: 3, day: 2, hour: 9)); Issue.record("accepted") }
            catch { #expect(error.part == "INTERVAL", "\(error)") }
        }
        #expect((try? RecurrenceSchedule(weekly, start: CivilDateTime(year: 2026, month: 3, day: 3, hour: 9))) != nil)
    }

    /// Seeded random MINUTELY, HOURLY and DAILY rules with INTERVAL > 1: a rule is refused for its
    /// INTERVAL exactly when brute force over one whole repeat of its filters (the least common
    /// multiple of INTERVAL and a week) finds no aligned period that passes them.
    @Test func theIntervalCheckAgreesWithBruteForce() throws {
        var rng = SplitMix64(seed: 0x5EED_2026_1126_0001)
        let seedText = "seed 0x5EED202611260001"
        for n in 0 ..< 400 {
            let freq = ["MINUTELY", "HOURLY", "DAILY"][Int(rng.next() % 3)]
            let interval = Int(rng.next() % 40) + 2
            var parts = ["FREQ=\(freq)", "INTERVAL=\(interval)"]
            func subset(_ range: ClosedRange<Int>, _ k: Int) -> [Int] {
                var out = Set<Int>()
                for _ in 0 ..< k { out.insert(range.lowerBound + Int(rng.next() % UInt64(range.count))) }
                return out.sorted()
            }
            let days = rng.next() % 2 == 0 ? subset(1 ... 7, Int(rng.next() % 3) + 1) : []
            let hours = freq != "DAILY" && rng.next() % 2 == 0 ? subset(0 ... 23, Int(rng.next() % 3) + 1) : []
            let minutes = freq == "MINUTELY" && rng.next() % 2 == 0 ? subset(0 ... 59, Int(rng.next() % 3) + 1) : []
            if !days.isEmpty { parts.append("BYDAY=" + days.map { ["SU", "MO", "TU", "WE", "TH", "FR", "SA"][$0 - 1] }.joined(separator: ",")) }
            if !hours.isEmpty { parts.append("BYHOUR=" + hours.map(String.init).joined(separator: ",")) }
            if !minutes.isEmpty { parts.append("BYMINUTE=" + minutes.map(String.init).joined(separator: ",")) }
            let text = parts.joined(separator: ";")
            let rule = try RecurrenceRule(parsing: text)
            let start = CivilDateTime(localSeconds: 1_700_000_000 + Int64(rng.next() % 100_000_000) / 60 * 60)

            // Brute force: every aligned period start over lcm(INTERVAL, one week of periods).
            let unit: Int64 = freq == "MINUTELY" ? 60 : freq == "HOURLY" ? 3600 : 86_400
            let week = 7 * 86_400 / unit
            var a = Int64(interval), b = week
            while b != 0 { (a, b) = (b, a % b) }
            let cycle = Int64(interval) / a * week
            let firstPeriod = start.localSeconds / unit
            var found = false
            var k: Int64 = 0
            while k < cycle && !found {
                let c = CivilDateTime(localSeconds: (firstPeriod + k) * unit)
                let weekday = CivilDays.weekday(dayNumber: (firstPeriod + k) * unit / 86_400)
                found = (days.isEmpty || days.contains(weekday))
                    && (freq == "DAILY" || hours.isEmpty || hours.contains(c.hour))
                    && (freq != "MINUTELY" || minutes.isEmpty || minutes.contains(c.minute))
                k += Int64(interval)
            }
            do {
                let s = try RecurrenceSchedule(rule, start: start)
                #expect(found, "\(seedText) case \(n): \(text) from \(start.iso8601) was accepted, brute force finds no instance")
                #expect(!s.localInstances(from: start, limit: 1).isEmpty, "\(seedText) case \(n): \(text)")
            } catch {
                #expect(!found && error.part == "INTERVAL", "\(seedText) case \(n): \(text) from \(start.iso8601): \(error), brute force found one: \(found)")
            }
        }
    }
}
