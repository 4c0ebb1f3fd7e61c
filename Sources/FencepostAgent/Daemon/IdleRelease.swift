// When to give memory back after work. A delivery writes the state file (SQLite's code and page
// cache), plays a pattern and may run the hook; a control request parses JSON and builds an answer.
// Each brings pages in that the idle loop never touches again: on an 8 MB-readahead VM one
// delivery added 1.2 MB to the resident size for good. Once the loop has had nothing to do for
// `quiet` after the last such work, the daemon does again what it did after start-up (trim the
// heap, drop read-only file pages from the page table). While work keeps coming (a drive, a
// delivery a second) the deadline keeps moving and nothing is released.

/// The deadline of the next release of idle memory.
/// - Complexity: O(1) per call.
struct IdleRelease {
    /// How long the loop must have been without work, nanoseconds.
    let quiet: UInt64
    /// When to release (boot-time nanoseconds), or nil while nothing has happened since the last.
    private(set) var deadline: UInt64?

    init(quiet: UInt64 = 10_000_000_000) {
        self.quiet = quiet
    }

    /// Work happened at `now`: the release waits until `quiet` after it.
    mutating func worked(at now: UInt64) {
        deadline = now &+ quiet
    }

    /// True once when the quiet time after the last work has passed (release now).
    mutating func isDue(at now: UInt64) -> Bool {
        guard let d = deadline, now >= d else { return false }
        deadline = nil
        return true
    }
}
