// The delivered notifications, oldest first: what the notification centre shows until it is
// removed or pruned by the delivered cap (NotificationEngine+Time.swift, `pruneDelivered`).

/// Delivered notifications, oldest first, with their removals.
struct DeliveredList {
    var items: [DeliveredNotification] = []

    /// Unanswered deliveries: the badge LED is lit while this is > 0.
    /// - Complexity: O(n).
    var badgeCount: Int { items.reduce(0) { $0 + ($1.isAcknowledged ? 0 : 1) } }

    /// Removes delivered notifications by identifier; unanswered ones are reported acknowledged
    /// (their signals stop).
    /// - Complexity: O(n + identifiers).
    mutating func remove(_ identifiers: [String]) -> EngineOutput {
        var out = EngineOutput()
        let ids = Set(identifiers)
        items.removeAll { d in
            guard ids.contains(d.identifier) else { return false }
            out.changes.append(.removeDelivery(d.identifier))
            if !d.isAcknowledged { out.acknowledged.append(d.identifier) }
            return true
        }
        return out
    }

    /// Removes every delivered notification; unanswered ones are reported acknowledged.
    mutating func removeAll() -> EngineOutput {
        var out = EngineOutput()
        out.acknowledged = items.filter { !$0.isAcknowledged }.map { $0.identifier }
        items.removeAll()
        out.changes.append(.removeAllDeliveries)
        return out
    }
}
