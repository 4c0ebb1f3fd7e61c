// Request lists applied in parts, one part per loop turn (the control service's ApplyPlan): a
// SIGHUP's configuration (AgentDaemon+Reload.swift), the control socket's `apply` (decoded in
// its connection's turn, ControlService.handle(deferringApply:)) and a fleet rollout's list
// (AgentDaemon+FleetBlobs.swift), by one driver. At once, an apply is O(requests) in one turn:
// 150–410 ms for 4,000 changed location requests in a debug build; in parts, ~100 turns of at
// most a few ms each.
//
//   asked        the plan is made (O(the categories): nothing is worked out yet)
//   each turn    one part, sized by SliceBudget (~2 ms of CPU): worked out (compared with the
//                memory of what its owner applied, read a page a part), then every request to
//                add checked as `add` checks it (a broken rule refuses the whole list, nothing
//                applied), then committed, a transaction a part
//   the turn after the last part
//                the regions' index is built on a thread (AgentDaemon+RegionIndex.swift); the
//                configuration logs `configuration applied: …`, the fleet link hears the result,
//                the socket's connection gets its answer (the one the apply made at once gives)
//
// One apply in parts at a time. The configuration's and the fleet's applies write apart memories
// (ApplyOwner) but one engine: a part of one can change what a check of the other's relied on
// (the categories), and two plans of one owner would each work out against a memory the other
// is changing. So:
//   - a newer apply of the owner of the one under way (a second SIGHUP's configuration, a newer
//     desired document's list) replaces it between parts: what its parts committed is remembered
//     as applied, and the newer one is worked out against that memory, from its first part;
//   - an apply of the other owner waits for the one under way to end (stopped, refused or
//     applied), its plan made when it begins, against the state then; a newer one of its owner
//     replaces it while it waits;
//   - the socket's `apply` is the configuration owner's newer word (its memory is the
//     configuration's): it replaces a SIGHUP's apply or an earlier socket apply, under way or
//     waiting, and waits behind a fleet apply under way; a SIGHUP's apply likewise replaces a
//     socket apply. A socket apply replaced is answered with an error ("replaced by a newer
//     apply", saying how many of its requests were applied), never left unanswered;
//   - the connection that sent a socket apply owes its answer until the apply ends: it answers
//     nothing else meanwhile (its later lines are answered after, in order: ControlConnections);
//     if it closes meanwhile the apply goes on to its end, and the answer is dropped (the client
//     asked for the apply; going on is what an apply at once, already made, would have done);
//   - a fleet apply also stops between parts when a newer desired document replaced its rollout
//     (its list, if any, comes in as a newer apply);
//   - a desired document with its requests inline, applied at once with the fleet's memory, is
//     the other owner's word to a configuration's apply under way: that goes on, and a part that
//     what it changed refuses (a category removed) ends it as ApplyPlan says, naming the request.
// At start, before the loop serves, the configuration is applied at once
// (``AgentDaemon/applyConfiguredRequests()``).
import CivilTime
import Fleet
import FencepostLinux
import LocalNotifications

/// Who asked for an apply in parts, whose memory it writes, and who hears how it ended.
enum PartedApplyOrigin {
    /// A SIGHUP's configuration: the end is logged.
    case configuration
    /// A fleet rollout's request list: the link hears the end.
    case fleet(FleetBlobRollout, FleetRequestList)
    /// The control socket's `apply` on connection `connection`, JSON-RPC id `id` (nil: a
    /// notification): the connection gets the answer (``DeferredApply/answer(_:_:)``).
    case socket(connection: UInt32, id: RPCID?)

    var owner: ApplyOwner {
        switch self {
        case .configuration, .socket: .configuration
        case .fleet: .fleet
        }
    }

    /// The log lines' prefix.
    var name: String {
        switch self {
        case .configuration: "configuration"
        case .fleet(let r, _): "fleet: \(r.name)"
        case .socket(let c, _): "control connection \(c): apply"
        }
    }

    /// Why the one under way stops when this one, newer, of its owner comes.
    var replaced: String {
        switch self {
        case .configuration: "a newer configuration replaced it"
        case .fleet: "a newer desired document replaced it"
        case .socket: "the socket's apply replaced it"
        }
    }
}

