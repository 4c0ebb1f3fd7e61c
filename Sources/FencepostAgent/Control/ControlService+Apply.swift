// `apply`: make the agent's configured requests and categories what a config file says,
// idempotently.
//
// Size: one job, the apply, from the socket's parameters through the plan's three phases to its
// result; the phases share the plan's cursors, and the apply at once is the same plan.
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
// zones built, serialized and parsed again). Both carry out one ApplyPlan, at once or in parts:
// the daemon's socket has the method only decode its params (``Call/defersApply``) and drives the
// plan in parts itself (AgentDaemon+PartedApply.swift), answering after the last part; other
// callers (the in-process service of tests, the fleet's desired document with its requests
// inline, the agent's start) apply at once.
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

    /// How many ids of each kind, by the socket's keys (the fleet's `reported` of a list too
    /// large to name them). O(1).
    public var counts: [(key: String, count: Int)] {
        [("added", added.count), ("replaced", replaced.count), ("removed", removed.count), ("unchanged", unchanged.count)]
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
    /// nil when the apply was refused (`refusal` says why) or failed.
    public var result: ApplyResult?
    /// Why it was refused: the error the socket's `apply` answers.
    public var refusal: RPCError?
    public var error: String? { refusal?.message }
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
        if call.defersApply {
            // The daemon's socket: the same plan, carried out in parts (AgentDaemon+PartedApply.swift).
            call.deferredApply = (requests, categories)
            return .null
        }
        // A desired document of the fleet comes through here from the link (answered by `remote`):
        // its memory is the fleet's.
        let owner: ApplyOwner = call.source == .remote ? .fleet : .configuration
        return try Self.apply(requests, categories: categories, owner: owner, &call, path: { items[$0].path }).json
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
            return ApplyReply(result: result, refusal: nil, output: call.output, fatal: call.fatal)
        } catch {
            return ApplyReply(result: nil, refusal: error, output: call.output, fatal: call.fatal)
        }
    }

    /// An apply to be carried out in parts (``ApplyPlan``), as ``apply(requests:fingerprints:categories:center:clock:)``
    /// would carry it out at once. O(1) here: it is worked out in the parts too.
    public func plan(requests: [NotificationRequest], fingerprints: [UInt64]?, categories: [NotificationCategory]?,
                     owner: ApplyOwner = .configuration, center: DurableNotificationCenter) -> ApplyPlan {
        ApplyPlan(requests, fingerprints: fingerprints, categories: categories, owner: owner, center: center)
    }

    /// The next part of `plan`, of up to `limit` items: worked out while it is not, then checked
    /// while any request is unchecked, then committed. The reply's `result` is set once the plan
    /// is done; `error` when it is refused (a part committed before stays; see ``ApplyPlan``);
    /// neither while parts remain.
    public mutating func continueApply(_ plan: inout ApplyPlan, limit: Int, center: DurableNotificationCenter, clock: EngineClock) -> ApplyReply {
        var call = Call(center: center, clock: clock, params: .null)
        let path = { (i: Int) in "requests[\(i)]" }
        do throws(RPCError) {
            switch plan.phase {
            case .workingOut: try plan.workOut(limit: limit, center: center, path: path)
            case .checking: try plan.check(limit: limit, engine: center.engine, clock: clock, path: path)
            case .committing, .done: try plan.commit(limit: limit, &call, path: path)
            }
            return ApplyReply(result: plan.isDone ? plan.result : nil, refusal: nil, output: call.output, fatal: call.fatal)
        } catch {
            return ApplyReply(result: nil, refusal: error, output: call.output, fatal: call.fatal)
        }
    }

    /// The one implementation of both doors: the plan, committed in one transaction.
    /// `path(i)` names request `i` in errors.
    static func apply(_ requests: [NotificationRequest], fingerprints given: [UInt64]? = nil, categories: [NotificationCategory]?,
                      owner: ApplyOwner = .configuration, _ call: inout Call, path: (Int) -> String) throws(RPCError) -> ApplyResult {
        var plan = ApplyPlan(requests, fingerprints: given, categories: categories, owner: owner, center: call.center)
        try plan.workOut(limit: Int.max, center: call.center, path: path)
        try plan.commit(limit: Int.max, &call, path: path)
        return plan.result
    }
}

