@testable import FencepostAgent
import Testing

/// When the control connections' memory is given back (ControlConnections trims the heap when
/// `burstIsOver()` says so).
@Suite struct BurstMemoryTests {
    /// A hundred partial lines of 60 kB: no connection alone reaches 1 MiB, together they do; the
    /// heap is trimmed once, when they are closed, not while many still hold theirs.
    @Test func manySmallHoldersMakeABurst() {
        var m = BurstMemory()
        for _ in 0..<100 { m.change(from: 0, to: 60_000) }
        #expect(m.total == 6_000_000 && m.peak == 6_000_000)
        #expect(m.burstIsOver() == false, "trimmed while 6 MB were held")
        for _ in 0..<90 { m.change(from: 60_000, to: 0) }
        #expect(m.burstIsOver() == false, "trimmed while ten partial lines (600 kB) are still held")
        for _ in 0..<10 { m.change(from: 60_000, to: 0) }
        #expect(m.burstIsOver() == true)
        #expect(m.burstIsOver() == false, "one trim per burst")
    }

    /// Small steady traffic is never a burst; a second burst after a trim is one again.
    @Test func steadyTrafficIsNoBurstAndBurstsRepeat() {
        var m = BurstMemory()
        for _ in 0..<10_000 {
            m.change(from: 0, to: 900)
            m.change(from: 900, to: 0)
            #expect(m.burstIsOver() == false)
        }
        for round in 0..<3 {
            m.change(from: 0, to: 2 << 20)
            #expect(m.burstIsOver() == false)
            m.change(from: 2 << 20, to: 1_000)
            #expect(m.burstIsOver() == true, "round \(round)")
            m.change(from: 1_000, to: 0)
        }
    }
}
