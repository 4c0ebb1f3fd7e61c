// Start from durable state: put back requests, deliveries and categories, then apply the
// missed-fire policies to whatever fell due while the agent was down.
import CivilTime
import Geofencing

/// What the store hands back at start.
public struct EngineSnapshot: Sendable {
    public var requests: [(request: NotificationRequest, progress: TriggerProgress)]
    public var delivered: [DeliveredNotification]
    public var categories: [NotificationCategory]
    public var nextGeneration: Int64
    /// The zone set's per-zone states (matched to the set when it is installed).
    public var zoneStates: [ZoneState] = []

    public init(requests: [(request: NotificationRequest, progress: TriggerProgress)], delivered: [DeliveredNotification],
                categories: [NotificationCategory], nextGeneration: Int64) {
        self.requests = requests; self.delivered = delivered; self.categories = categories; self.nextGeneration = nextGeneration
    }
}

extension NotificationEngine {
    /// Puts back the state of a previous run and catches up: fires that fell due while the agent
    /// was down are handled now, by each request's missed-fire policy.
    ///
    /// Intervals resume from their wall-clock start when the clock is trusted now and was at their
    /// start (so downtime counts); otherwise they restart from now — late, never early.
    /// A request whose zone no longer exists is kept and reported in an outcome, and follows the
    /// device zone.
    /// - Precondition: the engine is new (no requests).
    /// - Complexity: O(requests × next-fire cost + missed fires counted).
    public mutating func restore(_ snapshot: EngineSnapshot, clock: EngineClock) -> EngineOutput {
        precondition(table.slotOf.isEmpty, "restore(_:clock:) on an engine that already has requests")
        var out = observe(clock)
        categoryList = snapshot.categories
        deliveries.items = snapshot.delivered
        var generation = snapshot.nextGeneration
        for z in snapshot.zoneStates {
            location.zoneStates[z.identifier] = z
            generation = max(generation, z.generation + 1)
        }
        for (request, progress) in snapshot.requests {
            generation = max(generation, progress.generation + 1)
            var entry = Entry(request: request, progress: progress, kind: Self.kind(of: request.trigger), sequence: paging.nextSequence)
            paging.nextSequence += 1
            switch request.trigger {
            case .calendar(let t):
                var zone: ZoneRules? = nil
                if let name = t.zoneIdentifier {
                    zone = zoneLookup(name)
                    if zone == nil {
                        let o = Outcome(kind: .missed, requestIdentifier: request.identifier, date: trust.wallTrusted ? clock.wall : nil,
                                        count: 0, firstFire: nil, lastFire: nil,
                                        detail: "zone \"\(name)\" is no longer known on this device; the request follows the device zone \(deviceZone.identifier)")
                        out.outcomes.append(o)
                        out.changes.append(.outcome(o))
                    }
                }
                entry.fixedZone = zone.map(FixedZone.init)
                if entry.progress.after == nil && trust.wallTrusted {
                    entry.progress.after = clock.wall.secondsSinceEpoch
                    out.changes.append(.setProgress(requestIdentifier: request.identifier, entry.progress))
                }
            case .interval:
                let nowMs = Int64(clock.monotonicMilliseconds)
                if let start = progress.anchorWall, trust.wallTrusted {
                    entry.anchorMilliseconds = SaturatingTime.add(nowMs, -SaturatingTime.multiply(clock.wall.secondsSinceEpoch - start, 1000))
                } else {
                    // Unknown elapsed time: the remaining fires restart from now.
                    entry.anchorMilliseconds = nowMs - 0
                    if case .interval(let t) = request.trigger {
                        entry.anchorMilliseconds = SaturatingTime.add(nowMs, -SaturatingTime.multiply(progress.fires, t.milliseconds))
                    }
                    entry.progress.anchorWall = trust.wallTrusted ? clock.wall.secondsSinceEpoch - (nowMs - entry.anchorMilliseconds) / 1000 : nil
                    out.changes.append(.setProgress(requestIdentifier: request.identifier, entry.progress))
                }
            case .location:
                break
            }
            insert(entry, clock: clock)
        }
        nextGeneration = generation
        fireDue(clock, into: &out)
        return out
    }
}