/// An `apply` worked out: what changes, from the requests given and the memory of what was
/// applied (see the top of this file). Carried out at once, one transaction (the agent's start, an
/// inline desired document, the in-process service: ``ControlService/apply(_:fingerprints:categories:_:path:)``,
/// every step with no limit), or — a SIGHUP's configuration, the daemon's socket `apply`, a fleet's
/// request list, too large for one loop turn —
/// in parts of up to `limit` items, so that no part's work grows with the list
/// (AgentDaemon+PartedApply.swift drives them):
///
///   workOut(limit:)  ids       each request's id indexed; one given twice refuses the list
///                    memory    the memory read a page of `limit` rows at a time, each row
///                              matched to the request of its id, or (none) to be removed
///                    compare   each request fingerprinted (unless given), compared with its
///                              row: unchanged, or to add (replaced when pending)
///   check(limit:)    every request to add checked as `add` checks it (rules, category, zone,
///                    schedule), changing nothing: the first broken rule refuses the whole list
///   commit(limit:)   the first part sets the categories; each part then makes up to `limit`
///                    removals, then adds, each remembered (or forgotten) in the same
///                    transaction
///
/// Between parts the agent runs on (fixes, deliveries, the socket). Nothing but a plan of the
/// same owner writes its memory's rows (the daemon runs one plan in parts at a time, and a newer
/// apply of its owner, in parts or at once, stops the one under way), but between the memory's
/// pages a request may be evicted (its row deleted): a row read before counts as it was, one
/// after is missing — each as an apply at once read at that moment would have it. A stop
/// between parts is completed by applying the same list again: what a part committed is
/// remembered as applied and comes out unchanged. A part can fail after the check only through
/// a change made between parts by another door (a category removed, a calendar rule's last fire
/// passed); the parts before it stay, and the error names the request.
///
/// Stored properties: the apply's inputs (requests, fingerprints, owner, categories), its result,
/// and the cursor of each phase (the working-out's step, position, index and memory read; the
/// counts checked, committed and removed), each read by the part that continues it.
public struct ApplyPlan {
    /// Where an apply is: each phase runs in parts, in this order.
    public enum Phase: Sendable, Equatable { case workingOut, checking, committing, done }

    let requests: [NotificationRequest]
    /// `AppliedRequests.fingerprint(of:)` of each request: given, or made while comparing.
    private var fingerprints: [UInt64]
    /// Whose memory of what was applied it compares with and writes.
    let owner: ApplyOwner
    /// What the apply does, by id (complete once worked out).
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

    // The working-out.
    enum Step { case ids, memory, compare, done }
    /// The working-out's step: a part ends where one ends (see workOut).
    private(set) var step = Step.ids
    /// The next request of the step (ids, compare).
    private var next = 0
    /// Request index by id (ids, memory).
    private var index: [String: Int] = [:]
    /// The fingerprint the memory holds for each request, nil when none (memory, compare).
    private var remembered: [UInt64?] = []
    /// The install position (seq) of the last row of the memory read.
    private var memoryRead: Int64 = 0
    /// Items worked out so far: requests indexed and compared, rows of the memory read.
    private(set) var workedOut = 0

    /// An apply of `requests` (with their `fingerprints`, when made beforehand) and
    /// `categories`, with `owner`'s memory; nothing worked out yet (``workOut(limit:center:path:)``).
    /// - Complexity: O(the categories).
    init(_ requests: [NotificationRequest], fingerprints given: [UInt64]?, categories: [NotificationCategory]?, owner: ApplyOwner,
         center: DurableNotificationCenter) {
        precondition(given == nil || given?.count == requests.count, "one fingerprint per request")
        self.requests = requests
        self.owner = owner
        fingerprints = given ?? []
        newCategories = categories.flatMap { $0 == center.engine.categories ? nil : $0 }
    }

    /// The phase the next part runs.
    public var phase: Phase {
        if step != .done { return .workingOut }
        if checked < toAdd.count { return .checking }
        return isDone ? .done : .committing
    }
    /// Nothing (more) to commit.
    public var isDone: Bool {
        guard step == .done else { return false }
        return begun ? committed == toAdd.count && removed == result.removed.count : toAdd.isEmpty && result.removed.isEmpty && newCategories == nil
    }
    /// Worked out, and every request to add is checked.
    public var isChecked: Bool { step == .done && checked == toAdd.count }
    /// Items worked out; requests to add, checked and committed so far; ids removed so far: the
    /// work done (`of` is known once worked out).
    public var progress: (workedOut: Int, checked: Int, committed: Int, of: Int, removed: Int) {
        (workedOut, checked, committed, toAdd.count, removed)
    }

