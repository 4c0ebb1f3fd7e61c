// Work cut into loop turns (a new zone set's check, a large request list's apply): each slice
// is sized from the CPU time the last one took, so that a slice costs about `target` whatever
// the machine, the build (a debug build is 20–50× slower) or the items (a large polygon, a
// calendar rule): well inside a loop turn's 50 ms, with room for the turn's other work.

/// The size of the next slice of a job done across loop turns.
struct SliceBudget {
    /// Items in the next slice.
    private(set) var items: Int
    let bounds: ClosedRange<Int>
    /// CPU nanoseconds a slice aims at.
    let target: UInt64

    init(first: Int, bounds: ClosedRange<Int>, target: UInt64 = 2_000_000) {
        items = first
        self.bounds = bounds
        self.target = target
    }

    /// The last slice did `done` items in `cpu` nanoseconds: the next gets as many as fit
    /// `target` at that rate, growing at most fourfold (a slice of cheap items does not promise
    /// the next one the same), within `bounds`.
    mutating func record(_ done: Int, cpu: UInt64) {
        let fit = UInt64(max(done, 1)) &* target / max(cpu, 1)
        let next = Int(min(fit, UInt64(max(done, 1)) &* 4, UInt64(bounds.upperBound)))
        items = max(bounds.lowerBound, next)
    }
}
