import TimingWheel
import SeededRandom

extension SplitMix64 {
    /// `true` with probability `percent` / 100.
    mutating func percent(_ percent: UInt64) -> Bool { below(100) < percent }
}

/// The obvious priority queue the wheel is checked against: pending timers in an array sorted by
/// (deadline, schedule sequence).
struct ReferenceTimers {
    struct Entry {
        var deadline: UInt64
        var sequence: UInt64
        var handle: TimerHandle
        var payload: Int
    }

    private(set) var entries: [Entry] = []
    private var keyOf: [TimerHandle: (deadline: UInt64, sequence: UInt64)] = [:]
    private var nextSequence: UInt64 = 0

    var count: Int { entries.count }
    var nextDeadline: UInt64? { entries.first?.deadline }

    mutating func schedule(_ handle: TimerHandle, at deadline: UInt64, payload: Int) {
        let sequence = nextSequence
        nextSequence += 1
        // Upper bound of `deadline`: later sequences go after equal deadlines.
        var low = 0
        var high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].deadline <= deadline { low = mid + 1 } else { high = mid }
        }
        entries.insert(Entry(deadline: deadline, sequence: sequence, handle: handle, payload: payload), at: low)
        keyOf[handle] = (deadline, sequence)
    }

    /// The payload, or nil when the handle is not pending.
    mutating func cancel(_ handle: TimerHandle) -> Int? {
        guard let key = keyOf.removeValue(forKey: handle) else { return nil }
        // Lower bound of (deadline, sequence).
        var low = 0
        var high = entries.count
        while low < high {
            let mid = (low + high) / 2
            let entry = entries[mid]
            if (entry.deadline, entry.sequence) < (key.deadline, key.sequence) { low = mid + 1 } else { high = mid }
        }
        precondition(entries[low].sequence == key.sequence)
        return entries.remove(at: low).payload
    }

    /// Removes and returns every entry with deadline <= now, in order.
    mutating func advance(to now: UInt64) -> [Entry] {
        let end = entries.firstIndex { $0.deadline > now } ?? entries.count
        let fired = Array(entries[..<end])
        entries.removeFirst(end)
        for entry in fired { keyOf[entry.handle] = nil }
        return fired
    }

    /// Removes and returns the first `limit` entries with deadline <= now, in order, and whether
    /// entries with deadline <= now are left.
    mutating func advance(to now: UInt64, limit: Int) -> (fired: [Entry], more: Bool) {
        let due = entries.firstIndex { $0.deadline > now } ?? entries.count
        let end = min(due, limit)
        let fired = Array(entries[..<end])
        entries.removeFirst(end)
        for entry in fired { keyOf[entry.handle] = nil }
        return (fired, due > end)
    }

    func isPending(_ handle: TimerHandle) -> Bool { keyOf[handle] != nil }
}
