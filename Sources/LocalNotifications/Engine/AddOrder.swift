// The pending requests in add order, kept as they are added, so that a page of a listing is found
// by a binary search and read in O(page), not chosen by a scan of every request (a `status` page
// among 100k zones cost ~280 ms that way in a debug build, and held the loop for it).

/// Slots in add order: `(sequence, slot)` pairs in increasing sequence. A pair is live while the
/// slot still holds the entry with that sequence; removed and replaced requests leave stale pairs,
/// skipped when read and dropped by ``compact(isLive:)`` once they are as many as the live ones.
///
/// - Complexity: append O(1) amortized; ``firstIndex(after:)`` O(log n); memory 16 B a pair.
struct AddOrder {
    struct Pair {
        var sequence: Int64
        var slot: Int32
    }

    private(set) var pairs: [Pair] = []

    var count: Int { pairs.count }

    subscript(i: Int) -> Pair { pairs[i] }

    /// Shrinks the pair list to its contents when much of its room is spare (see
    /// ``NotificationEngine/releaseSpareCapacity()``).
    mutating func releaseSpareCapacity() { NotificationEngine.shrink(&pairs) }

    /// Adds the newest request. Its sequence is larger than every one before.
    mutating func append(sequence: Int64, slot: Int32) {
        #if DEBUG
        precondition(pairs.last.map { $0.sequence < sequence } ?? true, "AddOrder: sequences must increase")
        #endif
        pairs.append(Pair(sequence: sequence, slot: slot))
    }

    /// The index of the first pair whose sequence is above `sequence` (`count` when none).
    func firstIndex(after sequence: Int64) -> Int {
        var low = 0, high = pairs.count
        while low < high {
            let mid = (low + high) / 2
            if pairs[mid].sequence <= sequence { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Drops the stale pairs when they outnumber `live` (the pending count) plus a margin: each
    /// pair is dropped once, so the cost is O(1) amortized per removal.
    mutating func compactIfSparse(live: Int, isLive: (Pair) -> Bool) {
        guard pairs.count > 2 * live + 1024 else { return }
        pairs.removeAll { !isLive($0) }
        #if DEBUG
        precondition(pairs.count == live, "AddOrder: \(pairs.count) live pairs for \(live) pending requests")
        #endif
    }

    mutating func removeAll() { pairs.removeAll() }
}
