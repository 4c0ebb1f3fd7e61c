// The index of the location requests' regions (Geofencing's RegionCatalog) after an apply in a
// loop turn (a fleet request list, a SIGHUP's configuration): rebuilt on a thread of its own instead of in a loop turn (O(regions): 20–60 ms for
// 3,000 circles in a debug build, ~0.3 s for a million in a release one). Meanwhile fixes scan the
// regions added since the last index (correct, O(added) each); the built index is installed in
// one O(1) step, only when no region was added or removed since its snapshot (else the next
// fix rebuilds it, as before). One build at a time; one asked for meanwhile follows it.
import CivilTime
import FencepostLinux
import Geofencing
import LocalNotifications

/// The build of the regions' index on its thread, while it runs.
struct RegionIndexBuild {
    var job: ThreadJob<RegionCatalog.BuiltIndex, Never>?
    /// When it began (boot-time nanoseconds).
    var started: UInt64 = 0
    /// Another build was asked for while this one ran.
    var again = false
}

extension AgentDaemon {
    /// Starts building the regions' index on a thread when a rebuild is due; in this turn when no
    /// thread can be had.
    func prepareRegionIndexOffLoop() {
        if regionIndex.job != nil { regionIndex.again = true; return }
        var snapshot: RegionCatalog.IndexSnapshot?
        perform { snapshot = $0.regionIndexSnapshot(); return EngineOutput() }
        guard let snapshot else { return }
        let job: ThreadJob<RegionCatalog.BuiltIndex, Never>
        do throws(Errno) {
            job = try ThreadJob { () throws(Never) -> RegionCatalog.BuiltIndex in snapshot.build() }
            do throws(Errno) { try loop.register(job.descriptor, for: .readable, token: .regionIndexBuilt) } catch {
                job.detach()
                throw error
            }
        } catch {
            log.warning("regions: cannot build their index on a thread of its own (\(error)); building it in this loop turn")
            perform { $0.abandonRegionIndexSnapshot(); $0.prepareRegionIndex(); return EngineOutput() }
            return
        }
        regionIndex.job = job
        regionIndex.started = SystemClocks.boottimeNow().nanosecondsSinceBoot
    }

    /// The thread has built the index: installed (O(1)) unless the regions changed meanwhile.
    func regionIndexBuilt() {
        guard let job = regionIndex.job else { return }
        regionIndex.job = nil
        try? loop.unregister(job.descriptor)
        guard case .success(let built) = job.finish() else { return }
        var installed = false
        perform { installed = $0.installRegionIndex(built); return EngineOutput() }
        let took = SystemClocks.boottimeNow().nanosecondsSinceBoot &- regionIndex.started
        log.info("regions: index \(installed ? "built" : "built, but the regions changed meanwhile: not used,") in \(LoopTurnWatch.milliseconds(took)) on its own thread")
        if regionIndex.again {
            regionIndex.again = false
            prepareRegionIndexOffLoop()
        }
    }

    /// At stop: a build under way is let go.
    func abandonRegionIndexBuild() {
        guard let job = regionIndex.job else { return }
        regionIndex.job = nil
        try? loop.unregister(job.descriptor)
        job.detach()
    }
}
