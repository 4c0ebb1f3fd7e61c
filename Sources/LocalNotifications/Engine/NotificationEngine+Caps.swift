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
    /// requests beyond `locationCap`, each with an `evicted` outcome. Evicting one request does not
    /// move another's next fire, so the requests to evict are chosen in one pass: a cap lowered by a
    /// reload from 100k to 1k costs one next-fire computation per pending request, not one per
    /// request per eviction.
    /// - Complexity: O(pending · log pending) when something is evicted, else O(1).
    mutating func enforceCaps(clock: EngineClock) -> EngineOutput {
        var out = EngineOutput()
        func why() -> String { "the pending cap of \(configuration.pendingCap) calendar and interval requests was reached and it fires last" }
        // Last to fire first; of two firing together, the newer.
        func firesLater(_ a: (offset: Int64, sequence: Int64), _ b: (offset: Int64, sequence: Int64)) -> Bool {
            a.offset != b.offset ? a.offset > b.offset : a.sequence > b.sequence
        }
        if table.timeBasedCount == configuration.pendingCap + 1 {
            // One over (an add at the cap): a scan, no allocation.
            var worst: (slot: Int, offset: Int64, sequence: Int64)? = nil
            for (i, e) in table.slots.enumerated() {
                guard let e, e.kind != .location else { continue }
                let c = (slot: i, offset: nextFireOffset(e, clock: clock), sequence: e.sequence)
                if worst == nil || firesLater((c.offset, c.sequence), (worst!.offset, worst!.sequence)) { worst = c }
            }
            if let w = worst { evict(Int32(w.slot), why(), clock, into: &out) }
        } else if table.timeBasedCount > configuration.pendingCap {
            var candidates: [(slot: Int, offset: Int64, sequence: Int64)] = []
            candidates.reserveCapacity(table.timeBasedCount)
            for (i, e) in table.slots.enumerated() {
                guard let e, e.kind != .location else { continue }
                candidates.append((i, nextFireOffset(e, clock: clock), e.sequence))
            }
            candidates.sort { firesLater(($0.offset, $0.sequence), ($1.offset, $1.sequence)) }
            for c in candidates.prefix(table.timeBasedCount - configuration.pendingCap) { evict(Int32(c.slot), why(), clock, into: &out) }
        }
        if table.locationCount > configuration.locationCap {
            var newest = table.slots.indices.filter { table.slots[$0]?.kind == .location }
            newest.sort { table.slots[$0]!.sequence > table.slots[$1]!.sequence }
            for slot in newest.prefix(table.locationCount - configuration.locationCap) {
                evict(Int32(slot), "the cap of \(configuration.locationCap) location requests was reached", clock, into: &out)
            }
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
