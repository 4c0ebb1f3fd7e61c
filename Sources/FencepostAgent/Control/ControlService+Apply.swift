// `apply`: make the agent's configured requests and categories what a config file says,
// idempotently.
//
// The requests `apply` installed are remembered (id → a fingerprint of their JSON as applied, see
// AppliedRequests.swift) in the store, written in the same transaction as the changes; the
// configuration's and the fleet's memories are apart (ApplyOwner): each apply compares with, and
// removes from, its own. Against
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
        // A desired document of the fleet comes through here from the link (answered by `remote`):
        // its memory is the fleet's.
        return try Self.apply(requests, categories: categories, owner: call.source == .remote ? .fleet : .configuration, &call,
                              path: { items[$0].path }).json
    }

    /// Applies decoded requests and categories, as the socket's `apply` does (same rules, same
    /// all-or-nothing commit, same memory of what was applied), without their JSON text.
    /// `fingerprints`, when given, are `AppliedRequests.fingerprint(of:)` of each request, made
    /// beforehand (a SIGHUP makes them on the thread that read the file: ~6 µs a request).
    ///
    /// - Complexity: O(n) in the requests given and remembered, plus the engine's adds; one
    ///   transaction when anything changes, none otherwise.
    public mutating func apply(requests: [NotificationRequest], fingerprints: [UInt64]? = nil, categories: [NotificationCategory]?,
                               owner: ApplyOwner = .configuration, center: DurableNotificationCenter, clock: EngineClock) -> ApplyReply {
        precondition(fingerprints == nil || fingerprints?.count == requests.count, "one fingerprint per request")
        var call = Call(center: center, clock: clock, params: .null)
        do throws(RPCError) {
            let result = try Self.apply(requests, fingerprints: fingerprints, categories: categories, owner: owner, &call, path: { "requests[\($0)]" })
            return ApplyReply(result: result, error: nil, output: call.output, fatal: call.fatal)
        } catch {
            return ApplyReply(result: nil, error: error.message, output: call.output, fatal: call.fatal)
        }
    }

    /// Works out an apply to be carried out in parts (``ApplyPlan``), as ``apply(requests:fingerprints:categories:center:clock:)``
    /// would carry it out at once; nil and the reason when it is refused (an id given twice, the
    /// state file unreadable).
    public func plan(requests: [NotificationRequest], fingerprints: [UInt64]?, categories: [NotificationCategory]?,
                     owner: ApplyOwner = .configuration, center: DurableNotificationCenter) -> Result<ApplyPlan, RPCError> {
        do throws(RPCError) {
            return .success(try ApplyPlan(requests, fingerprints: fingerprints, categories: categories, owner: owner, center: center,
                                          path: { "requests[\($0)]" }))
        } catch { return .failure(error) }
    }

    /// The next part of `plan`: up to `limit` requests checked while any is unchecked, then
    /// committed. The reply's `result` is set once the plan is done; `error` when it is refused
    /// (a part committed before stays; see ``ApplyPlan``); neither while parts remain.
    public mutating func continueApply(_ plan: inout ApplyPlan, limit: Int, center: DurableNotificationCenter, clock: EngineClock) -> ApplyReply {
        var call = Call(center: center, clock: clock, params: .null)
        let path = { (i: Int) in "requests[\(i)]" }
        do throws(RPCError) {
            if plan.isChecked { try plan.commit(limit: limit, &call, path: path) } else {
                try plan.check(limit: limit, engine: center.engine, clock: clock, path: path)
            }
            return ApplyReply(result: plan.isDone ? plan.result : nil, error: nil, output: call.output, fatal: call.fatal)
        } catch {
            return ApplyReply(result: nil, error: error.message, output: call.output, fatal: call.fatal)
        }
    }

    /// The one implementation of both doors: the plan, committed in one transaction.
    /// `path(i)` names request `i` in errors.
    static func apply(_ requests: [NotificationRequest], fingerprints given: [UInt64]? = nil, categories: [NotificationCategory]?,
                      owner: ApplyOwner = .configuration, _ call: inout Call, path: (Int) -> String) throws(RPCError) -> ApplyResult {
        var plan = try ApplyPlan(requests, fingerprints: given, categories: categories, owner: owner, center: call.center, path: path)
        try plan.commit(limit: Int.max, &call, path: path)
        return plan.result
    }
}

/// An `apply` worked out: what changes, from the requests given and the memory of what was
/// applied (see the top of this file). Carried out in one transaction (the socket, a SIGHUP:
/// ``ControlService/apply(_:fingerprints:categories:_:path:)``), or — a list too large for one
/// loop turn, from the fleet — checked in parts, then committed in parts, each part a
/// transaction of its own:
///
///   check(limit:)    every request to add checked as `add` checks it (rules, category, zone,
///                    schedule), changing nothing: the first broken rule refuses the whole list
///   commit(limit:)   the first part sets the categories; each part then makes up to `limit`
///                    removals, then adds, each remembered (or forgotten) in the same
///                    transaction
///
/// Between parts the agent runs on (fixes, deliveries, the socket). A stop between them is
/// completed by applying the same list again: what a part committed is remembered as applied
/// and comes out unchanged. A part can fail after the check only through a change made between
/// parts by another door (a category removed, a calendar rule's last fire passed); the parts
/// before it stay, and the error names the request.
public struct ApplyPlan {
    let requests: [NotificationRequest]
    let fingerprints: [UInt64]
    /// Whose memory of what was applied it compares with and writes.
    let owner: ApplyOwner
    /// What the apply does, by id.
    public private(set) var result = ApplyResult()
    /// The requests to add, by index, in order; those before `committed` are in force, those
    /// before `checked` were checked.
    private var toAdd: [Int] = []
    private(set) var checked = 0
    private(set) var committed = 0
    /// Ids of `result.removed` removed (and forgotten) so far.
    private var removed = 0
    private var newCategories: [NotificationCategory]?
    /// The memory is a version 1 file's meta value: the first part rewrites it as rows.
    private var fromLegacyMeta = false
    /// Whether the first part (categories and removals) is in force.
    private var begun = false

