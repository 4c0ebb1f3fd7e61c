// The zone set: many zones as data (a mapped file), monitored beside the location requests and
// delivered like them — the same delivery ids (`zone/generation/fire`), records, badge and hook —
// while only zones whose state is not the default hold any memory or any row in the store.
//
// Per-zone state (ZoneState) exists once a zone has fired: its generation and fire count (the
// delivery ids never repeat), its last confirmed inside/outside, and when it last reported each
// kind of event (its cooldowns, as wall times so that they survive a restart). It is keyed by the
// zone's id and geometry fingerprint: a new set that keeps a zone unchanged keeps its state; an
// edited zone starts afresh under the new set's generation.
import CivilTime
import Geofencing
import Position

/// The durable state of one zone of the zone set.
public struct ZoneState: Hashable, Sendable {
    public var identifier: String
    /// ``ZoneSet/fingerprint(_:)`` of the zone's geometry when the state began.
    public var fingerprint: UInt64
    public var generation: Int64
    /// Fires delivered so far in this generation.
    public var fires: Int64
    /// The last state the monitor confirmed by an event (inside after entry or dwell, outside after exit).
    public var regionState: RegionState
    /// Wall seconds of the last entry, exit and dwell reported (cooldowns run from them).
    public var lastEnter: Double?
    public var lastExit: Double?
    public var lastDwell: Double?

    public init(identifier: String, fingerprint: UInt64, generation: Int64, fires: Int64 = 0, regionState: RegionState = .unknown,
                lastEnter: Double? = nil, lastExit: Double? = nil, lastDwell: Double? = nil) {
        self.identifier = identifier; self.fingerprint = fingerprint; self.generation = generation; self.fires = fires
        self.regionState = regionState; self.lastEnter = lastEnter; self.lastExit = lastExit; self.lastDwell = lastDwell
    }
}

/// A zone as `status` shows it.
public struct ZoneStatus: Hashable, Sendable {
    public var identifier: String
    public var regionState: RegionState
    public var fires: Int64
    /// Wall seconds until which the zone's next entry (exit, dwell) stays quiet, when in the future.
    public var quietUntil: Double?
}

extension InterruptionLevel {
    /// The level of a zone set's code (``ZoneContent/level``); unknown codes are `.active`.
    public init(zoneCode: UInt8) {
        switch zoneCode {
        case 0: self = .passive
        case 2: self = .timeSensitive
        case 3: self = .critical
        default: self = .active
        }
    }

    /// This level's code in a zone set.
    public var zoneCode: UInt8 {
        switch self {
        case .passive: 0
        case .active: 1
        case .timeSensitive: 2
        case .critical: 3
        }
    }
}

extension NotificationEngine {
    /// The zone set monitored now (nil: none).
    public var zoneSet: ZoneSet? { location.monitor.zoneSet }

    /// Monitors `set` in place of the current zone set (nil: none). Zones of the new set with the
    /// id and geometry of a zone of the old one keep their state (inside, dwell, cooldowns, fire
    /// count); the others start afresh. States of zones gone or edited are removed.
    ///
    /// The old set's storage must stay valid during the call; the new one's while it is installed.
    /// - Complexity: O(zones with state × log n).
    public mutating func setZoneSet(_ set: ZoneSet?, clock: EngineClock) -> EngineOutput {
        var out = observe(clock)
        location.monitor.replaceZoneSet(set)
        location.zoneGeneration = nextGeneration
        nextGeneration += 1
        out.changes.append(.setNextGeneration(nextGeneration))
        let now = clock.monotonicSeconds, wall = Double(clock.wall.secondsSinceEpoch)
        /// A persisted wall time as monitor seconds; never in the future (an untrusted clock at
        /// boot would otherwise put a cooldown's start years ahead).
        func monitorTime(_ w: Double?) -> Double? { w.map { min(now, now + ($0 - wall)) } }
        for (id, state) in location.zoneStates.sorted(by: { $0.key < $1.key }) {
            guard let set, let n = set.number(of: id), set.fingerprint(of: n) == state.fingerprint else {
                location.zoneStates[id] = nil
                out.changes.append(.removeZoneState(id))
                continue
            }
            if location.monitor.zoneEventTimes(n) == (nil, nil, nil) && !location.monitor.zonesWithStateContains(n) {
                location.monitor.restoreZone(n, lastKnown: state.regionState, lastEnter: monitorTime(state.lastEnter),
                                    lastExit: monitorTime(state.lastExit), lastDwell: monitorTime(state.lastDwell))
            }
        }
        return out
    }

