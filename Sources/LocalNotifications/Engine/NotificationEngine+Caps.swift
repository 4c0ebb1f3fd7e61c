// Caps: at most `pendingCap` calendar and interval requests (the ones firing last are evicted),
// `locationCap` location requests (the newest are evicted) and `deliveredCap` delivered
// notifications (answered ones pruned first), each drop reported as an Outcome.
import CivilTime

extension NotificationEngine {
    /// Replaces the caps, limits and alert settings (a configuration reloaded while running): a
    /// lowered cap evicts or prunes at once, each with its outcome, as an add beyond it would; new
    /// limits hold for the requests added from now on (the pending ones stay as they were checked).
    /// `deliveredCap` is at least 1.
    public mutating func reconfigure(_ configuration: EngineConfiguration, clock: EngineClock) -> EngineOutput {
        var c = configuration
        c.deliveredCap = max(c.deliveredCap, 1)
        self.configuration = c
        var out = enforceCaps(clock: clock)
        pruneDelivered(clock, into: &out)
        return out
    }

    /// Keeps at most `deliveredCap` delivered notifications: answered ones go first, oldest first.
    mutating func pruneDelivered(_ clock: EngineClock, into out: inout EngineOutput) {
        guard deliveries.items.count > configuration.deliveredCap else { return }
        var excess = deliveries.items.count - configuration.deliveredCap
        var drop: Set<Int> = []
        for pass in 0 ..< 2 where excess > 0 {
            for (i, d) in deliveries.items.enumerated() where excess > 0 && !drop.contains(i) && (pass == 1 || d.isAcknowledged) {
                drop.insert(i); excess -= 1
            }
        }
        for i in drop.sorted() {
            let d = deliveries.items[i]
            out.changes.append(.removeDelivery(d.identifier))
            if !d.isAcknowledged { out.acknowledged.append(d.identifier) }
            let o = Outcome(kind: .pruned, requestIdentifier: d.requestIdentifier, date: trust.wallTrusted ? clock.wall : nil, count: 1,
                            firstFire: d.scheduled, lastFire: d.scheduled,
                            detail: "delivered notification \(d.identifier) removed: more than \(configuration.deliveredCap) delivered")
            out.outcomes.append(o)
            out.changes.append(.outcome(o))
        }
        var k = 0
        deliveries.items.removeAll { _ in defer { k += 1 }; return drop.contains(k) }
    }

    /// Milliseconds from `clock` to `e`'s next fire (Int64.max when unknown).
    func nextFireOffset(_ e: Entry, clock: EngineClock) -> Int64 {
        switch e.request.trigger {
        case .calendar:
            let wall = clock.wall.secondsSinceEpoch
            guard let n = nextCalendarFire(e, after: e.progress.after ?? wall) else { return .max }
            return (n - wall) * 1000
        case .interval:
            return (e.due ?? .max / 2) - Int64(clock.monotonicMilliseconds)
        case .location:
            return .max
        }
    }

    /// Evicts the latest-firing time-based requests beyond `pendingCap` and the newest location
    /// requests beyond `locationCap`, each with an `evicted` outcome.
    /// - Complexity: O(pending) per eviction.
    mutating func enforceCaps(clock: EngineClock) -> EngineOutput {
        var out = EngineOutput()
        while table.timeBasedCount > configuration.pendingCap {
            var worst: (slot: Int, offset: Int64, sequence: Int64)? = nil
            for (i, e) in table.slots.enumerated() {
                guard let e, e.kind != .location else { continue }
                let o = nextFireOffset(e, clock: clock)
                if worst == nil || o > worst!.offset || (o == worst!.offset && e.sequence > worst!.sequence) {
                    worst = (i, o, e.sequence)
                }
            }
            guard let w = worst else { break }
            evict(Int32(w.slot), "the pending cap of \(configuration.pendingCap) calendar and interval requests was reached and it fires last", clock, into: &out)
        }
        while table.locationCount > configuration.locationCap {
            guard let newest = table.slots.indices.filter({ table.slots[$0]?.kind == .location })
                .max(by: { table.slots[$0]!.sequence < table.slots[$1]!.sequence }) else { break }
            evict(Int32(newest), "the cap of \(configuration.locationCap) location requests was reached", clock, into: &out)
        }
        return out
    }

    mutating func evict(_ slot: Int32, _ why: String, _ clock: EngineClock, into out: inout EngineOutput) {
        guard let e = table.slots[Int(slot)] else { return }
        let next = nextFireOffset(e, clock: clock)
        removeEntry(at: slot)
        out.changes.append(.removeRequest(e.request.identifier))
        let nextFire = next == .max ? nil : WallInstant(secondsSinceEpoch: clock.wall.secondsSinceEpoch + next / 1000)
        let o = Outcome(kind: .evicted, requestIdentifier: e.request.identifier, date: trust.wallTrusted ? clock.wall : nil, count: 1,
                        firstFire: nextFire, lastFire: nil, detail: why)
        out.outcomes.append(o)
        out.changes.append(.outcome(o))
    }
}
