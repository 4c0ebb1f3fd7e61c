@testable import FencepostAgent
import Testing

/// When the daemon gives memory back after work (AgentDaemon calls ``IdleRelease/isDue(at:)``
/// after each loop turn and arms its timer for ``IdleRelease/deadline``).
@Suite struct IdleReleaseTests {
    static let second: UInt64 = 1_000_000_000

    /// Nothing to release before any work; once after the quiet time that follows work.
    @Test func releasesOnceAQuietTimeAfterWork() {
        var r = IdleRelease(quiet: 10 * Self.second)
        #expect(r.deadline == nil)
        #expect(r.isDue(at: 100 * Self.second) == false, "released without any work")
        r.worked(at: 5 * Self.second)
        #expect(r.deadline == 15 * Self.second)
        #expect(r.isDue(at: 14 * Self.second) == false, "released before the quiet time was over")
        #expect(r.isDue(at: 15 * Self.second) == true)
        #expect(r.deadline == nil)
        #expect(r.isDue(at: 30 * Self.second) == false, "released twice for one piece of work")
    }

    /// Work keeps moving the deadline (a delivery a second, a drive's fixes): no release until
    /// the work stops.
    @Test func steadyWorkPostponesTheRelease() {
        var r = IdleRelease(quiet: 10 * Self.second)
        for t in 0 ..< 120 {
            r.worked(at: UInt64(t) * Self.second)
            #expect(r.isDue(at: UInt64(t) * Self.second + Self.second / 2) == false, "released during steady work at \(t) s")
        }
        #expect(r.isDue(at: 129 * Self.second) == true)
    }
}
