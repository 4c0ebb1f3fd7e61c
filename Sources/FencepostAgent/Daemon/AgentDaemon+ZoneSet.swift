// The agent's zone set: built from the configured GeoJSON next to the state file, mapped
// read-only, swapped in atomically.
//
//   start   the set on disk is used when it was built from the same GeoJSON (content hash and
//           limits); otherwise it is built in process (nothing else runs yet) and written
//           atomically. A bad GeoJSON with no usable set is a configuration error (exit 78).
//   SIGHUP  a changed GeoJSON is built by a child process (`<this executable> zones build`), so
//           the loop keeps delivering; when it ends well the new set is mapped and swapped in, and
//           zones that are unchanged keep their state. A failed build keeps the old set and logs
//           why. A SIGHUP during a build builds again when it ends. The replaced set is kept as
//           STATE.zones.replaced until the next build or start, so that unmapping it is cheap.
//           The new set's check of every reference (O(zones): ~20 ms at 1M in a release build
//           here, several times that on a board's core, some 50 times that in a debug build)
//           runs in slices, one per loop turn, and the set is swapped in once it has passed.
//           Each slice is sized from the CPU time the last one took (``ZoneSetSwap/sliceTarget``),
//           so a slice stays near its target on any core and in any build.
//   writers every set the agent maps is its own file, renamed into place by its builds, and held
//           under a read lease (MappedFile, guarded): a process that opens it for writing or
//           truncates it (cp, scp, truncate over STATE.zones) makes the kernel send SIGIO and wait;
//           the agent lets go of the set in that loop turn (its zones are unmonitored until
//           the rebuild that it starts at once, from the GeoJSON, ends), says what to do
//           instead, and the writer goes on. Without the lease the writer's bytes would change
//           the mapping under checked offsets, and a truncation would end the agent with SIGBUS.
import CivilTime
import FencepostLinux
import Geofencing
import LocalNotifications
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// A zone-set build running in a child process.
struct ZoneSetBuildJob {
    var child: ChildProcess
    var sourceHash: UInt64
    var source: String
    var started: UInt64
    /// The build of a zone set from the fleet (AgentDaemon+FleetBlobs.swift).
    var fromFleet = false
}

/// A built set being checked in slices before it is swapped in.
struct ZoneSetSwap {
    var loaded: LoadedZoneSet
    var job: ZoneSetBuildJob
    /// Items of the check in the next slice (SliceBudget.swift): the first ~0.1 ms in a release
    /// build here, ~5 ms in a debug build.
    var budget = SliceBudget(first: 1 << 13, bounds: (1 << 10) ... (1 << 20))
    /// Loop turns and nanoseconds spent on the check so far, and its longest slice.
    var slices = 0
    var checking: UInt64 = 0
    var longestSlice: UInt64 = 0
}

/// Where the agent's zone set is in its life: the set mapped now, a build running in a child
/// process, a built set being checked in slices before the swap, and whether a SIGHUP came
/// during either (then the GeoJSON is looked at again when they end). A check starts only
/// when its build has ended, so at most one of `build` and `swap` is set.
struct ZoneSetLifecycle {
    var mapped: LoadedZoneSet?
    var build: ZoneSetBuildJob? { didSet { checkInvariant() } }
    /// A built set whose check runs in slices, one per loop turn, before it is swapped in.
    var swap: ZoneSetSwap? { didSet { checkInvariant() } }
    var buildAgain = false
    /// The next build must not keep the set on disk as current (`--if-changed`): it was written
    /// by another process.
    var buildWhole = false
    /// A verified zone set from the fleet waits for the build under way.
    var fleetBuildWaiting = false

    /// A build or a check is under way: a SIGHUP waits for it.
    var busy: Bool { build != nil || swap != nil }

    private func checkInvariant() {
        assert(build == nil || swap == nil, "a zone-set check runs only after its build has ended")
    }
}

extension AgentDaemon {
    var zoneSetPath: String { ZoneSetFiles.setPath(forState: configuration.statePath) }

