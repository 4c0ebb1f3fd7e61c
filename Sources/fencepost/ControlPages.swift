// Listings a page at a time: the agent answers at most a page (5,000 requests or 512 KiB), so
// `fencepost pending` and `fencepost status` ask for pages until `next` is null.
import ArgumentParser
import FencepostAgent
import FencepostJSON

enum ControlPages {
    /// Requests asked for per page: the most the agent gives (each page costs the agent a scan,
    /// so fewer, fuller pages; it still ends a page early at 512 KiB).
    static let pageSize = ControlPage.maximumItems

    /// `{"limit": n, "after": id}`.
    static func params(limit: Int, after: String?) -> JSONValue {
        var members: [(String, JSONValue)] = [("limit", .integer(Int64(limit)))]
        if let after { members.append(("after", .string(after))) }
        return .object(members)
    }

    /// Every item of a paged listing: calls `method` page after page, taking each page's items
    /// with `items`, until the answer's `next` is null.
    static func all(_ socket: String, _ method: String, after start: String? = nil,
                    items: (JSONValue) -> [JSONValue]) throws(ClientFailure) -> [JSONValue] {
        var out: [JSONValue] = []
        var after = start
        while true {
            let page = try ControlClient.call(socket, method, params(limit: pageSize, after: after))
            out += items(page)
            guard let next = page["next"]?.string else { return out }
            after = next
        }
    }
}

/// `--limit` and `--after` of the listings that page (`pending`, `status`).
struct PageOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Show one page of at most this many pending requests (the agent's answer in --json is then that page, with `next` and `total`).", valueName: "n"))
    var limit: Int?

    @Option(help: ArgumentHelp("Start after the pending request with this id (the `next` of the page before).", valueName: "id"))
    var after: String?

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    /// The params of the one page asked for, or nil when neither option was given (the whole list).
    var params: JSONValue? {
        limit == nil && after == nil ? nil : ControlPages.params(limit: limit ?? ControlPages.pageSize, after: after)
    }
}
