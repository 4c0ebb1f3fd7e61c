import FencepostAgent
import SeededRandom
import Testing

/// The repeating-line limiter in virtual time (the limiter reads no clock), and the log's
/// sd-daemon priority prefixes and level.
@Suite struct RepeatLimiterTests {
    static let second: UInt64 = 1_000_000_000

    /// A log that keeps its lines (level, text).
    final class Captured {
        var lines: [(level: LogLevel, text: String)] = []
        func log(level: LogLevel = .info) -> DaemonLog { DaemonLog(level: level) { self.lines.append(($0, $1)) } }
    }

    /// A missing GPS retried every 2 s for a day: 43,200 occurrences, 1 line at the start, one a
    /// minute with the count, one at the end — 1,442 lines instead of 43,200.
    @Test func aDayOfAMissingGPSIsOneLineAMinute() {
        let captured = Captured()
        let log = captured.log()
        var limiter = RepeatLimiter()
        let start: UInt64 = 5 * Self.second
        for i in 0..<43_200 {
            log.repeating(.warning, "GPS: /dev/ttyACM0: no such file", limiter: &limiter, at: start + UInt64(i) * 2 * Self.second)
        }
        #expect(captured.lines.count == 1 + 1439)   // the start, then at 60 s, 120 s, … 86,340 s
        #expect(captured.lines.first?.text == "GPS: /dev/ttyACM0: no such file")
        #expect(captured.lines.dropFirst().allSatisfy { $0.text == "GPS: /dev/ttyACM0: no such file (30 times in the last 60 s)" })
        #expect(captured.lines.allSatisfy { $0.level == .warning })
        #expect(log.cleared("GPS: reading /dev/ttyACM0 at 9600 baud", limiter: &limiter, at: start + 86_400 * Self.second))
        #expect(captured.lines.last?.text == "GPS: reading /dev/ttyACM0 at 9600 baud (after 43200 failures over 1d 0h)")
        #expect(captured.lines.last?.level == .info)
        // Cleared once: a second clear writes nothing.
        #expect(!log.cleared("again", limiter: &limiter, at: start + 86_401 * Self.second))
        #expect(captured.lines.count == 1441)
        // It can start again: the next occurrence is a first line.
        #expect(limiter.occurred(at: start + 90_000 * Self.second) == .first)
    }

    @Test func decisionsAtTheInterval() {
        var l = RepeatLimiter(interval: 60 * Self.second)
        #expect(!l.isActive)
        #expect(l.clear(at: 0) == nil)
        #expect(l.occurred(at: 100 * Self.second) == .first)
        #expect(l.occurred(at: 101 * Self.second) == .suppressed)
        #expect(l.occurred(at: 159 * Self.second) == .suppressed)
        #expect(l.occurred(at: 160 * Self.second) == .repeated(count: 3, seconds: 60))
        #expect(l.occurred(at: 400 * Self.second) == .repeated(count: 1, seconds: 240))
        #expect(l.occurred(at: 401 * Self.second) == .suppressed)
        // A clock that goes back is no time passed (no extra line, no crash).
        #expect(l.occurred(at: 3 * Self.second) == .suppressed)
        #expect(l.clear(at: 430 * Self.second) == RepeatLimiter.End(occurrences: 7, seconds: 330))
        #expect(!l.isActive)
    }

    /// Occurrences held back are due one interval after the last line, and a flush writes them
    /// without counting another occurrence (a summary of counts kept by the caller).
    @Test func heldOccurrencesAreFlushedWhenDue() {
        var l = RepeatLimiter(interval: 60 * Self.second)
        #expect(l.heldLineDue == nil)
        #expect(l.occurred(at: 10 * Self.second) == .first)
        #expect(l.heldLineDue == nil)           // the first line held nothing back
        #expect(l.flush(at: 500 * Self.second) == false)
        #expect(l.occurred(at: 20 * Self.second) == .suppressed)
        #expect(l.heldLineDue == 70 * Self.second)
        #expect(l.flush(at: 69 * Self.second) == false)
        #expect(l.flush(at: 70 * Self.second) == true)
        #expect(l.heldLineDue == nil)
        #expect(l.flush(at: 200 * Self.second) == false)
        // The flush was a line: the next occurrence within its interval is held again.
        #expect(l.occurred(at: 100 * Self.second) == .suppressed)
        #expect(l.occurred(at: 130 * Self.second) == .repeated(count: 2, seconds: 60))
        #expect(l.clear(at: 140 * Self.second) == RepeatLimiter.End(occurrences: 4, seconds: 130))
    }

    /// Random gaps between occurrences (seeded): never two lines within the interval, the counts of
    /// the lines add up to the occurrences, and a line is never more than one interval late.
    @Test(arguments: 0..<20)
    func randomGapsKeepTheRules(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let interval = 60 * Self.second
        var l = RepeatLimiter(interval: interval)
        var now: UInt64 = rng.next() % (1 << 40)
        var lineTimes: [UInt64] = []
        var counted = 0, occurrences = 0
        for _ in 0..<2_000 {
            now += rng.next() % (90 * Self.second)
            occurrences += 1
            switch l.occurred(at: now) {
            case .first: lineTimes.append(now); counted += 1
            case .repeated(let count, _): lineTimes.append(now); counted += count
            case .suppressed: break
            }
        }
        let gaps = zip(lineTimes.dropFirst(), lineTimes).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= interval }, "seed \(seed)")
        // What is not yet counted in a line is what occurred after the last one.
        #expect(counted <= occurrences, "seed \(seed)")
        #expect(l.clear(at: now)?.occurrences == occurrences, "seed \(seed)")
    }

    @Test func linesCarryTheSdDaemonPriorityPrefix() {
        #expect(DaemonLog.format(.error, "GPIO: busy") == "<3>fencepost: error: GPIO: busy")
        #expect(DaemonLog.format(.warning, "GPS: gone") == "<4>fencepost: warning: GPS: gone")
        #expect(DaemonLog.format(.info, "running") == "<6>fencepost: running")
        #expect(DaemonLog.format(.debug, "fix", program: "fencepost-agent") == "<7>fencepost-agent: debug: fix")
    }

    @Test func theLevelDropsLessSevereLinesWithoutBuildingThem() {
        let captured = Captured()
        let log = captured.log(level: .warning)
        var built = 0
        func text(_ s: String) -> String { built += 1; return s }
        log.debug(text("d")); log.info(text("i")); log.warning(text("w")); log.error(text("e"))
        #expect(captured.lines.map(\.text) == ["w", "e"])
        #expect(built == 2)
        // The level is shared by copies (a SIGHUP changes it for every part holding one).
        let copy = log
        copy.level = .debug
        log.debug("d2")
        #expect(captured.lines.last?.text == "d2")
        #expect(LogLevel(name: "warning") == .warning && LogLevel(name: "loud") == nil)
        #expect(LogLevel.error < LogLevel.debug)
    }

    /// The log's durations are the status answer's (one function for both).
    @Test func durations() {
        #expect(ControlService.approximate(45) == "45 s")
        #expect(ControlService.approximate(180) == "3 min")
        #expect(ControlService.approximate(7_500) == "2h 5min")
        #expect(ControlService.approximate(86_400) == "1d 0h")
        #expect(ControlService.approximate(-5) == "0 s")
    }
}