    /// Installs the zone set of the configuration at start: the file on disk if current, else
    /// built now, its steps and progress told to systemd through `startup`. Returns false (after
    /// logging) when there is no usable set for a configured GeoJSON.
    func installZoneSetAtStart(_ startup: StartupProgress) -> Bool {
        guard let source = zonesSource else {
            if zones.mapped != nil { swapZoneSet(nil, note: "no zones configured") }
            return true
        }
        // The set the last SIGHUP replaced, kept for that agent's swap: nothing maps it now.
        AtomicFile.removeRetained(ZoneSetFiles.retainedPath(forSet: zoneSetPath))
        startup.step("zone set: reading \(source)")
        let hash: UInt64
        do { hash = try ZoneSetFiles.sourceHash(geojsonPath: source, limits: configuration.engine.limits,
                                                        idProperty: configuration.zonesIDProperty, guarded: true) } catch {
            log.error("zones: \(source): cannot read: \(error.errno)" + (error.operation == "F_SETLEASE" ? " (another process has it open for writing: send SIGHUP once it is written)" : ""))
            return openExistingZoneSet(expected: nil)
        }
        switch openZoneSet(expecting: hash) {
        case .some(let loaded):
            swapZoneSet(loaded, note: "zone set \(zoneSetPath): \(loaded.set.count) zones, built from \(source)")
            return true
        case nil:
            break
        }
        let start = SystemClocks.boottimeNow().nanosecondsSinceBoot
        do {
            let built = try ZoneSetFiles.build(geojsonPath: source, output: zoneSetPath, limits: configuration.engine.limits,
                                                        idProperty: configuration.zonesIDProperty, guarded: true) { features, offset, total in
                if offset >= total {
                    startup.step("building zone set: \(StartupProgress.count(features)) zones read; indexing and writing")
                } else {
                    startup.progress { StartupProgress.zoneSetText(features: features, offset: offset, total: total) }
                }
            }
            let seconds = Double(SystemClocks.boottimeNow().nanosecondsSinceBoot - start) / 1e9
            log.info("zone set built: \(built.zones) zones from \(source) in \((seconds * 10).rounded() / 10) s (\(built.bytes / 1024) KiB)")
        } catch {
            for line in error.lines { log.error("zones: \(line)") }
            return openExistingZoneSet(expected: nil)
        }
        Memory.releaseFreePages()
        guard let loaded = openZoneSet(expecting: hash) else { return false }
        swapZoneSet(loaded, note: "zone set \(zoneSetPath): \(loaded.set.count) zones")
        return true
    }

    /// Maps the set on disk when it was built from `hash`; logs why not otherwise.
    func openZoneSet(expecting hash: UInt64) -> LoadedZoneSet? {
        let loaded: LoadedZoneSet
        do { loaded = try LoadedZoneSet(path: zoneSetPath, guarded: true) } catch {
            if case .file(let e) = error, e.errno.rawValue == ENOENT { return nil }
            log.warning("zone set \(zoneSetPath): \(error)")
            return nil
        }
        warnIfUnguarded(loaded)
        guard loaded.set.sourceHash == hash else {
            log.info("zone set \(zoneSetPath) was built from another GeoJSON: building it again")
            return nil
        }
        return loaded
    }

    /// After a failed build: keep the set in memory, or (at start) the one on disk whatever it was
    /// built from; false when there is none.
    func openExistingZoneSet(expected: UInt64?) -> Bool {
        if zones.mapped != nil { log.error("zones: keeping the previous zone set"); return true }
        guard let loaded = try? LoadedZoneSet(path: zoneSetPath, guarded: true) else { return false }
        warnIfUnguarded(loaded)
        swapZoneSet(loaded, note: "zones: using the previous zone set \(zoneSetPath) (\(loaded.set.count) zones) until the GeoJSON builds")
        return true
    }

    /// Puts `loaded` in place of the current set (unchanged zones keep their state), then lets
    /// the old mapping go.
    func swapZoneSet(_ loaded: LoadedZoneSet?, note: String) {
        let old = zones.mapped
        perform { $0.setZoneSet(loaded?.set, clock: clock) }
        zones.mapped = loaded
        _ = old   // unmapped here, after the engine stopped using it
        log.info(note)
    }

