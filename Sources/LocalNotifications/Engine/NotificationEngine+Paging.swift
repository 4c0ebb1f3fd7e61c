// Pending requests a page at a time, so a listing of 100k zones is never one answer: the control
// socket hands out pages in add order, each continuing after the last identifier of the one
// before.
import RecentIDs

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
        ids.reserveCapacity(table.slotOf.count)
        forEachInAddOrder { ids.append($0.request.identifier) }
        return ids
    }

    /// The first `limit` pending requests added after the one named `after` (nil: from the
    /// first), with their next fires; nil when `after` is neither pending nor among the last
    /// requests removed (`PagingOrder.recentlyRemoved`: a page continues after an item that fired or was
    /// removed meanwhile).
    /// - Complexity: O(log n + limit) to find the page (plus the stale entries skipped, O(1)
    ///   amortized each), and computing its `limit` next fires.
    public func pendingPage(after: String?, limit: Int, clock: EngineClock) -> PendingPage? {
        precondition(limit > 0, "a page holds at least one request")
        var from = Int64.min
        if let after {
            if let slot = table.slotOf[after], let e = table.slots[Int(slot)] {
                from = e.sequence
            } else if let s = paging.recentlyRemoved.value(for: after) {
                from = s
            } else {
                return nil
            }
        }
        var items: [PendingNotification] = []
        items.reserveCapacity(min(limit, table.slotOf.count))
        var i = paging.added.firstIndex(after: from)
        while i < paging.added.count, items.count < limit {
            if let e = liveEntry(paging.added[i]) { items.append(describe(e, clock: clock)) }
            i += 1
        }
        var more = false
        while i < paging.added.count, !more {
            more = liveEntry(paging.added[i]) != nil
            i += 1
        }
        return PendingPage(items: items, hasMore: more)
    }
}
