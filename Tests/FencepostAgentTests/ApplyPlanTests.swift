@testable import FencepostAgent
import FencepostJSON
import FencepostLinux
import Foundation
@testable import LocalNotifications
import SeededRandom
import Testing

/// `apply` carried out in parts (ApplyPlan: worked out, checked, then committed a part per
/// transaction), as a request list from the fleet is: it must end exactly where the apply at
/// once ends, do no more than its limit's worth of work a part, refuse a list with a broken rule
/// before any part, and a stop between parts must be completed by applying the same list again.
@Suite struct ApplyPlanTests {
    /// A request of kind `k` (interval, calendar, location), seeded by `v` (a changed `v` is a
    /// changed request).
    static func request(_ id: String, kind k: Int, variant v: Int, category: String? = nil) throws -> NotificationRequest {
        let cat = category.map { #","categoryIdentifier":"\#($0)""# } ?? ""
        let trigger: String
        switch k % 3 {
        case 0: trigger = #"{"interval":{"seconds":\#(600 + v * 60),"repeats":true}}"#
        case 1: trigger = #"{"calendar":{"match":{"hour":\#(v % 24),"minute":\#(v % 60)},"repeats":true}}"#
        default: trigger = #"{"location":{"region":{"circle":{"lat":\#(51 + Double(v % 100) / 1000),"lon":6.7,"radius":\#(100 + v % 400)}},"notifyOnEntry":true}}"#
        }
        return try NotificationRequest(json: try JSONValue.parse(#"{"id":"\#(id)","content":{"title":"\#(id) \#(v)"\#(cat)},"trigger":\#(trigger)}"#))
    }

    /// A first list and a second one made from it: some kept, some changed, some dropped, some new.
    static func lists(seed: UInt64) throws -> (first: [NotificationRequest], second: [NotificationRequest]) {
        var rng = SplitMix64(seed: seed)
        let n = rng.int(40 ... 60)
        let first = try (0..<n).map { i in try request("r\(i)", kind: i, variant: rng.int(0 ... 1000)) }
        var second: [NotificationRequest] = []
        for (i, r) in first.enumerated() {
            switch rng.int(0 ... 3) {
            case 0: continue   // dropped
            case 1: second.append(try request(r.identifier, kind: i, variant: rng.int(1001 ... 2000), category: rng.int(0 ... 1) == 0 ? "site" : nil))
            default: second.append(r)
            }
        }
        for j in 0..<rng.int(10 ... 30) { second.append(try request("new\(j)", kind: j, variant: rng.int(0 ... 1000))) }
        return (first, second)
    }

    static let categories = [NotificationCategory(identifier: "site", actions: [NotificationAction(identifier: "done", title: "Delivered")])]

    /// What an agent holds: the pending requests (JSON, by id), the memory of what was applied,
    /// and the categories.
    static func state(_ h: ControlHarness, owner: ApplyOwner = .configuration) throws -> [String] {
        let pending = try h.result("pending", #"{"limit":1000}"#)["pending"]?.array ?? []
        let requests = pending.map { "\($0["request"]!.serialized()) next \($0["nextFire"]?.serialized() ?? "-")" }.sorted()
        let memory = try h.center.store.appliedRequests(owner: owner).map { "\($0.id)=\($0.fingerprint)" }.sorted()
        return requests + memory + [try h.result("categories").serialized()]
    }

    /// Runs `plan` in parts of seeded sizes; the reply that ended it.
    static func runInParts(_ plan: inout ApplyPlan, _ h: ControlHarness, rng: inout SplitMix64, parts: inout Int) -> ApplyReply {
        while true {
            let reply = h.service.continueApply(&plan, limit: rng.int(1 ... 7), center: h.center, clock: h.clock)
            parts += 1
            if reply.result != nil || reply.error != nil || parts > 10_000 { return reply }
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func inPartsEndsWhereAtOnceEnds(seed: UInt64) throws {
        let (first, second) = try Self.lists(seed: seed)
        let once = try ControlHarness(), parts = try ControlHarness()
        for h in [once, parts] {
            let r = h.service.apply(requests: first, categories: nil, center: h.center, clock: h.clock)
            #expect(r.error == nil, "seed \(seed): \(r.error ?? "")")
        }
        let atOnce = once.service.apply(requests: second, categories: Self.categories, center: once.center, clock: once.clock)
        #expect(atOnce.error == nil, "seed \(seed): \(atOnce.error ?? "")")

        var plan = parts.service.plan(requests: second, fingerprints: nil, categories: Self.categories, center: parts.center)
        var rng = SplitMix64.stream(seed: seed, index: 1)
        var count = 0
        let reply = Self.runInParts(&plan, parts, rng: &rng, parts: &count)
        #expect(reply.error == nil && reply.fatal == nil, "seed \(seed): \(reply.error ?? "")")
        #expect(count > 3, "seed \(seed): \(count) parts")
        #expect(reply.result == atOnce.result, "seed \(seed): \(String(describing: reply.result)) vs \(String(describing: atOnce.result))")
        #expect(try Self.state(parts) == Self.state(once), "seed \(seed)")
        // And after a restart, from the file.
        try parts.restart()
        try once.restart()
        #expect(try Self.state(parts) == Self.state(once), "seed \(seed): after a restart")
    }

    /// No part's work grows with the list: the working-out too (the memory read, the comparison)
    /// goes a limit's worth of items a part, before which nothing of it is done.
    @Test(arguments: [(1, ApplyOwner.configuration), (2, .fleet), (3, .fleet)] as [(UInt64, ApplyOwner)])
    func theWorkingOutIsDoneInPartsOfTheLimit(seed: UInt64, owner: ApplyOwner) throws {
        var rng = SplitMix64(seed: seed)
        let h = try ControlHarness()
        let first = try (0..<rng.int(300 ... 400)).map { try Self.request("r\($0)", kind: $0, variant: rng.int(0 ... 1000)) }
        var firstPlan = h.service.plan(requests: first, fingerprints: nil, categories: nil, owner: owner, center: h.center)
        var count = 0
        #expect(Self.runInParts(&firstPlan, h, rng: &rng, parts: &count).error == nil, "seed \(seed)")
        // Half kept, a quarter changed, a quarter dropped; as many new.
        var second: [NotificationRequest] = []
        for (i, r) in first.enumerated() {
            switch rng.int(0 ... 3) {
            case 0: continue
            case 1: second.append(try Self.request(r.identifier, kind: i, variant: rng.int(1001 ... 2000)))
            default: second.append(r)
            }
        }
        for j in 0..<first.count / 4 { second.append(try Self.request("new\(j)", kind: j, variant: j)) }
        let memory = try h.center.store.appliedRequests(owner: owner).count
        var plan = h.service.plan(requests: second, fingerprints: nil, categories: nil, owner: owner, center: h.center)
        func classified(_ p: ApplyPlan) -> Int { p.result.added.count + p.result.replaced.count + p.result.unchanged.count + p.result.removed.count }
        #expect(classified(plan) == 0 && plan.progress.workedOut == 0, "seed \(seed): worked out before any part (\(classified(plan)) ids)")
        let k = rng.int(3 ... 9)
        var parts = 0
        while plan.phase == .workingOut && parts < 10_000 {
            let (before, items) = (classified(plan), plan.progress.workedOut)
            let reply = h.service.continueApply(&plan, limit: k, center: h.center, clock: h.clock)
            #expect(reply.error == nil && reply.fatal == nil, "seed \(seed): \(reply.error ?? "")")
            #expect(classified(plan) - before <= k && plan.progress.workedOut - items <= k,
                    "seed \(seed): one part of limit \(k) classified \(classified(plan) - before) ids, worked out \(plan.progress.workedOut - items) items")
            parts += 1
        }
        // Every request indexed and compared, every row of the memory read: each a part's item.
        #expect(plan.progress.workedOut == 2 * second.count + memory, "seed \(seed): \(plan.progress)")
        #expect(parts >= (2 * second.count + memory) / k, "seed \(seed): \(parts) parts of \(k)")
        #expect(classified(plan) == second.count + plan.result.removed.count && plan.result.removed.count > 0, "seed \(seed)")
        // And it ends where the apply at once ends.
        let once = try ControlHarness()
        _ = once.service.apply(requests: first, categories: nil, owner: owner, center: once.center, clock: once.clock)
        let atOnce = once.service.apply(requests: second, categories: nil, owner: owner, center: once.center, clock: once.clock)
        let reply = Self.runInParts(&plan, h, rng: &rng, parts: &count)
        #expect(reply.result != nil && reply.result == atOnce.result, "seed \(seed)")
        #expect(try Self.state(h, owner: owner) == Self.state(once, owner: owner), "seed \(seed)")
    }

    /// A part changes the engine in place: its table of pending requests is not copied (a copy
    /// costs every pending request, and would make each part O(n) however small its limit).
    /// Seen through the table's storage: a part whose adds fit its capacity leaves it where it was.
    @Test func aCommitPartDoesNotCopyTheEnginesRequests() throws {
        let h = try ControlHarness()
        // Within the harness's cap of pending requests (64): nothing evicted.
        let first = try (0..<30).map { try Self.request("r\($0)", kind: 0, variant: $0) }
        #expect(h.service.apply(requests: first, categories: nil, center: h.center, clock: h.clock).error == nil)
        let second = try first + (0..<30).map { try Self.request("n\($0)", kind: 0, variant: $0) }
        var plan = h.service.plan(requests: second, fingerprints: nil, categories: Self.categories, owner: .configuration, center: h.center)
        while plan.phase == .workingOut || plan.phase == .checking {
            #expect(h.service.continueApply(&plan, limit: 50, center: h.center, clock: h.clock).error == nil)
        }
        func storage() -> (address: UInt, count: Int, capacity: Int) {
            let slots = h.center.engine.table.slots
            return (slots.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }, slots.count, slots.capacity)
        }
        var checkedParts = 0
        while plan.phase == .committing {
            let before = storage()
            let reply = h.service.continueApply(&plan, limit: 3, center: h.center, clock: h.clock)
            #expect(reply.error == nil && reply.fatal == nil, "\(reply.error ?? "")")
            if before.count + 3 <= before.capacity {
                checkedParts += 1
                #expect(storage().address == before.address, "a part of 3 adds copied the engine's \(before.count) requests")
            }
        }
        #expect(checkedParts > 0 && plan.isDone && plan.result.added.count == 30 && plan.result.unchanged.count == 30, "\(checkedParts) parts checked, \(plan.result)")
    }

    /// An id given twice refuses the list while it is worked out: nothing is committed, the
    /// second is named.
    @Test func anIdGivenTwiceRefusesTheListBeforeAnyPart() throws {
        let h = try ControlHarness()
        _ = h.service.apply(requests: try (0..<5).map { try Self.request("r\($0)", kind: $0, variant: $0) }, categories: nil, center: h.center, clock: h.clock)
        let before = try Self.state(h)
        var list = try (0..<20).map { try Self.request("s\($0)", kind: $0, variant: $0) }
        list.append(try Self.request("s3", kind: 1, variant: 99))
        var plan = h.service.plan(requests: list, fingerprints: nil, categories: nil, center: h.center)
        var rng = SplitMix64(seed: 5)
        var count = 0
        let reply = Self.runInParts(&plan, h, rng: &rng, parts: &count)
        #expect(reply.result == nil && reply.error?.hasPrefix("requests[20]: id \"s3\" is given twice") == true, "\(reply.error ?? "")")
        #expect(count > 1 && plan.phase == .workingOut, "\(count) parts")
        #expect(try Self.state(h) == before)
    }

    @Test func aBrokenRuleRefusesTheListBeforeAnyPartIsCommitted() throws {
        let h = try ControlHarness()
        let first = try (0..<10).map { try Self.request("r\($0)", kind: $0, variant: $0) }
        _ = h.service.apply(requests: first, categories: nil, center: h.center, clock: h.clock)
        let before = try Self.state(h)
        // The last request names a category the apply does not set: refused at the check.
        var second = try (0..<30).map { try Self.request("s\($0)", kind: $0, variant: $0) }
        second.append(try Self.request("bad", kind: 0, variant: 1, category: "nowhere"))
        var plan = h.service.plan(requests: second, fingerprints: nil, categories: nil, center: h.center)
        var rng = SplitMix64(seed: 9)
        var count = 0
        let reply = Self.runInParts(&plan, h, rng: &rng, parts: &count)
        #expect(reply.result == nil && reply.error?.hasPrefix("requests[30]: content.categoryIdentifier \"nowhere\"") == true, "\(reply.error ?? "")")
        #expect(plan.progress.committed == 0 && plan.progress.checked == 30)
        #expect(try Self.state(h) == before, "a part was committed")
        // With the category it names, the same list goes through.
        var fixed = h.service.plan(requests: second, fingerprints: nil,
                                   categories: [NotificationCategory(identifier: "nowhere", actions: [])], center: h.center)
        count = 0
        let ok = Self.runInParts(&fixed, h, rng: &rng, parts: &count)
        #expect(ok.error == nil && ok.result?.added.count == 31 && ok.result?.removed.count == 10, "\(ok.error ?? "")")
    }

    @Test func aStopBetweenPartsIsCompletedByApplyingTheListAgain() throws {
        let (first, second) = try Self.lists(seed: 77)
        let once = try ControlHarness(), stopped = try ControlHarness()
        for h in [once, stopped] { _ = h.service.apply(requests: first, categories: nil, center: h.center, clock: h.clock) }
        _ = once.service.apply(requests: second, categories: Self.categories, center: once.center, clock: once.clock)

        var plan = stopped.service.plan(requests: second, fingerprints: nil, categories: Self.categories, center: stopped.center)
        while !plan.isChecked { _ = stopped.service.continueApply(&plan, limit: 5, center: stopped.center, clock: stopped.clock) }
        // Parts until some requests are added (the removals come first).
        while plan.progress.committed == 0 { _ = stopped.service.continueApply(&plan, limit: 5, center: stopped.center, clock: stopped.clock) }
        let committed = plan.progress.committed
        #expect(committed > 0 && committed < plan.progress.of, "\(plan.progress)")
        // The agent stops here (a power cut after the second part's transaction); at the next
        // start the same list is applied again.
        try stopped.restart()
        let again = stopped.service.apply(requests: second, categories: Self.categories, center: stopped.center, clock: stopped.clock)
        #expect(again.error == nil, "\(again.error ?? "")")
        #expect(again.result.map { $0.added.count + $0.replaced.count } == plan.progress.of - committed, "\(String(describing: again.result))")
        #expect(again.result?.removed == [], "the first part's removals were not kept")
        #expect(try Self.state(stopped) == Self.state(once))
    }

    /// The configuration's apply (a board's start, SIGHUP) and the fleet's keep apart memories:
    /// neither removes what the other installed.
    @Test func theConfigurationsApplyLeavesTheFleetsRequests() throws {
        let h = try ControlHarness()
        let own = try (0..<3).map { try Self.request("own\($0)", kind: $0, variant: $0) }
        let fleet = try (0..<4).map { try Self.request("fleet\($0)", kind: $0, variant: $0) }
        #expect(h.service.apply(requests: own, categories: nil, center: h.center, clock: h.clock).result?.added.count == 3)
        var plan = h.service.plan(requests: fleet, fingerprints: nil, categories: nil, owner: .fleet, center: h.center)
        var rng = SplitMix64(seed: 3)
        var count = 0
        #expect(Self.runInParts(&plan, h, rng: &rng, parts: &count).result?.added.count == 4)
        // A restart applies the file again, which does not name the fleet's requests.
        try h.restart()
        let start = h.service.apply(requests: own, categories: nil, center: h.center, clock: h.clock)
        #expect(start.result?.unchanged.count == 3 && start.result?.removed == [], "\(String(describing: start.result))")
        #expect(h.center.engine.pendingCount == 7)
        // The file drops one of its own: only that goes.
        let edited = h.service.apply(requests: Array(own.prefix(2)), categories: nil, center: h.center, clock: h.clock)
        #expect(edited.result?.removed == ["own2"] && h.center.engine.pendingCount == 6)
        // The fleet's next document (through the link: answered by remote) drops one of its own.
        var call = Call(center: h.center, clock: h.clock, params: .null)
        call.source = .remote
        let next = try ControlService.apply(Array(fleet.prefix(3)), categories: nil, owner: .fleet, &call, path: { "requests[\($0)]" })
        #expect(next.removed == ["fleet3"] && next.unchanged.count == 3 && h.center.engine.pendingCount == 5)
        #expect(try h.center.store.appliedRequests(owner: .fleet).map(\.id) == ["fleet0", "fleet1", "fleet2"])
        #expect(try h.center.store.appliedRequests().map(\.id) == ["own0", "own1"])
    }
}