    /// SIGHUP: a child process looks at the GeoJSON and, if it (or the limits) changed, builds
    /// the set (`zones build --if-changed`): neither the content hash of a large file nor the
    /// build runs in a loop turn.
    func reloadZoneSet() {
        guard let source = zonesSource else {
            if zones.mapped != nil { swapZoneSet(nil, note: "SIGHUP: no zones configured; zone set removed") }
            return
        }
        if zones.busy {
            zones.buildAgain = true
            log.info("SIGHUP: a zone-set build is running; the GeoJSON is looked at again when it ends")
            return
        }
        // --retain-replaced: the set this agent maps is kept under a second name, so that letting
        // it go after the swap frees no blocks in the loop turn (~80 ms at 1M zones).
        var arguments = ["/proc/self/exe", "zones", "build", source, "-o", zoneSetPath,
                         "--max-radius", "\(configuration.engine.limits.maximumRadius)"]
            + (zones.buildWhole ? [] : ["--if-changed"]) + ["--retain-replaced"]
        if let name = configuration.zonesIDProperty { arguments += ["--id-property", name] }
        let whole = zones.buildWhole
        zones.buildWhole = false
        do {
            // posix_spawn returns when the child has exec'd (vfork): this turn waits that long,
            // so the log says how long (0.2–2.2 ms measured; Benchmarks/log/NOTES.md).
            let before = SystemClocks.boottimeNow().nanosecondsSinceBoot
            let child = try ChildProcess.spawn(arguments, environment: [])
            let started = SystemClocks.boottimeNow().nanosecondsSinceBoot
            zones.build = ZoneSetBuildJob(child: child, sourceHash: 0, source: source, started: started)
            statistics.turns.resetLongestSinceMark()
            log.info((whole ? "zones: process \(child.pid) builds the zone set again from \(source)"
                             : "SIGHUP: process \(child.pid) builds the zone set if the zones changed")
                     + " (started in \(LoopTurnWatch.milliseconds(started &- before)))")
        } catch {
            log.error("SIGHUP: cannot start the zone-set build: \(error); keeping the zone set")
        }
    }

    /// SIGCHLD: a finished build is mapped and its check begun (or the failure logged). The set
    /// was read back by the child that wrote it; here its structure is checked again, in slices
    /// (no checksum pass: no long loop turn), before ``continueZoneSetSwap()`` swaps it in.
    func pollZoneSetBuild() {
        guard let job = zones.build, let end = try? job.child.reap() else { return }
        zones.build = nil
        if end == .exited(0) || end == .exited(ZoneSetFiles.unchangedStatus) {
            do {
                let loaded = try LoadedZoneSet(path: zoneSetPath, verifyChecksum: false, deferStructureCheck: true, guarded: true)
                warnIfUnguarded(loaded)
                if let current = zones.mapped, current.set.checksum == loaded.set.checksum {
                    log.info("SIGHUP: zones unchanged (\(current.set.count) zones)")
                    fleetZoneSetEnded(job, zones: current.set.count, error: nil)
                } else {
                    zones.swap = ZoneSetSwap(loaded: loaded, job: job)
                    return   // the check runs from the next turn on (armTimers wakes the loop at once)
                }
            } catch {
                log.error("zone set \(zoneSetPath): \(error); keeping the previous zone set")
                fleetZoneSetEnded(job, zones: nil, error: "zone set \(zoneSetPath): \(error)")
            }
        } else {
            log.error("zone-set build of \(job.source) \(end); keeping the previous zone set (its error is above)")
            fleetZoneSetEnded(job, zones: nil, error: Self.buildFailure(end))
        }
        buildAgainIfAsked()
    }

