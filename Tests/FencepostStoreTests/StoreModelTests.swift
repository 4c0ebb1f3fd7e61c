import Foundation
import SeededRandom
import Testing
@testable import FencepostLinux

/// Random batches of changes applied to the store and to a plain in-memory reference; after
/// every batch (and after reopening) the store must equal the reference, and a batch the
/// reference rejects must be rejected by the store with the same error and leave it unchanged.
@Suite struct StoreModelTests {
    /// The reference: the documented semantics of ``StoreChange``, written the simple way.
    struct Reference {
        var requests: [StoredRequest] = []
        var deliveries: [StoredDelivery] = []
        var removedIDs: [String] = []  // oldest first
        var categories: [StoredCategory] = []
        var meta: [String: String] = [:]
        var outcomes: [StoredOutcome] = []
        /// In install order (a re-put moves to the end).
        var applied: [AppliedRequestRecord] = []
        let outcomeCapacity: Int
        let removedMemory: Int

        func knows(delivery id: String) -> Bool { deliveries.contains { $0.deliveryID == id } || removedIDs.contains(id) }

        mutating func apply(_ changes: [StoreChange]) -> StoreError? {
            var copy = self
            for change in changes {
                if let error = copy.perform(change) { return error }
            }
            if copy.outcomes.count > outcomeCapacity { copy.outcomes.removeFirst(copy.outcomes.count - outcomeCapacity) }
            if copy.removedIDs.count > removedMemory { copy.removedIDs.removeFirst(copy.removedIDs.count - removedMemory) }
            self = copy
            return nil
        }

        mutating func perform(_ change: StoreChange) -> StoreError? {
            switch change {
            case .putRequest(let r):
                requests.removeAll { $0.id == r.id }
                requests.append(r)
            case let .setRequestState(id, state):
                guard let i = requests.firstIndex(where: { $0.id == id }) else { return .unknownRequest(id: id) }
                requests[i].state = state
            case .removeRequest(let id): requests.removeAll { $0.id == id }
            case .removeAllRequests: requests = []
            case .putDelivery(let d):
                if knows(delivery: d.deliveryID) { return .duplicateDelivery(deliveryID: d.deliveryID) }
                deliveries.append(d)
                deliveryOrder[d.deliveryID] = insertions
                insertions += 1
            case let .setDeliveryResponse(id, response, at):
                guard let i = deliveries.firstIndex(where: { $0.deliveryID == id }) else { return .unknownDelivery(deliveryID: id) }
                deliveries[i].response = response
                deliveries[i].respondedAt = at
            case .removeDelivery(let id):
                guard let i = deliveries.firstIndex(where: { $0.deliveryID == id }) else { return nil }
                removeDeliveries(at: [i])
            case .removeAllDeliveries:
                removeDeliveries(at: Array(deliveries.indices))
            case .replaceCategories(let cs):
                var seen = Set<String>()
                for c in cs where !seen.insert(c.id).inserted { return .duplicateCategory(id: c.id) }
                categories = cs
            case let .setMeta(key, value): meta[key] = value
            case .removeMeta(let key): meta[key] = nil
            case .putAppliedRequest(let a):
                applied.removeAll { $0.id == a.id }
                applied.append(a)
            case .removeAppliedRequest(let id): applied.removeAll { $0.id == id }
            case .appendOutcome(let o): outcomes.append(o)
            case .appendOutbox: break   // the outbox has its own tests (FleetTests.OutboxStoreTests)
            }
            return nil
        }

        /// Removed ids are remembered in delivery order (the store prunes by delivery seq).
        mutating func removeDeliveries(at indices: [Int]) {
            let ids = Set(indices.map { deliveries[$0].deliveryID })
            removedIDs.append(contentsOf: indices.map { deliveries[$0].deliveryID })
            deliveries.removeAll { ids.contains($0.deliveryID) }
            // Keep the remembered ids sorted by delivery order: their seq order in the store.
            removedIDs.sort { deliveryOrder[$0]! < deliveryOrder[$1]! }
        }

        /// Insert order of each delivery id (a forgotten id inserted again gets a new one).
        var deliveryOrder: [String: Int] = [:]
        var insertions = 0

        var snapshot: StoreSnapshot { StoreSnapshot(requests: requests, deliveries: deliveries, categories: categories, meta: meta) }
    }

    struct Generator {
        var rng: SplitMix64
        var nextDelivery = 0

