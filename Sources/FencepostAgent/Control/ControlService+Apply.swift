// `apply`: make the agent's configured requests and categories what a config file says,
// idempotently.
//
// The requests `apply` installed are remembered (id → a fingerprint of their JSON as applied, see
// AppliedRequests.swift) in the store, written in the same transaction as the changes. Against
// that memory:
//   - absent now                 → removed (if still pending)
//   - JSON as applied before     → unchanged: not touched, their progress is kept; a one-shot that
//                                  already fired (or was removed by hand) is not brought back
//   - new, or JSON differs       → added (replaced when a request with that id is pending)
// Requests added with `add` are never removed by `apply`. Categories are replaced only when the
// list differs. Applying the same thing twice writes nothing the second time.
//
// Two doors, one behaviour: the socket method (JSON in, JSON out) and ``ControlService/apply(requests:categories:center:clock:)``,
// which the daemon calls with its configuration's decoded requests (no JSON text of a million
// zones built, serialized and parsed again).
import FencepostJSON
import FencepostLinux
import LocalNotifications

/// What `apply` did, by request id.
public struct ApplyResult: Sendable, Equatable {
    public var added: [String] = []
    public var replaced: [String] = []
    public var removed: [String] = []
    public var unchanged: [String] = []

    public init() {}

    /// The socket's result: `{"added":[…],"replaced":[…],"removed":[…],"unchanged":[…]}`.
    public var json: JSONValue {
        func list(_ ids: [String]) -> JSONValue { .array(ids.map(JSONValue.string)) }
        return .object([("added", list(added)), ("replaced", list(replaced)), ("removed", list(removed)), ("unchanged", list(unchanged))])
    }

    /// For a log line: `2 added (a, b), 0 replaced, 1 removed (c), 99997 unchanged`; at most
    /// `listed` ids per kind, the rest counted.
    public func summary(listed: Int = 10) -> String {
        func part(_ ids: [String], _ name: String) -> String {
            guard !ids.isEmpty, name != "unchanged" else { return "\(ids.count) \(name)" }
            let shown = ids.prefix(listed).joined(separator: ", ")
            return "\(ids.count) \(name) (\(shown)\(ids.count > listed ? ", …" : ""))"
        }
        return [part(added, "added"), part(replaced, "replaced"), part(removed, "removed"), part(unchanged, "unchanged")]
            .joined(separator: ", ")
    }
}

/// The daemon's in-process apply: what it did, or why it did nothing.
public struct ApplyReply {
    /// nil when the apply was refused (`error` says why) or failed.
    public var result: ApplyResult?
    public var error: String?
    /// Deliveries and acknowledgements to act on (already committed).
    public var output: EngineOutput
    /// The state file could not be written: the daemon must stop.
    public var fatal: CenterError?
}