/// A list to apply in parts, until its plan is made.
struct PartedApplyRequest {
    let origin: PartedApplyOrigin
    let requests: [NotificationRequest]
    /// `AppliedRequests.fingerprint(of:)` of each request, when made beforehand (off the loop).
    let fingerprints: [UInt64]?
    /// nil: the categories are left as they are.
    let categories: [NotificationCategory]?
}

/// An apply under way, one part per loop turn.
struct PartedApply {
    var plan: ApplyPlan
    let origin: PartedApplyOrigin
    /// When its plan was made (boot-time nanoseconds).
    let started: UInt64
    var budget = PartedApply.firstBudget
    /// A part's first size: ~1 ms of commits in a debug build.
    static let firstBudget = SliceBudget(first: 16, bounds: 4 ... 65536)
    var parts = 0
    var longestPart: UInt64 = 0
}

/// The apply in parts under way, and the one of the other owner waiting for it to end.
struct PartedApplies {
    var current: PartedApply?
    /// Only while `current` runs, and never of its owner.
    var waiting: PartedApplyRequest?
    /// Connections whose socket apply was answered: the lines they sent after it wait in their
    /// framers, served by the loop in the same turn (``AgentDaemon/serveSettledConnections(now:)``).
    var settled: [UInt32] = []
}

extension AgentDaemon {
    /// Applies `request`'s list in parts from the next loop turn on: at once when none is under
    /// way or the one under way is of its owner (stopped: replaced), else when that one ends.
    func applyInParts(_ request: PartedApplyRequest) {
        if let current = applies.current {
            guard current.origin.owner == request.origin.owner else {
                if let old = applies.waiting {
                    log.info("\(old.origin.name): its apply, waiting, is dropped: \(request.origin.replaced)")
                    partedApplyReplaced(old.origin, committed: 0, of: old.requests.count)
                }
                applies.waiting = request
                log.info("\(request.origin.name): its \(request.requests.count) requests wait for the apply under way (\(current.origin.name)) to end")
                return
            }
            stopPartedApply(because: request.origin.replaced)
        }
        beginPartedApply(request)
    }

    /// Serves the lines that connections sent after their socket apply, now answered (each may
    /// be an apply again, or end one that waits, answering another connection).
    func serveSettledConnections(now: UInt64) {
        while !applies.settled.isEmpty {
            let ids = applies.settled
            applies.settled = []
            for id in ids { _ = handleConnection(id, now: now) }
        }
    }

    /// The plan of `request`, made against the state now; its parts follow.
    private func beginPartedApply(_ request: PartedApplyRequest) {
        let begin = SystemClocks.boottimeNow().nanosecondsSinceBoot
        let plan = control.plan(requests: request.requests, fingerprints: request.fingerprints, categories: request.categories,
                                owner: request.origin.owner, center: center)
        applies.current = PartedApply(plan: plan, origin: request.origin, started: begin)
        log.info("\(request.origin.name): applying \(request.requests.count) requests in parts")
    }

    /// The apply that waited, if any, begins.
    private func beginWaitingApply() {
        guard let w = applies.waiting else { return }
        applies.waiting = nil
        beginPartedApply(w)
    }

    /// The apply under way ends between parts, saying how far it got.
    private func stopPartedApply(because reason: String) {
        guard let a = applies.current else { return }
        applies.current = nil
        let p = a.plan.progress
        log.info("\(a.origin.name): apply stopped after \(p.committed) of \(p.of) requests: \(reason)")
        partedApplyReplaced(a.origin, committed: p.committed, of: p.of)
    }

    /// An apply stopped, or dropped while it waited, for a newer one: a socket's is answered.
    private func partedApplyReplaced(_ origin: PartedApplyOrigin, committed: Int, of: Int) {
        guard case .socket = origin else { return }
        let refusal = PartedApplyRefusal(error: RPCError(.serverError, "replaced by a newer apply before it ended"), committed: committed, of: of)
        partedApplyEnded(origin, .failure(refusal))
    }

