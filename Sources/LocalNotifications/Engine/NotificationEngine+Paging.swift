// Pending requests a page at a time, so a listing of 100k zones is never one answer: the control
// socket hands out pages in add order, each continuing after the last identifier of the one
// before.

extension NotificationEngine {
    /// One page of pending requests in add order.
    public struct PendingPage {
        /// The requests of this page, at most the limit asked for.
        public var items: [PendingNotification]
        /// Whether requests follow the last item.
        public var hasMore: Bool
    }

    /// The identifiers of every pending request in add order, without computing next fires.
    /// - Complexity: O(n).
    public var pendingIdentifiers: [String] {
        var ids: [String] = []
        ids.reserveCapacity(slotOf.count)
        forEachInAddOrder { ids.append($0.request.identifier) }
        return ids
    }

    /// The first `limit` pending requests added after the one named `after` (nil: from the
    /// first), with their next fires; nil when `after` is neither pending nor among the last
    /// requests removed (``RecentlyRemoved``: a page continues after an item that fired or was
    /// removed meanwhile).
    /// - Complexity: O(log n + limit) to find the page (plus the stale entries skipped, O(1)
    ///   amortized each), and computing its `limit` next fires.
    public func pendingPage(after: String?, limit: Int, clock: EngineClock) -> PendingPage? {
        precondition(limit > 0, "a page holds at least one request")
        var from = Int64.min
        if let after {
            if let slot = slotOf[after], let e = slots[Int(slot)] {
                from = e.sequence
            } else if let s = recentlyRemoved.sequence(of: after) {
                from = s
            } else {
                return nil
            }
        }
        var items: [PendingNotification] = []
        items.reserveCapacity(min(limit, slotOf.count))
        var i = addOrder.firstIndex(after: from)
        while i < addOrder.count, items.count < limit {
            if let e = liveEntry(addOrder[i]) { items.append(describe(e, clock: clock)) }
            i += 1
        }
        var more = false
        while i < addOrder.count, !more {
            more = liveEntry(addOrder[i]) != nil
            i += 1
        }
        return PendingPage(items: items, hasMore: more)
    }
}
