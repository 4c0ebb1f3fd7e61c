// Giving back the spare capacity of the engine's arrays. An array that grows by appends doubles
// its buffer: after a burst of adds up to half of it can be room that nothing uses until as many
// requests again are added (the embedded agent's 1,000 configured requests happened to fill 1,024
// slots of 288 bytes; 1,100 would have left 948 empty, 273 kB).

extension NotificationEngine {
    /// Shrinks the slot array (and the add-order list) to their contents when more than an eighth
    /// of their room is spare. The shell calls it when a burst of adds is over (after applying the
    /// configuration) and when the loop has been idle a while; later adds grow the arrays again.
    /// - Complexity: O(n) when it copies, O(1) otherwise.
    public mutating func releaseSpareCapacity() {
        table.releaseSpareCapacity()
        paging.added.releaseSpareCapacity()
    }

    /// The slot array's length, its room, and the free slots in it (for a debug log line).
    public var slotStorage: (count: Int, capacity: Int, free: Int) { (table.slots.count, table.slots.capacity, table.freeSlots.count) }

    /// Copies `array` into a buffer just large enough when more than an eighth of its room is spare.
    static func shrink<T>(_ array: inout [T]) {
        let spare = array.capacity - array.count
        guard spare > 0, spare > array.count / 8 else { return }
        if array.isEmpty { array = []; return }
        var exact: [T] = []
        exact.reserveCapacity(array.count)
        exact.append(contentsOf: array)
        array = exact
    }
}