    /// One slice of the pending set's check; once it has passed, the set is swapped in.
    func continueZoneSetSwap() {
        guard var swap = zones.swap else { return }
        let begin = SystemClocks.boottimeNow().nanosecondsSinceBoot
        let beginCPU = SystemClocks.threadCPUNow()
        let passed: Bool
        do { passed = try swap.loaded.continueCheck(budget: swap.budget.items) } catch {
            zones.swap = nil
            log.error("zone set \(zoneSetPath): \(error); keeping the previous zone set")
            fleetZoneSetEnded(swap.job, zones: nil, error: "zone set \(zoneSetPath): \(error)")
            buildAgainIfAsked()
            return
        }
        let checked = SystemClocks.boottimeNow().nanosecondsSinceBoot
        swap.budget.record(swap.budget.items, cpu: SystemClocks.threadCPUNow() &- beginCPU)
        swap.slices += 1
        swap.checking += checked &- begin
        swap.longestSlice = max(swap.longestSlice, checked &- begin)
        guard passed else { zones.swap = swap; return }
        zones.swap = nil
        let seconds = Double(checked - swap.job.started) / 1e9
        let turn = Double(statistics.turns.longestSinceMark / 10_000) / 100
        swapZoneSet(swap.loaded, note: "zone set rebuilt in \((seconds * 10).rounded() / 10) s: \(swap.loaded.set.count) zones from \(swap.job.source); longest loop turn meanwhile \(turn) ms")
        // This turn's own work (its length is in the loop's figures, not in "meanwhile").
        let done = SystemClocks.boottimeNow().nanosecondsSinceBoot
        log.info("zone set swapped in \(LoopTurnWatch.milliseconds(done &- checked)) (checked in \(swap.slices) loop turns, \(LoopTurnWatch.milliseconds(swap.checking)) in all, the longest \(LoopTurnWatch.milliseconds(swap.longestSlice)))")
        fleetZoneSetEnded(swap.job, zones: swap.loaded.set.count, error: nil)
        buildAgainIfAsked()
    }

    /// A SIGHUP came during the build or its check: look at the GeoJSON again.
    func buildAgainIfAsked() {
        if zones.fleetBuildWaiting {
            buildFleetZoneSet()
            if zones.busy { return }
        }
        if zones.buildAgain {
            zones.buildAgain = false
            reloadZoneSet()
        }
    }

    /// SIGIO: another process is opening a set the agent maps for writing, or truncating it (its
    /// lease is being broken). The set is let go now — the writer waits for that — and built
    /// again from the GeoJSON.
    func letGoOfZoneSetsBeingWritten() {
        var replaced: String?
        if let swap = zones.swap, swap.loaded.file.isBeingReplaced {
            zones.swap = nil   // unmapped here: the writer goes on
            replaced = swap.loaded.path
        }
        if let mapped = zones.mapped, mapped.file.isBeingReplaced {
            replaced = mapped.path
            swapZoneSet(nil, note: "zones: zone set let go; its zones are not monitored until it is built again")
        }
        guard let path = replaced else { return }
        log.error("zones: another process is writing or truncating \(path), the zone set this agent maps (a cp, scp or truncate over it): "
                  + "the agent let go of it rather than read a file that changes under it, and builds it again from \(configuration.zonesFile ?? "its GeoJSON"). "
                  + "The agent builds and replaces this file itself: to change the zones, edit the GeoJSON that `zones` names and send SIGHUP (systemctl reload fencepost); "
                  + "never write into \(path): a set built elsewhere from that GeoJSON goes in under another name renamed over it (mv), then SIGHUP")
        zones.buildWhole = true
        if zones.busy { zones.buildAgain = true } else { reloadZoneSet() }
    }

    /// A set mapped without a lease (the file system or kernel offers none) is named once: a
    /// writer over it could end the agent.
    func warnIfUnguarded(_ loaded: LoadedZoneSet) {
        if let e = loaded.file.unguardedBecause {
            log.warning("zone set \(loaded.path): cannot hold a lease on it (F_SETLEASE: \(e)\(e.rawValue == EACCES || e.rawValue == EPERM ? "; it is not the agent's file: chown it to the agent's user" : "")): "
                        + "a cp or truncate over it while the agent runs would end the agent; change zones only by editing the GeoJSON and SIGHUP")
        }
    }
}