extension ControlService {
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
        var categories: [NotificationCategory]? = nil
        switch call.params["categories"] {
        case nil: break
        case .array(let list)?: categories = try Self.decodeCategories(list, path: "categories")
        case let v?: throw RPCError.params("\"categories\" must be an array, got \(v.kindDescription)")
        }
        return try Self.apply(requests, categories: categories, &call, path: { items[$0].path }).json
    }

    /// Applies decoded requests and categories, as the socket's `apply` does (same rules, same
    /// all-or-nothing commit, same memory of what was applied), without their JSON text.
    /// `fingerprints`, when given, are `AppliedRequests.fingerprint(of:)` of each request, made
    /// beforehand (a SIGHUP makes them on the thread that read the file: ~6 µs a request).
    ///
    /// - Complexity: O(n) in the requests given and remembered, plus the engine's adds; one
    ///   transaction when anything changes, none otherwise.
    public mutating func apply(requests: [NotificationRequest], fingerprints: [UInt64]? = nil, categories: [NotificationCategory]?,
                               center: DurableNotificationCenter, clock: EngineClock) -> ApplyReply {
        precondition(fingerprints == nil || fingerprints?.count == requests.count, "one fingerprint per request")
        var call = Call(center: center, clock: clock, params: .null)
        do throws(RPCError) {
            let result = try Self.apply(requests, fingerprints: fingerprints, categories: categories, &call, path: { "requests[\($0)]" })
            return ApplyReply(result: result, error: nil, output: call.output, fatal: call.fatal)
        } catch {
            return ApplyReply(result: nil, error: error.message, output: call.output, fatal: call.fatal)
        }
    }

    /// The one implementation of both doors. `path(i)` names request `i` in errors.
    static func apply(_ requests: [NotificationRequest], fingerprints given: [UInt64]? = nil, categories: [NotificationCategory]?,
                      _ call: inout Call, path: (Int) -> String) throws(RPCError) -> ApplyResult {
        var seen: Set<String> = []
        seen.reserveCapacity(requests.count)
        for (i, r) in requests.enumerated() where !seen.insert(r.identifier).inserted {
            throw RPCError.rule(RequestError(.identifier, "id \"\(r.identifier)\" is given twice"), at: path(i))
        }
        let before: AppliedRequests
        do { before = try AppliedRequests.load(call.center) } catch {
            throw RPCError(.serverError, "the state file could not be read: \(error)")
        }
        var old: [String: UInt64] = [:]
        old.reserveCapacity(before.records.count)
        for record in before.records { old[record.id] = record.fingerprint }

        // No local copy of the engine: one alive across the commit below would make the engine's
        // mutation copy every request (copy-on-write).
        var result = ApplyResult()
        var toAdd: [Int] = []
        let fingerprints = given ?? requests.map { AppliedRequests.fingerprint(of: $0) }
        for (i, r) in requests.enumerated() {
            let fingerprint = fingerprints[i]
            if old[r.identifier] == fingerprint { result.unchanged.append(r.identifier); continue }
            toAdd.append(i)
            if call.center.engine.isPending(r.identifier) { result.replaced.append(r.identifier) } else { result.added.append(r.identifier) }
        }
        old = [:]
        result.removed = before.records.lazy.map { $0.id }.filter { !seen.contains($0) }
        let removePending = result.removed.filter { call.center.engine.isPending($0) }
        let newCategories = categories.flatMap { $0 == call.center.engine.categories ? nil : $0 }
        guard !toAdd.isEmpty || !result.removed.isEmpty || newCategories != nil else { return result }

        // The memory of what is applied, in the same transaction: from a version 1 file all of
        // it (and its meta value goes); else only what changed.
        var memory: [StoreChange] = []
        if before.fromLegacyMeta {
            memory.append(.removeMeta(key: AppliedRequests.legacyMetaKey))
            for (i, r) in requests.enumerated() {
                memory.append(.putAppliedRequest(AppliedRequestRecord(id: r.identifier, fingerprint: fingerprints[i])))
            }
        } else {
            for id in result.removed { memory.append(.removeAppliedRequest(id: id)) }
            for i in toAdd {
                memory.append(.putAppliedRequest(AppliedRequestRecord(id: requests[i].identifier, fingerprint: fingerprints[i])))
            }
        }
        let clock = call.clock
        var failedAt = ""
        _ = try call.perform(store: memory, path: { failedAt }) {
            (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in
            var copy = e
            var out = EngineOutput()
            if let newCategories {
                failedAt = "categories"
                out.append(try copy.setCategories(newCategories))
            }
            out.append(copy.removePending(removePending))
            for i in toAdd {
                failedAt = path(i)
                out.append(try copy.add(requests[i], clock: clock))
            }
            // Each add says the next generation; only the last matters (a million zones, a million of them).
            if let last = out.changes.lastIndex(where: { if case .setNextGeneration = $0 { true } else { false } }) {
                var kept: [StateChange] = []
                kept.reserveCapacity(out.changes.count / 2 + 1)
                for (i, change) in out.changes.enumerated() {
                    if case .setNextGeneration = change, i != last { continue }
                    kept.append(change)
                }
                out.changes = kept
            }
            e = copy
            return out
        }
        return result
    }
}
