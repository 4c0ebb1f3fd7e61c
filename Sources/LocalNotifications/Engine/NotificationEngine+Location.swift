// Fixes: GNSS time as a source of clock trust, and region events as deliveries.
import CivilTime
import Geofencing
import Position

extension NotificationEngine {
    /// Processes one fix received at `clock`: a valid fix whose time agrees with the wall clock
    /// (within the step threshold) makes the clock trusted; the region monitor turns the fix into
    /// entries, exits and dwells, which are delivered.
    /// - Complexity: that of ``RegionMonitor/process(_:at:into:)`` plus the fires due.
    public mutating func process(_ fix: Fix, clock: EngineClock) -> EngineOutput {
        var out = observe(clock)
        if let t = fix.time, fix.isValid, fix.mode >= .twoD {
            let agrees = abs(t.secondsSinceEpoch - clock.wall.secondsSinceEpoch) <= configuration.stepThreshold
            if agrees != trust.gnssAgreed {
                trust.gnssAgreed = agrees
                out.append(observe(clock))
            }
        }
        fireDue(clock, into: &out)
        location.events.removeAll(keepingCapacity: true)
        location.monitor.process(fix, at: clock.monotonicSeconds, into: &location.events)
        let before = out.transitions.count
        handleRegionEvents(clock, into: &out)
        // Where: the fix that decided them.
        for i in before ..< out.transitions.count {
            out.transitions[i].latitude = fix.coordinate?.latitude
            out.transitions[i].longitude = fix.coordinate?.longitude
            out.transitions[i].accuracy = fix.horizontalError
        }
        return out
    }

    /// Builds the region monitor's spatial index if many regions were added or removed since it
    /// was last built (see ``RegionMonitor/prepareIndex()``); changes no state.
    public mutating func prepareRegionIndex() { location.monitor.prepareIndex() }

    /// The location requests' regions, to build their index on another thread when a rebuild is
    /// due (nil otherwise); until it is installed, fixes scan the regions added since the last
    /// index instead of rebuilding it in their turn.
    public mutating func regionIndexSnapshot() -> RegionCatalog.IndexSnapshot? { location.monitor.indexSnapshot() }

    /// Installs an index built from ``regionIndexSnapshot()``; false when regions were added or
    /// removed since (the next fix rebuilds it then).
    @discardableResult
    public mutating func installRegionIndex(_ built: RegionCatalog.BuiltIndex) -> Bool { location.monitor.installIndex(built) }

    /// The snapshot's index will not come: the next fix rebuilds it.
    public mutating func abandonRegionIndexSnapshot() { location.monitor.abandonIndexSnapshot() }

    mutating func handleRegionEvents(_ clock: EngineClock, into out: inout EngineOutput) {
        guard !location.events.isEmpty else { return }
        let events = location.events
        location.events.removeAll(keepingCapacity: true)
        for event in events {
            guard let slot = table.slotOf[event.identifier], var e = table.slots[Int(slot)] else {
                handleZoneEvent(event, clock, into: &out)
                continue
            }
            switch event.kind {
            case .enter, .exit, .dwell:
                e.progress.fires += 1
                e.progress.regionState = event.kind == .exit ? .outside : .inside
                table.slots[Int(slot)] = e
                record(slot, more: e.request.trigger.repeats, into: &out)
                deliver(e, .onTime, scheduled: nil, event: event.kind.rawValue, clock, into: &out)
            case .unknown:
                let o = Outcome(kind: .positionUnknown, requestIdentifier: e.request.identifier,
                                date: trust.wallTrusted ? clock.wall : nil, count: 0, firstFire: nil, lastFire: nil,
                                detail: "no usable fix for \(Int(configuration.monitor.unknownTimeout)) s while inside; the region's state is unknown until the next good fix")
                out.outcomes.append(o)
                out.changes.append(.outcome(o))
            }
        }
    }
}
