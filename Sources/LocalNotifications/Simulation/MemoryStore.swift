// The durable state as plain values: what applying the engine's StateChanges in order leaves.
// The SQLite store must end in the same state; simulations and tests use this one directly.
import CivilTime

/// Durable state held in memory: requests with progress (in add order), deliveries (in delivery
/// order), categories, the generation counter and the outcome history.
public struct MemoryStore: Sendable {
    public private(set) var requests: [(request: NotificationRequest, progress: TriggerProgress)] = []
    public private(set) var delivered: [DeliveredNotification] = []
    public private(set) var categories: [NotificationCategory] = []
    public private(set) var nextGeneration: Int64 = 1
    public private(set) var outcomes: [Outcome] = []
    public private(set) var zoneStates: [String: ZoneState] = [:]

    public init() {}

    /// Applies `changes` in order.
    /// - Complexity: O(changes × stored items) (linear lookups: this is a reference, not a database).
    public mutating func apply(_ changes: [StateChange]) {
        for c in changes {
            switch c {
            case .putRequest(let r, let p):
                requests.removeAll { $0.request.identifier == r.identifier }
                requests.append((r, p))
            case .setProgress(let id, let p):
                if let i = requests.firstIndex(where: { $0.request.identifier == id }) { requests[i].progress = p }
            case .removeRequest(let id):
                requests.removeAll { $0.request.identifier == id }
            case .removeAllRequests:
                requests.removeAll()
            case .putDelivery(let d):
                precondition(!delivered.contains { $0.identifier == d.identifier }, "delivery \(d.identifier) stored twice")
                delivered.append(d)
            case .setResponse(let id, let action, let at):
                if let i = delivered.firstIndex(where: { $0.identifier == id }) {
                    delivered[i].response = action; delivered[i].respondedAt = at
                }
            case .removeDelivery(let id):
                delivered.removeAll { $0.identifier == id }
            case .removeAllDeliveries:
                delivered.removeAll()
            case .setCategories(let list):
                categories = list
            case .setNextGeneration(let g):
                nextGeneration = g
            case .outcome(let o):
                outcomes.append(o)
            case .putZoneState(let z):
                zoneStates[z.identifier] = z
            case .removeZoneState(let id):
                zoneStates[id] = nil
            }
        }
    }

    /// What a restarted engine is given.
    public var snapshot: EngineSnapshot {
        var s = EngineSnapshot(requests: requests, delivered: delivered, categories: categories, nextGeneration: nextGeneration)
        s.zoneStates = zoneStates.values.sorted { $0.identifier < $1.identifier }
        return s
    }
}