    /// Works out the apply: ids unique (else the second is named), the memory read, each request
    /// compared with it. O(n) in the requests given and remembered.
    init(_ requests: [NotificationRequest], fingerprints given: [UInt64]?, categories: [NotificationCategory]?, owner: ApplyOwner,
         center: DurableNotificationCenter, path: (Int) -> String) throws(RPCError) {
        precondition(given == nil || given?.count == requests.count, "one fingerprint per request")
        var seen: Set<String> = []
        seen.reserveCapacity(requests.count)
        for (i, r) in requests.enumerated() where !seen.insert(r.identifier).inserted {
            throw RPCError.rule(RequestError(.identifier, "id \"\(r.identifier)\" is given twice"), at: path(i))
        }
        let before: AppliedRequests
        do { before = try AppliedRequests.load(center, owner: owner) } catch {
            throw RPCError(.serverError, "the state file could not be read: \(error)")
        }
        var old: [String: UInt64] = [:]
        old.reserveCapacity(before.records.count)
        for record in before.records { old[record.id] = record.fingerprint }
        self.requests = requests
        self.owner = owner
        fingerprints = given ?? requests.map { AppliedRequests.fingerprint(of: $0) }
        for (i, r) in requests.enumerated() {
            if old[r.identifier] == fingerprints[i] { result.unchanged.append(r.identifier); continue }
            toAdd.append(i)
            if center.engine.isPending(r.identifier) { result.replaced.append(r.identifier) } else { result.added.append(r.identifier) }
        }
        result.removed = before.records.lazy.map { $0.id }.filter { !seen.contains($0) }
        newCategories = categories.flatMap { $0 == center.engine.categories ? nil : $0 }
        fromLegacyMeta = before.fromLegacyMeta
    }

    /// Nothing (more) to commit.
    public var isDone: Bool {
        begun ? committed == toAdd.count && removed == result.removed.count : toAdd.isEmpty && result.removed.isEmpty && newCategories == nil
    }
    /// Every request to add is checked.
    public var isChecked: Bool { checked == toAdd.count }
    /// Requests to add, checked and committed so far, and ids removed so far: the work done.
    public var progress: (checked: Int, committed: Int, of: Int, removed: Int) { (checked, committed, toAdd.count, removed) }

    /// Checks up to `limit` more requests as `add` would, against the categories the apply
    /// sets (else the engine's), changing nothing.
    public mutating func check(limit: Int, engine: NotificationEngine, clock: EngineClock, path: (Int) -> String) throws(RPCError) {
        let end = min(toAdd.count, checked + max(limit, 1))
        while checked < end {
            let i = toAdd[checked]
            do throws(RequestError) { try engine.check(requests[i], clock: clock, categories: newCategories) } catch {
                throw RPCError.rule(error, at: path(i))
            }
            checked += 1
        }
    }

    /// Commits the next part, one transaction: the first part sets the categories; the parts
    /// make the removals, then the adds, up to `limit` of them a part, each remembered (or
    /// forgotten) in the same transaction.
    mutating func commit(limit: Int, _ call: inout Call, path: (Int) -> String) throws(RPCError) {
        guard !isDone else { return }
        let removing = result.removed[removed..<min(result.removed.count, removed + max(limit, 1))]
        let room = max(limit, 1) - removing.count
        let end = removed + removing.count == result.removed.count ? min(toAdd.count, committed + room) : committed
        let adding = toAdd[committed..<end]
        // The memory of what is applied, in the same transaction: from a version 1 file, its
        // meta value goes and the unchanged requests are written as rows with the first part;
        // else only what changed.
        var memory: [StoreChange] = []
        for id in removing { memory.append(.removeAppliedRequest(id: id)) }
        if !begun && fromLegacyMeta {
            memory.append(.removeMeta(key: AppliedRequests.legacyMetaKey))
            let changing = Set(toAdd)
            for (i, r) in requests.enumerated() where !changing.contains(i) {
                memory.append(.putAppliedRequest(AppliedRequestRecord(id: r.identifier, fingerprint: fingerprints[i], owner: owner)))
            }
        }
        for i in adding {
            memory.append(.putAppliedRequest(AppliedRequestRecord(id: requests[i].identifier, fingerprint: fingerprints[i], owner: owner)))
        }
        let clock = call.clock, first = !begun
        let categories = newCategories, removals = Array(removing), requests = requests
        var failedAt = ""
        // No local copy of the engine outside the operation: one alive across the commit would
        // make the engine's mutation copy every request (copy-on-write).
        _ = try call.perform(store: memory, path: { failedAt }) {
            (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in
            var copy = e
            var out = EngineOutput()
            if first, let categories {
                failedAt = "categories"
                out.append(try copy.setCategories(categories))
            }
            if !removals.isEmpty { out.append(copy.removePending(removals)) }
            for i in adding {
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
        begun = true
        removed += removing.count
        committed = end
    }
}
