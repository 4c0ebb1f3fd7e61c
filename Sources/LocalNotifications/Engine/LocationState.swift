// Location triggers and the mapped zone set: the region monitor that turns fixes into entries,
// exits and dwells, and the per-zone state of zones that have fired
// (NotificationEngine+Location.swift, NotificationEngine+ZoneSet.swift).
import Geofencing

/// The region monitor, its events in flight, and the zone set's per-zone state.
struct LocationState {
    var monitor: RegionMonitor
    /// The monitor's events of the current fix or advance, reused between turns.
    var events: [RegionEvent] = []
    /// The mapped zone set's per-zone state, by zone id: only zones that have fired.
    var zoneStates: [String: ZoneState] = [:]
    /// The generation of zones that start afresh under the current zone set.
    var zoneGeneration: Int64 = 0

    init(monitor: RegionMonitor) { self.monitor = monitor }
}
