// A mapped zone set as a second source of regions for the monitor: its zones get slots from
// `ZoneSet.slotBase` on, go through exactly the same decisions as the catalog's regions (the same
// `process`, the same tracks), and only zones whose state is not the default hold a track — the
// tracks dictionary is the sparse per-zone state.
import Position

extension RegionMonitor {
    /// The region in `slot`: a catalog region, or a zone of the set (built from its record).
    /// - Complexity: O(1) for regions and circle zones; O(vertices) for a polygon zone.
    @inline(__always)
    func region(at slot: Int32) -> Region? {
        if slot >= ZoneSet.slotBase {
            guard let set = zoneSet else { return nil }
            let n = Int(slot - ZoneSet.slotBase)
            return n < set.count ? set.region(n) : nil
        }
        return catalog.regions[Int(slot)]
    }

    /// Appends the zone set's candidates (as slots) to `candidates`.
    mutating func appendZoneSetCandidates(near center: Coordinate, angularRadius: Double) {
        guard let set = zoneSet else { return }
        set.candidates(near: center, angularRadius: angularRadius, into: &zoneCandidates)
        for z in zoneCandidates { candidates.append(z + ZoneSet.slotBase) }
    }

    /// The slot of the zone named `identifier` in the set.
    func zoneSlot(of identifier: String) -> Int32? {
        zoneSet?.number(of: identifier).map { Int32($0) + ZoneSet.slotBase }
    }

    /// Monitors the zones of `set` (nil: none) in place of the current set. A zone of the new set
    /// with the identifier and geometry fingerprint of a zone of the old one keeps its state
    /// (inside, a pending dwell, its cooldowns); every other zone starts afresh.
    ///
    /// The old set's storage must still be valid during the call.
    /// - Complexity: O(zones with state × log n).
    public mutating func replaceZoneSet(_ set: ZoneSet?) {
        let old = zoneSet
        var moved: [(Int32, Track)] = []
        for (slot, track) in tracks where slot >= ZoneSet.slotBase {
            tracks.removeValue(forKey: slot)
            active.remove(slot)
            guard let old, let set else { continue }
            let n = Int(slot - ZoneSet.slotBase)
            let id = old.identifier(of: n)
            if let m = set.number(of: id), set.fingerprint(of: m) == old.fingerprint(of: n) {
                moved.append((Int32(m) + ZoneSet.slotBase, track))
            }
        }
        zoneSet = set
        for (slot, track) in moved {
            tracks[slot] = track
            if !(track.state == .outside && track.dwellDue == nil) { active.insert(slot) }
        }
    }

    /// Puts back the state of zone `number` of the set from a previous run: its last confirmed
    /// state (resolved at the next good fix, as ``restore(_:lastKnown:)`` does) and when it last
    /// reported each kind of event (monitor seconds; cooldowns run from them).
    public mutating func restoreZone(_ number: Int, lastKnown: RegionState, lastEnter: Double?, lastExit: Double?, lastDwell: Double?) {
        guard let set = zoneSet, number >= 0, number < set.count else { return }
        let slot = Int32(number) + ZoneSet.slotBase
        var track = Track()
        if lastKnown != .unknown { track.lastKnown = lastKnown }
        if let t = lastEnter { track.lastEnter = t }
        if let t = lastExit { track.lastExit = t }
        if let t = lastDwell { track.lastDwell = t }
        if lastKnown == .unknown {
            // Only cooldowns to keep: outside-like, not examined at every fix.
            track.state = hadFix ? .outside : .unknown
            tracks[slot] = track
            if track.state != .outside { active.insert(slot) }
        } else {
            tracks[slot] = track
            active.insert(slot)
        }
    }

    /// Zones of the set whose state is not the default (number, state), in zone order.
    /// - Complexity: O(tracks log tracks).
    public var zonesWithState: [(number: Int, state: RegionState)] {
        var out: [(number: Int, state: RegionState)] = []
        for (slot, t) in tracks where slot >= ZoneSet.slotBase { out.append((Int(slot - ZoneSet.slotBase), t.state)) }
        out.sort { $0.number < $1.number }
        return out
    }

    /// When zone `number` last reported entry, exit and dwell (monitor seconds), if ever.
    public func zoneEventTimes(_ number: Int) -> (enter: Double?, exit: Double?, dwell: Double?) {
        guard let t = tracks[Int32(number) + ZoneSet.slotBase] else { return (nil, nil, nil) }
        func known(_ x: Double) -> Double? { x > -.infinity ? x : nil }
        return (known(t.lastEnter), known(t.lastExit), known(t.lastDwell))
    }
}

extension RegionMonitor {
    /// Whether zone `number` of the set holds a track (any state other than the default).
    public func zonesWithStateContains(_ number: Int) -> Bool { tracks[Int32(number) + ZoneSet.slotBase] != nil }
}
