// `apply`: make the agent's configured requests and categories what a config file says,
// idempotently.
//
// The requests `apply` installed are remembered (id → their JSON as applied) in the store's meta,
// written in the same transaction as the changes. Against that memory:
//   - absent now                 → removed (if still pending)
//   - JSON as applied before     → unchanged: not touched, their progress is kept; a one-shot that
//                                  already fired (or was removed by hand) is not brought back
//   - new, or JSON differs       → added (replaced when a request with that id is pending)
// Requests added with `add` are never removed by `apply`. Categories are replaced only when the
// list differs. Applying the same thing twice writes nothing the second time.
import FencepostJSON
import LocalNotifications

extension ControlService {
    /// The requests `apply` installed, from the meta at first use.
    mutating func appliedRequests(_ center: DurableNotificationCenter) -> [(id: String, json: JSONValue)] {
        if let applied { return applied }
        var list: [(id: String, json: JSONValue)] = []
        if let text = center.meta[Self.appliedMetaKey], case .object(let members)? = try? JSONValue.parse(text) {
            list = members.map { ($0.key, $0.value) }
        }
        applied = list
        return list
    }

    /// `apply` `{"requests":[…],"categories":[…]}` → `{"added","replaced","removed","unchanged"}`
    /// (ids). `categories` absent: the categories are left as they are.
    mutating func apply(_ call: inout Call) throws(RPCError) -> JSONValue {
        try call.keys(["requests", "categories"])
        var items: [(path: String, value: JSONValue)] = []
        switch call.params["requests"] {
        case nil: break
        case .array(let list)?: items = list.enumerated().map { ("requests[\($0.offset)]", $0.element) }
        case let v?: throw RPCError.params("\"requests\" must be an array, got \(v.kindDescription)")
        }
        let requests = try Self.decode(items)
        var seen: Set<String> = []
        for (i, r) in requests.enumerated() where !seen.insert(r.identifier).inserted {
            throw RPCError.rule(RequestError(.identifier, "id \"\(r.identifier)\" is given twice"), at: items[i].path)
        }
        var categories: [NotificationCategory]? = nil
        switch call.params["categories"] {
        case nil: break
        case .array(let list)?: categories = try Self.decodeCategories(list, path: "categories")
        case let v?: throw RPCError.params("\"categories\" must be an array, got \(v.kindDescription)")
        }

        let before = appliedRequests(call.center)
        let old = Dictionary(before.map { ($0.id, $0.json) }, uniquingKeysWith: { a, _ in a })
        let engine = call.center.engine
        var added: [String] = [], replaced: [String] = [], unchanged: [String] = []
        var toAdd: [(index: Int, request: NotificationRequest)] = []
        var now: [(id: String, json: JSONValue)] = []
        for (i, r) in requests.enumerated() {
            let json = r.json
            now.append((r.identifier, json))
            if old[r.identifier] == json { unchanged.append(r.identifier); continue }
            toAdd.append((i, r))
            if engine.pending(r.identifier, clock: call.clock) != nil { replaced.append(r.identifier) } else { added.append(r.identifier) }
        }
        let removed = before.map(\.id).filter { !seen.contains($0) }
        let removePending = removed.filter { engine.pending($0, clock: call.clock) != nil }
        let newCategories = categories.flatMap { $0 == engine.categories ? nil : $0 }

        if !toAdd.isEmpty || !removed.isEmpty || newCategories != nil {
            let meta = JSONValue.object(now.map { ($0.id, $0.json) }).serialized()
            let clock = call.clock
            var failedAt = ""
            _ = try call.perform(meta: [(Self.appliedMetaKey, meta)], path: { failedAt }) {
                (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in
                var copy = e
                var out = EngineOutput()
                if let newCategories {
                    failedAt = "categories"
                    out.append(try copy.setCategories(newCategories))
                }
                out.append(copy.removePending(removePending))
                for (i, r) in toAdd {
                    failedAt = items[i].path
                    out.append(try copy.add(r, clock: clock))
                }
                e = copy
                return out
            }
            applied = now
        }
        func list(_ ids: [String]) -> JSONValue { .array(ids.map(JSONValue.string)) }
        return .object([("added", list(added)), ("replaced", list(replaced)), ("removed", list(removed)), ("unchanged", list(unchanged))])
    }
}
