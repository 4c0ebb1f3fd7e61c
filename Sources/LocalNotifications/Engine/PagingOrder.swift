// The order pending requests were added in, for listings and pages that continue after the last
// identifier of the page before (NotificationEngine+Paging.swift).

/// Add order: each request's add sequence, the slots in that order, and the last removals.
struct PagingOrder {
    /// The add sequence the next request gets.
    var nextSequence: Int64 = 0
    /// The slots in add order, for listings and their pages.
    var added = AddOrder()
    /// The add sequences of the last requests removed (fired, removed or replaced), so that a
    /// page can continue after an item that left meanwhile.
    var recentlyRemoved = RecentlyRemoved()
}
