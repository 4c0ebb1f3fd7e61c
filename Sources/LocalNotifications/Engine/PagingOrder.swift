// The order pending requests were added in, for listings and pages that continue after the last
// identifier of the page before (NotificationEngine+Paging.swift).

import RecentIDs

/// Add order: each request's add sequence, the slots in that order, and the last removals.
struct PagingOrder {
    /// The add sequence the next request gets.
    var nextSequence: Int64 = 0
    /// The slots in add order, for listings and their pages.
    var added = AddOrder()
    /// The add sequences of the last requests removed (fired, removed or replaced), so that a
    /// page can continue after an item that left meanwhile.
    /// Where removed requests stood, for a while: a listing's page ends at an identifier and the
    /// next continues after it, also when that request fired or was removed between the two
    /// pages (an answer "not pending; start again" would keep a listing of one-shot requests that
    /// keep firing from ever finishing). O(1) per removal and lookup; 1,024 removals held.
    var recentlyRemoved = RecentMemory<String, Int64>(capacity: 1024)
}
