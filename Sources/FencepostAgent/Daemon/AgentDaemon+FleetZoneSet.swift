// A zone set from the fleet (FleetLink/FleetZoneSetRollout.swift) built by the agent's one
// zone-set path: a child process (`zones build GEOJSON -o STATE.zones --gunzip BLOB`) gunzips
// the verified blob and compiles it; the daemon maps the result, checks it in slices and swaps
// it in (AgentDaemon+ZoneSet.swift), the old set kept on any failure. The set from the fleet then
// replaces the configured `zones` as the source of the agent's zone set, across restarts and
// SIGHUPs, until another comes.
import CivilTime
import Fleet
import FencepostLinux
import LocalNotifications

extension AgentDaemon {
    /// The GeoJSON the zone set is built from: the fleet's, when one is in force and on disk,
    /// else the configuration's `zones`.
    var zonesSource: String? {
        if let s = fleet?.zoneSetSource, BlobFile.allocatedBytes(s) > 0 { return s }
        return configuration.zonesFile
    }

    /// Wires the link's builds to the daemon (called by setUpFleet).
    func setUpFleetZoneSets(_ link: FleetLink) {
        link.buildZoneSet = { [self] _ in self.buildFleetZoneSet() }
    }

    /// Starts the build of the link's verified blob, or queues it behind the build under way.
    func buildFleetZoneSet() {
        guard let r = fleet?.rollout, r.stage == .building else { return }
        if zones.busy {
            zones.fleetBuildWaiting = true
            log.info("fleet: a zone-set build is running; the fleet's set is built when it ends")
            return
        }
        zones.fleetBuildWaiting = false
        var arguments = ["/proc/self/exe", "zones", "build", r.geojsonPath, "-o", zoneSetPath,
                         "--max-radius", "\(configuration.engine.limits.maximumRadius)", "--retain-replaced", "--gunzip", r.downloadPath]
        if let name = configuration.zonesIDProperty { arguments += ["--id-property", name] }
        do {
            let child = try ChildProcess.spawn(arguments, environment: [])
            let started = SystemClocks.boottimeNow().nanosecondsSinceBoot
            zones.build = ZoneSetBuildJob(child: child, sourceHash: 0, source: r.geojsonPath, started: started, fromFleet: true)
            statistics.turns.resetLongestSinceMark()
            log.info("fleet: process \(child.pid) gunzips and builds zone set \(r.reference.sha256.prefix(12))…")
        } catch {
            fleet?.zoneSetBuilt(zones: nil, error: "the zone-set build could not start: \(error)")
        }
    }

    /// A build ended: when it was the fleet's, the link hears how (applied with its zone count,
    /// or why not).
    func fleetZoneSetEnded(_ job: ZoneSetBuildJob, zones count: Int?, error: String?) {
        guard job.fromFleet else { return }
        fleet?.zoneSetBuilt(zones: count, error: error)
    }

    /// The reason for a build's exit status (its own lines are in the agent's log).
    static func buildFailure(_ end: ChildProcess.Termination) -> String {
        switch end {
        case .exited(65): return "a zone of the set is invalid (the agent's log names the feature and why)"
        case .exited(66): return "the blob could not be gunzipped or its GeoJSON read (the agent's log says why)"
        case .exited(74): return "the compiled zone set could not be written (disk full?)"
        default: return "the zone-set build \(end)"
        }
    }
}