        mutating func id(_ prefix: String, _ count: Int) -> String { "\(prefix)\(rng.int(0...(count - 1)))" }
        mutating func text() -> String { rng.pick(["{}", "", #"{"a":1}"#, "ü🚐", "x\u{0}y", String(rng.next())]) }

        mutating func change(reference: Reference) -> StoreChange {
            switch rng.int(0...19) {
            case 0...4: return .putRequest(StoredRequest(id: id("r", 8), json: text(), state: text()))
            case 5, 6: return .setRequestState(id: id("r", 9), state: text())
            case 7: return .removeRequest(id: id("r", 9))
            case 8: return rng.chance(0.3) ? .removeAllRequests : .setMeta(key: id("k", 4), value: text())
            case 9...11:
                // Mostly new ids, sometimes an old one (a duplicate fire).
                let deliveryID: String
                if nextDelivery > 0 && rng.chance(0.15) { deliveryID = "d\(rng.int(0...(nextDelivery - 1)))" }
                else { deliveryID = "d\(nextDelivery)"; nextDelivery += 1 }
                return .putDelivery(StoredDelivery(
                    deliveryID: deliveryID, requestID: id("r", 8), json: text(),
                    scheduledAt: rng.chance(0.5) ? Int64(bitPattern: rng.next()) : nil, deliveredAt: Int64(rng.int(0...1000)),
                    outcome: rng.pick(["delivered", "late", "coalesced"]),
                    response: rng.chance(0.2) ? "default" : nil, respondedAt: rng.chance(0.2) ? 7 : nil))
            case 12:
                let target = reference.deliveries.isEmpty || rng.chance(0.2) ? "d-none" : rng.pick(reference.deliveries).deliveryID
                return .setDeliveryResponse(deliveryID: target, response: rng.pick(["default", "dismiss", "snooze"]), at: Int64(rng.int(0...99)))
            case 13:
                let target = reference.deliveries.isEmpty ? "d-none" : rng.pick(reference.deliveries).deliveryID
                return .removeDelivery(deliveryID: target)
            case 14: return rng.chance(0.2) ? .removeAllDeliveries : .setMeta(key: id("k", 4), value: text())
            case 16: return rng.chance(0.3) ? .removeMeta(key: id("k", 5)) : .removeAppliedRequest(id: id("a", 6))
            case 17: return .putAppliedRequest(AppliedRequestRecord(id: id("a", 6), fingerprint: rng.next()))
            case 15:
                return .replaceCategories((0..<rng.int(0...3)).map { _ in StoredCategory(id: id("c", 5), json: text()) })
            default:
                return .appendOutcome(StoredOutcome(at: Int64(rng.int(0...1000)), requestID: id("r", 8),
                                                    event: rng.pick(["missed", "evicted", "skipped"]), detail: text()))
            }
        }
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func storeMatchesReference(seed: UInt64) throws {
        let folder = try TempFolder()
        let path = folder.path("model.db")
        var store = try NotificationStore(path: path, outcomeCapacity: 7, removedDeliveryMemory: 5)
        var reference = Reference(outcomeCapacity: 7, removedMemory: 5)
        var generator = Generator(rng: SplitMix64(seed: seed))
        var rejected = 0
        for batch in 0..<150 {
            let changes = (0..<generator.rng.int(1...5)).map { _ in generator.change(reference: reference) }
            let expectedError = reference.apply(changes)
            if expectedError != nil { rejected += 1 }
            var actualError: StoreError?
            do { try store.apply(changes) } catch { actualError = error }
            #expect(actualError == expectedError, "seed \(seed) batch \(batch): \(changes)")
            #expect(try store.load() == reference.snapshot, "seed \(seed) batch \(batch)")
            #expect(try store.outcomes(limit: 100) == reference.outcomes, "seed \(seed) batch \(batch)")
            #expect(try store.appliedRequests() == reference.applied, "seed \(seed) batch \(batch)")
            if batch % 50 == 49 {
                try store.close()
                store = try NotificationStore(path: path, outcomeCapacity: 7, removedDeliveryMemory: 5)
            }
        }
        // The run exercised both paths: batches applied and batches rejected.
        #expect(rejected > 5 && rejected < 100, "seed \(seed): \(rejected) of 150 batches rejected")
        #expect(try store.db.scalarInt64("SELECT count(*) FROM delivery WHERE removed = 1") == Int64(reference.removedIDs.count))
    }
}
