// The pending requests' storage: entries in reusable slots (an Int32 names a request in the
// timing wheels and the add order), found by identifier in O(1).

/// Pending requests by slot and by identifier, with their counts per kind (the caps' inputs).
struct RequestTable {
    /// The entries; nil = a free slot, listed in `freeSlots` for reuse.
    var slots: [NotificationEngine.Entry?] = []
    var freeSlots: [Int32] = []
    var slotOf: [String: Int32] = [:]
    /// Calendar and interval requests pending (the pending cap counts these).
    var timeBasedCount = 0
    /// Location requests pending (the location cap counts these).
    var locationCount = 0

    /// Shrinks the slot arrays to their contents when more than an eighth of their room is spare.
    /// - Complexity: O(n) when it copies, O(1) otherwise.
    mutating func releaseSpareCapacity() {
        NotificationEngine.shrink(&slots)
        NotificationEngine.shrink(&freeSlots)
    }
}
