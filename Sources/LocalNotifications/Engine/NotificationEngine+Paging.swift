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
    /// - Complexity: O(n log n).
    public var pendingIdentifiers: [String] {
        var entries: [(sequence: Int64, id: String)] = []
        entries.reserveCapacity(slotOf.count)
        for case let e? in slots { entries.append((e.sequence, e.request.identifier)) }
        entries.sort { $0.sequence < $1.sequence }
        return entries.map { $0.id }
    }

    /// The first `limit` pending requests added after the one named `after` (nil: from the
    /// first), with their next fires; nil when `after` is not pending.
    /// - Complexity: O(n log limit) to choose the page, plus computing its `limit` next fires:
    ///   a page of 1,000 among 100k requests costs a scan, not a sort of all of them.
    public func pendingPage(after: String?, limit: Int, clock: EngineClock) -> PendingPage? {
        precondition(limit > 0, "a page holds at least one request")
        var from = Int64.min
        if let after {
            guard let slot = slotOf[after], let e = slots[Int(slot)] else { return nil }
            from = e.sequence
        }
        // The `limit` smallest sequences above `from`: a max-heap of size limit.
        var heap: [(sequence: Int64, slot: Int32)] = []
        heap.reserveCapacity(min(limit, slotOf.count))
        var more = false
        for (i, entry) in slots.enumerated() {
            guard let e = entry, e.sequence > from else { continue }
            if heap.count < limit {
                heap.append((e.sequence, Int32(i)))
                Self.siftUp(&heap, heap.count - 1)
            } else {
                more = true
                if e.sequence < heap[0].sequence {
                    heap[0] = (e.sequence, Int32(i))
                    Self.siftDown(&heap, 0)
                }
            }
        }
        heap.sort { $0.sequence < $1.sequence }
        var items: [PendingNotification] = []
        items.reserveCapacity(heap.count)
        for h in heap { if let e = slots[Int(h.slot)] { items.append(describe(e, clock: clock)) } }
        return PendingPage(items: items, hasMore: more)
    }

    private static func siftUp(_ h: inout [(sequence: Int64, slot: Int32)], _ start: Int) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            guard h[parent].sequence < h[i].sequence else { return }
            h.swapAt(parent, i)
            i = parent
        }
    }

    private static func siftDown(_ h: inout [(sequence: Int64, slot: Int32)], _ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var largest = i
            if l < h.count && h[l].sequence > h[largest].sequence { largest = l }
            if r < h.count && h[r].sequence > h[largest].sequence { largest = r }
            if largest == i { return }
            h.swapAt(i, largest)
            i = largest
        }
    }
}
