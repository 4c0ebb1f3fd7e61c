// Blobs from the fleet (FleetLink/FleetBlobRollout.swift), handed on by the daemon.
//
// A request list: read on a thread of its own (FleetRequestList: gunzip, parse, ids unique,
// fingerprint; the loop goes on), then applied in parts, one per loop turn, by the driver of
// every apply in parts (AgentDaemon+PartedApply.swift: worked out, checked, committed; then the
// regions' index on a thread). One reading at a time; a list verified while one is read waits
// for it. A newer desired document stops an apply under way between parts (it applies its own
// list); a configuration's apply under way (a SIGHUP's) is let end first.
//
// A zone set: built by the agent's one zone-set path: a child process (`zones build GEOJSON -o STATE.zones --gunzip BLOB`) gunzips
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

    /// Wires the link's hand-ons to the daemon (called by setUpFleet).
    func setUpFleetBlobs(_ link: FleetLink) {
        link.buildZoneSet = { [self] _ in self.buildFleetZoneSet() }
        link.readRequests = { [self] r in self.readFleetRequests(r) }
        link.applyRequests = { [self] r, list, categories in self.startFleetApply(r, list, categories) }
    }

    // MARK: Request lists

    /// Starts reading the link's verified request list on a thread, or lets it wait for the
    /// reading under way.
    func readFleetRequests(_ r: FleetBlobRollout) {
        guard fleetReading.job == nil else {
            fleetReading.waiting = true
            log.info("fleet: a request list is being read; \(r.name) is read when that ends")
            return
        }
        let blob = r.downloadPath, scratch = configuration.statePath + ".requests.jsonl"
        let job: ThreadJob<FleetRequestList, FleetError>
        do throws(Errno) {
            job = try ThreadJob { () throws(FleetError) -> FleetRequestList in try FleetRequestList.read(blob: blob, scratch: scratch) }
        } catch {
            fleet?.requestsRead(r, .failure(FleetError("requests.thread", "the request list cannot be read on a thread of its own: \(error)")))
            return
        }
        do throws(Errno) { try loop.register(job.descriptor, for: .readable, token: .fleetRequestsRead) } catch {
            job.detach()
            fleet?.requestsRead(r, .failure(FleetError("requests.thread", "the thread reading the request list cannot be watched: \(error)")))
            return
        }
        fleetReading.job = job
        fleetReading.rollout = r
        fleetReading.started = SystemClocks.boottimeNow().nanosecondsSinceBoot
        log.info("fleet: reading \(r.name) on a thread of its own")
    }

    /// The reading ended: the link applies the list (or says why not); a list that waited is read next.
    func fleetRequestsRead() {
        guard let job = fleetReading.job, let r = fleetReading.rollout else { return }
        fleetReading.job = nil
        fleetReading.rollout = nil
        try? loop.unregister(job.descriptor)
        let result = job.finish()
        if case .success(let list) = result {
            let took = SystemClocks.boottimeNow().nanosecondsSinceBoot &- fleetReading.started
            log.info("fleet: \(r.name): \(list.requests.count) requests read and checked in \(LoopTurnWatch.milliseconds(took)) on their own thread")
        }
        fleet?.requestsRead(r, result)
        if fleetReading.waiting {
            fleetReading.waiting = false
            if let next = fleet?.rollout, next.kind == .jsonl, next.stage == .building { readFleetRequests(next) }
        }
        Memory.releaseFreePages()
    }

    /// Starts the apply of a list read: it is worked out, checked and committed in parts, in
    /// the next loop turns (``continuePartedApply()``), or once the configuration's apply under
    /// way has ended.
    func startFleetApply(_ r: FleetBlobRollout, _ list: FleetRequestList, _ categories: [NotificationCategory]?) {
        applyInParts(PartedApplyRequest(origin: .fleet(r, list), requests: list.requests, fingerprints: list.fingerprints, categories: categories))
    }

    /// At stop: a reading under way is let go; its result is dropped (the download is kept: the
    /// next start reads it again).
    func abandonFleetReading() {
        guard let job = fleetReading.job else { return }
        fleetReading.job = nil
        fleetReading.rollout = nil
        try? loop.unregister(job.descriptor)
        job.detach()
    }

    // MARK: Zone sets

    /// Starts the build of the link's verified blob, or queues it behind the build under way.
    func buildFleetZoneSet() {
        guard let r = fleet?.rollout, r.kind == .geojson, r.stage == .building else { return }
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

/// The fleet's request list being read on its thread (AgentDaemon+FleetBlobs.swift).
struct FleetRequestsReading {
    var job: ThreadJob<FleetRequestList, FleetError>?
    /// The rollout whose list is read.
    var rollout: FleetBlobRollout?
    /// When the reading began (boot-time nanoseconds).
    var started: UInt64 = 0
    /// Another list was verified while this one was read: read it when this one ends.
    var waiting = false
}