    /// Works out up to `limit` more items (requests indexed, rows of the memory read, requests
    /// compared), in order: an id given twice (the second is named) or a memory that cannot be
    /// read refuses the apply. The memory's pages are one query each. A part (a `limit` below
    /// `Int.max`) ends where a step ends: an item of each costs differently (a compare without
    /// its fingerprint given makes it, many times an id indexed), so their parts are sized apart.
    /// - Complexity: O(`limit`) (a page of the memory: O(log m + `limit`)).
    mutating func workOut(limit: Int, center: DurableNotificationCenter, path: (Int) -> String) throws(RPCError) {
        var room = max(limit, 1)
        let first = step
        while room > 0 && step != .done && (limit == Int.max || step == first) {
            switch step {
            case .ids:
                if next == 0 {
                    index.reserveCapacity(requests.count)
                    remembered.reserveCapacity(requests.count)
                }
                let count = min(room, requests.count - next), end = next + count
                while next < end {
                    let id = requests[next].identifier
                    if let first = index.updateValue(next, forKey: id) {
                        index[id] = first
                        throw RPCError.rule(RequestError(.identifier, "id \"\(id)\" is given twice"), at: path(next))
                    }
                    remembered.append(nil)
                    next += 1
                }
                room -= count
                workedOut += count
                if next == requests.count { step = .memory; next = 0 }
            case .memory:
                let page: (records: [AppliedRequestRecord], last: Int64)
                do { page = try center.store.appliedRequests(owner: owner, after: memoryRead, limit: room) } catch {
                    throw RPCError(.serverError, "the state file could not be read: \(error)")
                }
                for row in page.records { remember(row) }
                memoryRead = page.last
                workedOut += page.records.count
                if page.records.count < room {
                    // The whole memory is read. A version 1 file's (empty table) at once: see
                    // AppliedRequests.legacy.
                    if memoryRead == 0, let legacy = AppliedRequests.legacy(center, owner: owner) {
                        fromLegacyMeta = true
                        for row in legacy { remember(row) }
                        workedOut += legacy.count
                    }
                    index = [:]
                    step = .compare
                }
                room -= max(page.records.count, 1)
            case .compare:
                if next == 0 && fingerprints.isEmpty { fingerprints.reserveCapacity(requests.count) }
                let count = min(room, requests.count - next), end = next + count
                while next < end {
                    let r = requests[next]
                    if fingerprints.count == next { fingerprints.append(AppliedRequests.fingerprint(of: r)) }
                    if remembered[next] == fingerprints[next] { result.unchanged.append(r.identifier) } else {
                        toAdd.append(next)
                        if center.engine.isPending(r.identifier) { result.replaced.append(r.identifier) } else { result.added.append(r.identifier) }
                    }
                    next += 1
                }
                room -= count
                workedOut += count
                if next == requests.count { step = .done; remembered = [] }
            case .done: break
            }
        }
    }

    /// A row of the memory: the fingerprint of the request of its id, or a removal when the
    /// list has none (in the memory's order).
    private mutating func remember(_ row: AppliedRequestRecord) {
        if let i = index[row.id] { remembered[i] = row.fingerprint } else { result.removed.append(row.id) }
    }

    /// Checks up to `limit` more requests as `add` would, against the categories the apply
    /// sets (else the engine's), changing nothing; the first part checks those categories first,
    /// as the first commit does (the same error, in the same order, as the apply at once).
    public mutating func check(limit: Int, engine: NotificationEngine, clock: EngineClock, path: (Int) -> String) throws(RPCError) {
        precondition(step == .done, "an apply is checked once worked out")
        if checked == 0, let categories = newCategories {
            do throws(RequestError) { try NotificationEngine.checkCategories(categories) } catch {
                throw RPCError.rule(error, at: "categories")
            }
        }
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
        precondition(step == .done, "an apply is committed once worked out")
        guard !isDone else { return }
        let removing = result.removed[removed..<min(result.removed.count, removed + max(limit, 1))]
        let room = max(limit, 1) - removing.count
        let end = removed + removing.count == result.removed.count ? min(toAdd.count, committed + room) : committed
        let adding = toAdd[committed..<end]
        // The memory of what is applied, in the same transaction: from a version 1 file, its
        // meta value goes and the unchanged requests are written as rows with the first part
        // (O(n) in one part: only the configuration's memory has that form, applied at once);
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
        // The engine is changed in place, and only once the part is known to go through: the
        // categories and each add checked first (as setCategories and add check them; removals
        // cannot fail), so that a refused part changes nothing. No copy of the engine, here or
        // outside the operation: one alive while the engine changes would make the change copy
        // every pending request (copy-on-write), O(n) a part.
        _ = try call.perform(store: memory, path: { failedAt }) {
            (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in
            if first, let categories {
                failedAt = "categories"
                try NotificationEngine.checkCategories(categories)
            }
            for i in adding {
                failedAt = path(i)
                try e.check(requests[i], clock: clock, categories: first ? categories : nil)
            }
            var out = EngineOutput()
            do throws(RequestError) {
                if first, let categories { out.append(try e.setCategories(categories)) }
                if !removals.isEmpty { out.append(e.removePending(removals)) }
                for i in adding { out.append(try e.add(requests[i], clock: clock)) }
            } catch {
                preconditionFailure("a part's categories and adds were checked before any change: \(error)")
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
            return out
        }
        begun = true
        removed += removing.count
        committed = end
    }
}
