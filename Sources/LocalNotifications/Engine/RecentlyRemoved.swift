// Where removed requests stood in add order, for a while: a listing's page ends at an identifier,
// and the next page continues after it; when that request fires or is removed between the two
// pages, the next page still knows where to continue (an answer "not pending; start again"
// would keep a listing of one-shot requests that keep firing from ever finishing).

/// The add sequences of the last `capacity` requests removed.
/// - Complexity: O(1) per removal and lookup; memory bounded by `capacity`.
struct RecentlyRemoved {
    let capacity: Int
    private var sequences: [String: Int64] = [:]
    private var ring: [String] = []
    private var next = 0

    init(capacity: Int = 1024) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// Remembers that `identifier` (add sequence `sequence`) was removed, forgetting the oldest.
    mutating func note(_ identifier: String, sequence: Int64) {
        if ring.count < capacity {
            ring.append(identifier)
        } else {
            let old = ring[next]
            if sequences[old] != nil, old != identifier { sequences[old] = nil }
            ring[next] = identifier
            next = (next + 1) % capacity
        }
        sequences[identifier] = sequence
        #if DEBUG
        precondition(sequences.count <= capacity, "RecentlyRemoved holds more than its capacity")
        #endif
    }

    /// Where `identifier` stood when it was removed, if that was among the last removals.
    func sequence(of identifier: String) -> Int64? { sequences[identifier] }
}
