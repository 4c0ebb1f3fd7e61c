// The methods over requests, deliveries and categories (`apply` and `status` have their own files).
import CivilTime
import FencepostJSON
import Geofencing
import LocalNotifications

extension ControlService {
    /// `add` `{"request":{…}}` or `{"requests":[…]}` → `{"added":[ids],"evicted":[outcome…]}`.
    /// All or nothing: the first broken rule answers -32602 and nothing is added.
    mutating func add(_ call: inout Call) throws(RPCError) -> JSONValue {
        try call.keys(["request", "requests"])
        let items: [(path: String, value: JSONValue)]
        switch (call.params["request"], call.params["requests"]) {
        case (let r?, nil): items = [("request", r)]
        case (nil, .array(let list)?): items = list.enumerated().map { ("requests[\($0.offset)]", $0.element) }
        default: throw RPCError.params("give {\"request\":{…}} or {\"requests\":[…]}")
        }
        let requests = try Self.decode(items)
        let clock = call.clock
        var failedAt = ""
        let out = try call.perform(path: { failedAt }) { (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in
            // One request: `add` is atomic itself (it throws before it changes anything). Several:
            // all or nothing, on a copy (which costs a copy of the whole engine).
            if requests.count == 1 {
                failedAt = items[0].path
                return try e.add(requests[0], clock: clock)
            }
            var copy = e
            var out = EngineOutput()
            for (i, r) in requests.enumerated() {
                failedAt = items[i].path
                out.append(try copy.add(r, clock: clock))
            }
            e = copy
            return out
        }
        return .object([("added", .array(requests.map { .string($0.identifier) })),
                         ("evicted", .array(out.outcomes.filter { $0.kind == .evicted }.map { $0.json }))])
    }

    static func decode(_ items: [(path: String, value: JSONValue)]) throws(RPCError) -> [NotificationRequest] {
        var requests: [NotificationRequest] = []
        for (path, v) in items {
            do { requests.append(try NotificationRequest(json: v)) } catch { throw RPCError.rule(error, at: path) }
        }
        return requests
    }

    /// `pending` `{}` → `[{"request":{…},"nextFire":"…"|null,"regionState":…|null,"waitingFor":…|null}]`
    /// when they fit in one answer (ControlPage), else a -32000 error that says to page;
    /// `{"limit":n,"after":id}` → `{"pending":[…],"next":id|null,"total":n}`, one page in add order.
    func pending(_ call: inout Call) throws(RPCError) -> JSONValue {
        try call.keys(["limit", "after"])
        let page = try ControlPage(call.params)
        let engine = call.center.engine
        // Unpaged, more than a page can hold: refused before any work (the byte bound is known
        // only once the items are made, below).
        if !page.isRequested && engine.pendingCount > ControlPage.maximumItems { throw Self.needsPages(engine.pendingCount) }
        let (items, next) = try page.cut(engine, clock: call.clock, defaultLimit: ControlPage.maximumItems, json: Self.pendingJSON)
        if page.isRequested {
            return .object([("pending", .array(items)), ("next", next.map(JSONValue.string) ?? .null),
                            ("total", .integer(Int64(engine.pendingCount)))])
        }
        guard next == nil else { throw Self.needsPages(engine.pendingCount) }
        return .array(items)
    }

    static func needsPages(_ count: Int) -> RPCError {
        RPCError(.serverError, "\(count) pending requests do not fit in one answer (at most \(ControlPage.maximumItems) requests or \(ControlPage.maximumBytes / 1024) KiB): ask for pages with {\"limit\":…,\"after\":…} (`fencepost pending` does)")
    }

    static func pendingJSON(_ p: PendingNotification) -> JSONValue {
        .object([("request", p.request.json), ("nextFire", p.nextFire.map { .string($0.description) } ?? .null),
                 ("regionState", p.regionState.map { .string(regionName($0)) } ?? .null),
                 ("waitingFor", p.waitingFor.map(JSONValue.string) ?? .null)])
    }

    static func regionName(_ s: RegionState) -> String {
        switch s {
        case .inside: "inside"
        case .outside: "outside"
        case .unknown: "unknown"
        }
    }

    /// `remove` `{"ids":[…]}` or `{"all":true}` → `{"removed":[ids]}` (the ids that were pending).
    /// - Complexity: O(k) for k ids (each looked up, none repeated); O(n log n) for all.
    func remove(_ call: inout Call) throws(RPCError) -> JSONValue {
        let ids = try call.idsOrAll()
        // No copy of the engine is kept across the removal below: a live copy would make that
        // mutation copy every request (copy-on-write), O(n) again.
        let removed = Self.pendingAmong(ids, in: call.center)
        _ = try call.perform { (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in
            ids == nil ? e.removeAllPending() : e.removePending(removed)
        }
        return .object([("removed", .array(removed.map(JSONValue.string)))])
    }

    /// The pending ones of `ids`, each once, in the order given; nil: every pending identifier.
    static func pendingAmong(_ ids: [String]?, in center: DurableNotificationCenter) -> [String] {
        guard let ids else { return center.engine.pendingIdentifiers }
        var seen = Set<String>()
        return ids.filter { center.engine.isPending($0) && seen.insert($0).inserted }
    }

    /// `delivered` `{}` → `[delivery…]`, oldest first.
    func delivered(_ call: inout Call) throws(RPCError) -> JSONValue {
        try call.keys([])
        return .array(call.center.engine.delivered.map { $0.json })
    }

    /// `removeDelivered` `{"ids":[…]}` or `{"all":true}` → `{"removed":[ids]}`; their signals stop.
    /// - Complexity: O(d + k) for k ids among d deliveries (d ≤ delivered_cap): one pass, hashed lookups.
    func removeDelivered(_ call: inout Call) throws(RPCError) -> JSONValue {
        let ids = try call.idsOrAll()
        var existing: [String] = []
        for d in call.center.engine.delivered { existing.append(d.identifier) }
        let removed: [String]
        if let ids {
            let wanted = Set(ids)
            removed = existing.filter { wanted.contains($0) }
        } else {
            removed = existing
        }
        _ = try call.perform { (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in
            ids == nil ? e.removeAllDelivered() : e.removeDelivered(removed)
        }
        return .object([("removed", .array(removed.map(JSONValue.string)))])
    }

    /// `ack` `{"delivery":id,"action":"default"}` → `{"delivery":id,"action":…,"snoozed":"<id>~snooze"|null}`.
    func ack(_ call: inout Call) throws(RPCError) -> JSONValue {
        try call.keys(["delivery", "action"])
        guard case .string(let delivery)? = call.params["delivery"] else {
            throw RPCError.params("\"delivery\" must be the id of a delivered notification (a string)")
        }
        var action = ActionIdentifier.default
        if let a = call.params["action"] {
            guard case .string(let s) = a, !s.isEmpty else { throw RPCError.params("\"action\" must be a non-empty string") }
            action = s
        }
        let clock = call.clock
        let snoozeID = call.center.engine.delivered.first { $0.identifier == delivery }
            .map { NotificationEngine.snoozeIdentifier(of: $0.requestIdentifier) }
        let out = try call.perform { (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in
            try e.respond(to: delivery, action: action, clock: clock)
        }
        var snoozed: JSONValue = .null
        for case .putRequest(let r, _) in out.changes where r.identifier == snoozeID {
            snoozed = .string(r.identifier)
        }
        return .object([("delivery", .string(delivery)), ("action", .string(action)), ("snoozed", snoozed)])
    }

    /// `categories` `{}` → `[category…]`; `{"set":[…]}` replaces them all and returns the new list.
    func categories(_ call: inout Call) throws(RPCError) -> JSONValue {
        try call.keys(["set"])
        if let set = call.params["set"] {
            guard case .array(let list) = set else { throw RPCError.params("\"set\" must be an array of categories, got \(set.kindDescription)") }
            let categories = try Self.decodeCategories(list, path: "set")
            _ = try call.perform { (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in
                try e.setCategories(categories)
            }
        }
        return .array(call.center.engine.categories.map { $0.json })
    }

    static func decodeCategories(_ list: [JSONValue], path: String) throws(RPCError) -> [NotificationCategory] {
        var out: [NotificationCategory] = []
        for (i, v) in list.enumerated() {
            do { out.append(try NotificationCategory(json: v)) } catch { throw RPCError.rule(error, at: "\(path)[\(i)]") }
        }
        return out
    }
}
