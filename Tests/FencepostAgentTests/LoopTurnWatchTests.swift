@testable import FencepostAgent
import Testing

/// The loop's turn timing: which turns are reported, what they name, the longest turn since a
/// zone-set build began, and when the slow-turn warning may be cleared.
@Suite struct LoopTurnWatchTests {
    static let ms: UInt64 = 1_000_000

    /// A slow turn names its long parts and counts; a fast turn after it says nothing unless it
    /// is the longest so far.
    @Test func slowTurnsAreNamedAndCounted() {
        var w = LoopTurnWatch()
        w.begin(at: 0)
        w.note({ "state sync (fsync)" }, from: 0, to: 70 * Self.ms)
        w.note({ "tiny" }, from: 70 * Self.ms, to: 70 * Self.ms + 10)
        let line = w.end(at: 71 * Self.ms)
        #expect(line == "loop turn took 71.0 ms: state sync (fsync) 70.0 ms", "\(line ?? "nil")")
        #expect(w.slowTurns == 1)
        #expect(w.longest?.nanoseconds == 71 * Self.ms)
        w.begin(at: 100 * Self.ms)
        #expect(w.end(at: 102 * Self.ms) == nil)
        #expect(w.slowTurns == 1)
    }

    /// The longest turn since the mark: the build's own figure, independent of earlier turns.
    @Test func longestSinceMarkStartsAgainAtTheMark() {
        var w = LoopTurnWatch()
        w.begin(at: 0); _ = w.end(at: 80 * Self.ms)
        #expect(w.longestSinceMark == 80 * Self.ms)
        w.resetLongestSinceMark()
        w.begin(at: 100 * Self.ms); _ = w.end(at: 103 * Self.ms)
        w.begin(at: 200 * Self.ms); _ = w.end(at: 201 * Self.ms)
        #expect(w.longestSinceMark == 3 * Self.ms)
        #expect(w.longest?.nanoseconds == 80 * Self.ms, "the all-time longest stays")
    }

    /// The warning clears only after a whole interval without a slow turn.
    @Test func slowWarningClearsAfterAQuietInterval() {
        var w = LoopTurnWatch()
        #expect(w.slowLinesMayClear(at: 0) == false, "nothing to clear before any warning")
        w.begin(at: 0)
        let line = w.end(at: 60 * Self.ms)
        #expect(line != nil)
        _ = w.slowLines.occurred(at: 60 * Self.ms)
        let interval = w.slowLines.interval
        #expect(w.slowLinesMayClear(at: 60 * Self.ms + interval - 1) == false)
        #expect(w.slowLinesMayClear(at: 60 * Self.ms + interval) == true)
    }
}