    /// One part of the apply under way (a loop turn's): worked out, checked or committed, sized
    /// to the turn; when done, or refused, its origin hears how it ended, and the apply that
    /// waited begins.
    func continuePartedApply() {
        guard var a = applies.current else { return }
        if case .fleet(let r, _) = a.origin, fleet?.rollout !== r {
            stopPartedApply(because: a.origin.replaced)
            beginWaitingApply()
            return
        }
        if a.plan.isDone {
            // The turn after the last part: the regions' index, on a thread (not at the next
            // fix, whose delivery would wait for it).
            applies.current = nil
            let took = SystemClocks.boottimeNow().nanosecondsSinceBoot &- a.started
            log.info("\(a.origin.name): applied in \(a.parts) loop turns, \(LoopTurnWatch.milliseconds(took)) in all, the longest part \(LoopTurnWatch.milliseconds(a.longestPart))")
            prepareRegionIndexOffLoop()
            partedApplyEnded(a.origin, .success(a.plan.result))
            Memory.releaseFreePages()
            beginWaitingApply()
            return
        }
        let begin = SystemClocks.boottimeNow().nanosecondsSinceBoot
        let beginCPU = SystemClocks.threadCPUNow()
        let before = a.plan.progress, phase = a.plan.phase, step = a.plan.step
        let reply = control.continueApply(&a.plan, limit: a.budget.items, center: center, clock: clock)
        if let fatal = reply.fatal {
            self.fatal(fatal)
            if case .socket = a.origin, let error = reply.refusal {
                // The agent stops; the connection hears the error the apply at once gives.
                applies.current = nil
                partedApplyEnded(a.origin, .failure(PartedApplyRefusal(error: error, committed: 0, of: 0)))
            }
            return
        }
        act(on: reply.output)
        let after = a.plan.progress
        if a.plan.phase != phase || a.plan.step != step {
            // A phase, or a step of the working-out, has ended: an item of the next costs many
            // times one of this (ids < compare; working out < check < commit), so its parts are
            // sized afresh.
            a.budget = PartedApply.firstBudget
            if phase == .workingOut && a.plan.phase != phase && reply.error == nil {
                log.info("\(a.origin.name): worked out in parts: \(after.of) requests to add or replace, \(a.plan.result.removed.count) to remove, \(a.plan.result.unchanged.count) unchanged")
            }
        } else {
            a.budget.record(after.workedOut - before.workedOut + after.checked - before.checked + after.committed - before.committed
                            + after.removed - before.removed, cpu: SystemClocks.threadCPUNow() &- beginCPU)
        }
        a.parts += 1
        a.longestPart = max(a.longestPart, SystemClocks.boottimeNow().nanosecondsSinceBoot &- begin)
        if let error = reply.refusal {
            applies.current = nil
            partedApplyEnded(a.origin, .failure(PartedApplyRefusal(error: error, committed: after.committed, of: after.of)))
            beginWaitingApply()
            return
        }
        applies.current = a
    }

    /// An apply in parts has ended: applied, or refused by `error` (parts committed before it
    /// stay: ``ApplyPlan``). The fleet link hears it; the configuration's is logged.
    private func partedApplyEnded(_ origin: PartedApplyOrigin, _ outcome: Result<ApplyResult, PartedApplyRefusal>) {
        switch origin {
        case .configuration:
            switch outcome {
            case .success(let result): configurationApplied(result, error: nil)
            case .failure(let e): configurationApplied(nil, error: e.message + e.appliedBefore)
            }
        case .fleet(let r, let list):
            fleet?.requestsApplied(r, list, outcome.mapError { e in
                FleetError(e.committed > 0 ? "desired.partial" : "desired.rejected", e.message + e.appliedBefore)
            })
        case .socket(let connection, let id):
            if case .failure(let e) = outcome { log.info("\(origin.name): not applied: \(e.message + e.appliedBefore)") }
            // The error the apply at once gives (refused before any commit); one that ends it
            // after a part was committed says so.
            let line = DeferredApply.answer(id, outcome.mapError { e in
                var error = e.error
                error.message += e.appliedBefore
                return error
            })
            let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
            if clients.settle(connection, answer: line, now: now, durability: { replyDurability() }) {
                applies.settled.append(connection)
            }
        }
    }
}

/// Why an apply in parts was refused, and how much of it was committed before.
struct PartedApplyRefusal: Error {
    /// The error that refused it (the socket's `apply` answers it).
    let error: RPCError
    let committed: Int
    let of: Int

    var message: String { error.message }

    /// ` (3 of 9 requests were applied before it)`, or nothing when none was.
    var appliedBefore: String { committed > 0 ? " (\(committed) of \(of) requests were applied before it)" : "" }
}
