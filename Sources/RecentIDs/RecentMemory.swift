// The last `capacity` keys written, each with a value: a bounded memory of recent identifiers
// (removed requests for paging, command ids and event ids for duplicate suppression).
//
// Design: a ring of the last `capacity` writes, each tagged with a stamp that grows by one per
// write, and a dictionary from key to its value and the stamp of its latest write. Evicting the
// oldest write removes its key only when that write is the key's latest: a key written again
// since (a request removed, re-added and removed again) stays, with its newer value. So the keys
// held are exactly the distinct keys among the last `capacity` writes.
//
// Complexity: O(1) amortised per write and lookup (one dictionary operation each); memory
// bounded by `capacity` ring slots and at most `capacity` dictionary entries.

/// The distinct keys among the last `capacity` writes, each with its latest value.
public struct RecentMemory<Key: Hashable, Value> {
    public let capacity: Int
    private var latest: [Key: Entry] = [:]
    private var ring: [Slot] = []
    private var head = 0
    private var stamp: UInt64 = 0

    fileprivate struct Entry {
        var value: Value
        var stamp: UInt64
    }

    fileprivate struct Slot {
        var key: Key
        var stamp: UInt64
    }

    /// - Precondition: `capacity > 0`.
    public init(capacity: Int) {
        precondition(capacity > 0, "RecentMemory needs a capacity of at least one")
        self.capacity = capacity
    }

    /// Keys held now (at most `capacity`).
    public var count: Int { latest.count }

    /// The value of `key`'s latest write, if it is among the last `capacity` writes.
    public func value(for key: Key) -> Value? { latest[key]?.value }

    public func contains(_ key: Key) -> Bool { latest[key] != nil }

    /// Writes `key` with `value` as the newest write (a key already held takes the new value and
    /// the newest place), forgetting the oldest write past `capacity`.
    public mutating func write(_ key: Key, _ value: Value) {
        stamp &+= 1
        let slot = Slot(key: key, stamp: stamp)
        if ring.count < capacity {
            ring.append(slot)
        } else {
            let old = ring[head]
            if let entry = latest[old.key], entry.stamp == old.stamp { latest[old.key] = nil }
            ring[head] = slot
            head = head + 1 == capacity ? 0 : head + 1
        }
        latest[key] = Entry(value: value, stamp: stamp)
    }
}

extension RecentMemory where Value == Void {
    /// Records `key` unless it is held: false when it was seen among the last `capacity` new
    /// keys (a duplicate), true when it is new (then it is written as the newest).
    public mutating func insertIfNew(_ key: Key) -> Bool {
        guard latest[key] == nil else { return false }
        write(key, ())
        return true
    }
}

extension RecentMemory: Sendable where Key: Sendable, Value: Sendable {}
extension RecentMemory.Entry: Sendable where Key: Sendable, Value: Sendable {}
extension RecentMemory.Slot: Sendable where Key: Sendable, Value: Sendable {}
