// When to give the heap back after a burst of control traffic. The connections' buffers (partial
// lines, queued answers) are freed as they close, but glibc keeps freed pages in the middle of the
// heap; `malloc_trim` returns them. Trimming costs a walk of the heap, so it is done once per
// burst: when what all connections hold together reached `burst` bytes and is back under `calm`.

/// The bytes all control connections hold together, and whether a burst of them just ended.
///
/// A check of each connection alone would miss the common burst: a hundred clients holding
/// 60 kB each never make one connection reach 1 MiB, so the heap would never be trimmed after
/// them.
/// - Complexity: O(1) per call.
struct BurstMemory {
    /// A burst: the total reached this many bytes.
    let burst: Int
    /// Calm again: the total is under this many bytes.
    let calm: Int
    /// Bytes held now.
    private(set) var total = 0
    /// The highest total since the last trim.
    private(set) var peak = 0

    init(burst: Int = 1 << 20, calm: Int = 65_536) {
        self.burst = burst
        self.calm = calm
    }

    /// One connection's holding went from `old` to `new` bytes (a closed one: to 0).
    mutating func change(from old: Int, to new: Int) {
        total += new - old
        peak = max(peak, total)
        #if DEBUG
        precondition(total >= 0, "BurstMemory: more released than held")
        #endif
    }

    /// True once when a burst is over (trim the heap now); the next burst is measured from here.
    mutating func burstIsOver() -> Bool {
        guard peak >= burst, total < calm else { return false }
        peak = total
        return true
    }
}