    /// A region event of a zone of the set: delivered as a location request's would be.
    mutating func handleZoneEvent(_ event: RegionEvent, _ clock: EngineClock, into out: inout EngineOutput) {
        guard let set = location.monitor.zoneSet, let n = set.number(of: event.identifier) else { return }
        let id = event.identifier
        switch event.kind {
        case .enter, .exit, .dwell:
            var state = location.zoneStates[id] ?? ZoneState(identifier: id, fingerprint: set.fingerprint(of: n), generation: location.zoneGeneration)
            state.fires += 1
            state.regionState = event.kind == .exit ? .outside : .inside
            let wall = Double(clock.wall.secondsSinceEpoch) + (event.time - clock.monotonicSeconds)
            switch event.kind {
            case .enter: state.lastEnter = wall
            case .exit: state.lastExit = wall
            default: state.lastDwell = wall
            }
            location.zoneStates[id] = state
            out.changes.append(.putZoneState(state))
            let zone = set.zone(n)
            if zone.content.report, event.kind != .dwell {
                out.transitions.append(ZoneTransition(zone: id, event: event.kind.rawValue,
                                                      date: WallInstant(secondsSinceEpoch: Int64(wall.rounded(.down)))))
            }
            let content = NotificationContent(title: zone.content.title, sound: zone.content.sound,
                                              interruptionLevel: InterruptionLevel(zoneCode: zone.content.level))
            deliver(id, generation: state.generation, fire: state.fires, content: content, .onTime, scheduled: nil,
                    event: event.kind.rawValue, clock, into: &out)
        case .unknown:
            let o = Outcome(kind: .positionUnknown, requestIdentifier: id, date: trust.wallTrusted ? clock.wall : nil, count: 0,
                            firstFire: nil, lastFire: nil,
                            detail: "no usable fix for \(Int(configuration.monitor.unknownTimeout)) s while inside zone \(id); its state is unknown until the next good fix")
            out.outcomes.append(o)
            out.changes.append(.outcome(o))
        }
    }

    /// Number of zones in the zone set.
    public var zoneCount: Int { location.monitor.zoneSet?.count ?? 0 }

    /// The zones whose state is not the default: inside or unknown now, or with a fire count,
    /// at most `limit` of them, in zone-set order (its tree's order: nearby zones together); and how
    /// many there are in all.
    /// - Complexity: O(zones with state × log n).
    public func zonesWithState(limit: Int, clock: EngineClock) -> (zones: [ZoneStatus], total: Int) {
        guard let set = location.monitor.zoneSet else { return ([], 0) }
        var numbers = Set<Int>()
        var list: [(Int, RegionState)] = []
        for (n, s) in location.monitor.zonesWithState { numbers.insert(n); list.append((n, s)) }
        for (id, _) in location.zoneStates { if let n = set.number(of: id), !numbers.contains(n) { numbers.insert(n); list.append((n, .outside)) } }
        list.sort { $0.0 < $1.0 }
        let wall = Double(clock.wall.secondsSinceEpoch)
        var out: [ZoneStatus] = []
        for (n, s) in list.prefix(max(0, limit)) {
            let id = set.identifier(of: n)
            let st = location.zoneStates[id]
            let cooldown = set.region(n).cooldown
            let last = [st?.lastEnter, st?.lastExit, st?.lastDwell].compactMap { $0 }.max()
            let quiet = last.map { $0 + cooldown }.flatMap { $0 > wall ? $0 : nil }
            out.append(ZoneStatus(identifier: id, regionState: s, fires: st?.fires ?? 0, quietUntil: quiet))
        }
        return (out, list.count)
    }

    /// The persisted state of zone `identifier`, if it has any.
    public func zoneState(_ identifier: String) -> ZoneState? { location.zoneStates[identifier] }
}
