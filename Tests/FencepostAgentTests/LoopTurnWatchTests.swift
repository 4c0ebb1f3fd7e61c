@testable import FencepostAgent
import Testing

/// The loop's turn timing: which turns are reported, what they name, the longest turn since a
/// zone-set build began, and when the slow-turn warning may be cleared.
@Suite struct LoopTurnWatchTests {
    static let ms: UInt64 = 1_000_000

    /// A slow turn names its long parts, with wall and CPU time each, and counts; a fast turn
    /// after it says nothing unless it is the longest so far.
    @Test func slowTurnsAreNamedAndCounted() {
        var w = LoopTurnWatch()
        w.begin(at: 0, cpu: 5 * Self.ms)
        w.note({ "state sync (fsync)" }, from: 0, to: 70 * Self.ms, cpu: 2 * Self.ms)
        w.note({ "tiny" }, from: 70 * Self.ms, to: 70 * Self.ms + 10, cpu: 10)
        let line = w.end(at: 71 * Self.ms, cpu: 8 * Self.ms)
        #expect(line == "loop turn took 71.0 ms, 3.0 ms of it on the CPU (off the CPU (preempted, or waiting in the kernel)): state sync (fsync) 70.0 ms (CPU 2.0 ms)", "\(line ?? "nil")")
        #expect(w.slowTurns == 1 && w.slowOnCPU == 0)
        #expect(w.longest?.nanoseconds == 71 * Self.ms)
        w.begin(at: 100 * Self.ms, cpu: 8 * Self.ms)
        #expect(w.end(at: 102 * Self.ms, cpu: 9 * Self.ms) == nil)
        #expect(w.slowTurns == 1)
    }

    /// A turn whose own work passes the threshold is counted apart and says so; the summary
    /// gives both counts and the turn with the most CPU time.
    @Test func ownWorkIsToldFromPreemption() {
        var w = LoopTurnWatch()
        w.begin(at: 0, cpu: 0)
        w.note({ "status" }, from: 0, to: 60 * Self.ms, cpu: 55 * Self.ms)
        let line = w.end(at: 61 * Self.ms, cpu: 56 * Self.ms) ?? ""
        #expect(line.contains("56.0 ms of it on the CPU (the agent's own work)"), "\(line)")
        #expect(w.slowTurns == 1 && w.slowOnCPU == 1)
        w.begin(at: 100 * Self.ms, cpu: 56 * Self.ms)
        _ = w.end(at: 300 * Self.ms, cpu: 57 * Self.ms)
        let summary = w.summary ?? ""
        #expect(summary.hasPrefix("longest loop turn: 200.0 ms, 1.0 ms on the CPU"), "\(summary)")
        #expect(summary.contains("2 turns over 50 ms, 1 with over 50 ms on the CPU"), "\(summary)")
        #expect(summary.contains("the most CPU in one turn: 56.0 ms of 61.0 ms (status 60.0 ms (CPU 55.0 ms))"), "\(summary)")
    }

    /// The longest turn since the mark: the build's own figure, independent of earlier turns.
    @Test func longestSinceMarkStartsAgainAtTheMark() {
        var w = LoopTurnWatch()
        w.begin(at: 0, cpu: 0); _ = w.end(at: 80 * Self.ms, cpu: 0)
        #expect(w.longestSinceMark == 80 * Self.ms)
        w.resetLongestSinceMark()
        w.begin(at: 100 * Self.ms, cpu: 0); _ = w.end(at: 103 * Self.ms, cpu: 0)
        w.begin(at: 200 * Self.ms, cpu: 0); _ = w.end(at: 201 * Self.ms, cpu: 0)
        #expect(w.longestSinceMark == 3 * Self.ms)
        #expect(w.longest?.nanoseconds == 80 * Self.ms, "the all-time longest stays")
    }

    /// The warning clears only after a whole interval without a slow turn.
    @Test func slowWarningClearsAfterAQuietInterval() {
        var w = LoopTurnWatch()
        #expect(w.slowLinesMayClear(at: 0) == false, "nothing to clear before any warning")
        w.begin(at: 0, cpu: 0)
        let line = w.end(at: 60 * Self.ms, cpu: 0)
        #expect(line != nil)
        _ = w.slowLines.occurred(at: 60 * Self.ms)
        let interval = w.slowLines.interval
        #expect(w.slowLinesMayClear(at: 60 * Self.ms + interval - 1) == false)
        #expect(w.slowLinesMayClear(at: 60 * Self.ms + interval) == true)
    }

    /// A wake is late from the later of its timer's deadline and the end of the turn before: a
    /// wake 60 ms after an idle deadline is warned of and counted; one whose delay was a long turn
    /// before it (that turn's own warning) is not; the summary gives the count and the longest.
    @Test func lateWakesAreMeasuredFromTheLaterOfDeadlineAndLastTurn() {
        var w = LoopTurnWatch()
        w.begin(at: 0, cpu: 0); _ = w.end(at: 1 * Self.ms, cpu: 0)
        w.begin(at: 160 * Self.ms, cpu: 0)
        let line = w.woke(due: 100 * Self.ms) ?? ""
        #expect(line.hasPrefix("woke 60.0 ms after a timer was due"), "\(line)")
        _ = w.end(at: 161 * Self.ms, cpu: 0)
        // Due at 170 ms, but the turn before ran to 300 ms: woken at 310 ms is 10 ms after it.
        w.begin(at: 170 * Self.ms, cpu: 0); _ = w.end(at: 300 * Self.ms, cpu: 0)
        w.begin(at: 310 * Self.ms, cpu: 0)
        #expect(w.woke(due: 170 * Self.ms) == nil)
        _ = w.end(at: 311 * Self.ms, cpu: 0)
        // Exactly at the threshold is not late; just over it is, and a wake "at once" (deadline 1)
        // counts from the end of the turn before.
        w.begin(at: 361 * Self.ms, cpu: 0)
        #expect(w.woke(due: 311 * Self.ms) == nil)
        _ = w.end(at: 362 * Self.ms, cpu: 0)
        w.begin(at: 362 * Self.ms + 50 * Self.ms + 1, cpu: 0)
        #expect(w.woke(due: 1) != nil)
        _ = w.end(at: 500 * Self.ms, cpu: 3 * Self.ms)
        #expect(w.late.count == 2 && w.late.longest == 60 * Self.ms)
        let summary = w.summary ?? ""
        #expect(summary.contains("; 2 wakes over 50 ms after their timer, the longest 60.0 ms; the most CPU in one turn"), "\(summary)")
        #expect(w.late.mayClear(at: 10 * w.late.lines.interval) == false, "nothing to clear before any warning")
        _ = w.late.lines.occurred(at: 413 * Self.ms)
        let lastLate = 412 * Self.ms + 1
        #expect(w.late.mayClear(at: lastLate + w.late.lines.interval - 1) == false)
        #expect(w.late.mayClear(at: lastLate + w.late.lines.interval) == true)
    }
}
