// Paging of the listings (`pending`, and the pending part of `status`): no answer grows with the
// number of requests. A page ends at `limit` items or at `maximumBytes` of JSON, whichever comes
// first (at least one item); `next` is the identifier to pass as `after` for the page that
// follows, null after the last.
import FencepostJSON
import LocalNotifications

/// `{"limit": n, "after": "id"}` of a listing call, and how a page is cut.
public struct ControlPage {
    /// The most items a page holds, whatever `limit` asks.
    public static let maximumItems = 5_000
    /// The most JSON bytes of items in one answer (one larger item still goes alone).
    static let maximumBytes = 512 * 1024

    /// Items asked for (nil: not given).
    var limit: Int?
    /// The identifier the page continues after (nil: from the first).
    var after: String?
    /// Whether the caller asked for a page (`limit` or `after` given).
    var isRequested: Bool { limit != nil || after != nil }

    /// Reads `limit` and `after` from `params` (the caller checks the other keys).
    init(_ params: JSONValue) throws(RPCError) {
        if let l = params["limit"] {
            guard let n = l.int64, n >= 1 else { throw RPCError.params("\"limit\" must be an integer ≥ 1, got \(l.serialized())") }
            limit = Int(min(n, Int64(Self.maximumItems)))
        }
        if let a = params["after"] {
            guard case .string(let s) = a else { throw RPCError.params("\"after\" must be the identifier of a pending request (a string), got \(a.kindDescription)") }
            after = s
        }
    }

    /// One page: the engine's requests after `after`, at most `limit` (default `defaultLimit`) and
    /// `maximumBytes`, each made JSON by `json`. Returns the items, the `next` identifier (nil
    /// when nothing follows) and the number of pending requests.
    /// `maximumItems`: the most this listing puts in one answer, whatever `limit` asks (a
    /// listing whose items cost more caps lower: one answer is one loop turn).
    func cut(_ engine: NotificationEngine, clock: EngineClock, defaultLimit: Int, maximumItems: Int = ControlPage.maximumItems,
             json: (PendingNotification) -> JSONValue) throws(RPCError) -> (items: [JSONValue], next: String?) {
        let wanted = min(limit ?? defaultLimit, maximumItems)
        guard let page = engine.pendingPage(after: after, limit: wanted, clock: clock) else {
            throw RPCError.params("\"after\": \"\(after ?? "")\" is not pending (removed meanwhile?); start again without \"after\"")
        }
        var items: [JSONValue] = []
        items.reserveCapacity(page.items.count)
        var bytes = 0
        var scratch: [UInt8] = []
        for (i, p) in page.items.enumerated() {
            let value = json(p)
            scratch.removeAll(keepingCapacity: true)
            value.serialize(into: &scratch)
            if !items.isEmpty && bytes + scratch.count > Self.maximumBytes {
                return (items, page.items[i - 1].request.identifier)
            }
            bytes += scratch.count + 1
            items.append(value)
        }
        let more = page.hasMore && !page.items.isEmpty
        return (items, more ? page.items[page.items.count - 1].request.identifier : nil)
    }
}
