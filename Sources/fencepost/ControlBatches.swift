// Lists too long for one control message, sent as several: each message holds at most
// `maximumCount` items and its line at most the agent's message limit (`[socket]
// max_message_bytes`, 64 KiB unless configured). The first message assumes the default limit; an
// agent with a lower one refuses the line unread and says its limit, and the rest is cut again
// to that. An item longer than the limit alone still goes alone (the agent's limit may be
// higher): only the agent's refusal of it is an error. Whatever a message does, it does alone:
// the agent makes each one all or nothing, not the list (the commands that batch say what that
// means for them).
import FencepostJSON

struct ControlBatches {
    /// What a batch sends: `method` with `params(items)`.
    let method: String
    let maximumCount: Int
    /// The bytes of each item's JSON.
    private let sizes: [Int]
    /// The message's bytes besides the items and the commas between them.
    private let overhead: Int
    private(set) var limit = ControlClient.defaultMessageLimit

    /// - Parameter params: the params of a message carrying `items` (called with none to measure
    ///   the envelope).
    init(method: String, items: [JSONValue], maximumCount: Int, params: ([JSONValue]) -> JSONValue) {
        self.method = method
        self.maximumCount = maximumCount
        sizes = items.map { $0.serialized().utf8.count }
        overhead = ControlClient.requestLine(method, params([])).utf8.count
    }

    /// The items of the next message, starting at `start` (before the end): as many as fit,
    /// and at least the one at `start`.
    /// - Complexity: O(items taken).
    func next(from start: Int) -> Range<Int> {
        var bytes = overhead + sizes[start]
        var end = start + 1
        while end < sizes.count, end - start < maximumCount, bytes + 1 + sizes[end] <= limit {
            bytes += 1 + sizes[end]
            end += 1
        }
        return start ..< end
    }

    /// The line's bytes for the message of `items`.
    func messageBytes(of items: Range<Int>) -> Int { overhead + sizes[items].reduce(items.count - 1, +) }

    /// After the agent refused the message of `items` as longer than `agentLimit`: later
    /// messages are cut to that limit, and always shorter than the refused one.
    mutating func refused(_ items: Range<Int>, agentLimit: Int) {
        limit = min(agentLimit, messageBytes(of: items) - 1)
    }
}
