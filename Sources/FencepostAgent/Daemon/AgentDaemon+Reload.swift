// SIGHUP: the configuration is read again on a thread of its own (ThreadJob), then its settings
// are applied in a loop turn and its requests in parts, one per turn. Reading it in the loop held
// every delivery, fix and control reply back for as long as the read took: 66–77 ms for 3,000
// `[[request]]` tables, and for ever when the file is a FIFO that nobody writes or sits on a
// storage device that stopped answering.
//
//   SIGHUP        → ThreadJob(read the file, parse, check, load     the loop goes on
//                   the time zone, fingerprint each request)
//   job readable  → apply: every setting ConfigurationKeys marks `applied` (time zone, clock
//                   trust, caps and limits, socket limits, alerts, patterns, hook, log level),
//                   zone-set build; the keys that need a restart keep their running values and
//                   are named in the log; the requests (the socket's `apply`) in parts, from the
//                   next turn on (AgentDaemon+PartedApply.swift: a SIGHUP meanwhile replaces that
//                   apply, a fleet list's apply under way is let end first)
//   SIGHUP while a read runs → one more read when it ends (the file may have changed since the
//                              read began); more SIGHUPs meanwhile fold into that one
//
// When no thread can be started, the file is read in the loop, as before, with a warning; when the
// thread runs but its eventfd cannot be watched, that SIGHUP is logged as not applied (reading
// again in the loop could block behind the thread's read of a FIFO).
import CivilTime
import FencepostLinux
import LocalNotifications

/// A configuration read after a SIGHUP, with what `apply` compares made beforehand.
struct PreparedConfiguration {
    var configuration: AgentConfiguration
    /// `AppliedRequests.fingerprint(of:)` of each of its requests. Made in the loop, they were most
    /// of applying: 10,000 unchanged requests took a 59 ms turn with them, 12 ms without.
    var fingerprints: [UInt64]
    /// The device zone of its `time_zone` (a TZif file read: off the loop too).
    var deviceZone: ZoneRules

    /// Reads with `read`, loads the time zone with `zone`, then fingerprints the requests: all of
    /// it for the read thread. A time zone that cannot be loaded fails the whole reload.
    static func prepare(_ read: () throws(AgentConfigurationError) -> AgentConfiguration,
                        zone: (String?) throws(ZoneError) -> ZoneRules) throws(AgentConfigurationError) -> PreparedConfiguration {
        let c = try read()
        let rules: ZoneRules
        do { rules = try zone(c.timeZone) } catch {
            throw AgentConfigurationError(path: c.path, line: nil, message: "time_zone: \(error)")
        }
        return PreparedConfiguration(configuration: c, fingerprints: c.requests.map { AppliedRequests.fingerprint(of: $0) },
                                     deviceZone: rules)
    }
}

/// The configuration's reading after a SIGHUP, while it runs.
struct ConfigurationReload {
    /// The read under way, if any.
    var job: ThreadJob<PreparedConfiguration, AgentConfigurationError>?
    /// When it began (boot-time nanoseconds).
    var started: UInt64 = 0
    /// A SIGHUP came while the read ran: read once more when it ends.
    var again = false
}

extension AgentDaemon {
    /// SIGHUP: starts reading the configuration on its own thread (or notes that one more read is
    /// wanted when one runs already).
    func reload() {
        if reloading.job != nil {
            if !reloading.again { log.info("SIGHUP: the configuration is still being read; it is read again when that read ends") }
            reloading.again = true
            return
        }
        let read = environment.reloadConfiguration, zone = environment.resolveDeviceZone
        let prepare = { () throws(AgentConfigurationError) -> PreparedConfiguration in try PreparedConfiguration.prepare(read, zone: zone) }
        let started = SystemClocks.boottimeNow().nanosecondsSinceBoot
        let job: ThreadJob<PreparedConfiguration, AgentConfigurationError>
        do throws(Errno) { job = try ThreadJob(prepare) } catch {
            log.warning("SIGHUP: cannot read the configuration on a thread of its own (\(error)); reading it in this loop turn")
            let result: Result<PreparedConfiguration, AgentConfigurationError>
            do throws(AgentConfigurationError) { result = .success(try prepare()) } catch { result = .failure(error) }
            apply(result, readIn: SystemClocks.boottimeNow().nanosecondsSinceBoot &- started, where: "in the loop")
            return
        }
        do throws(Errno) { try loop.register(job.descriptor, for: .readable, token: .configurationRead) } catch {
            // The read runs and cannot be joined without waiting for it (a FIFO: for ever), nor
            // started again beside it (two readers of one FIFO): it is let go, unapplied.
            job.detach()
            log.error("SIGHUP: cannot watch the thread reading the configuration (\(error)); the configuration is not reloaded")
            return
        }
        reloading.job = job
        reloading.started = started
        log.info("SIGHUP: reading the configuration again from \(configuration.path ?? "?")")
    }

    /// The read has ended: its configuration is applied (or its error logged), then a read that
    /// a SIGHUP asked for meanwhile begins.
    func configurationRead() {
        guard let job = reloading.job else { return }
        reloading.job = nil
        try? loop.unregister(job.descriptor)
        let result = job.finish()
        apply(result, readIn: SystemClocks.boottimeNow().nanosecondsSinceBoot &- reloading.started, where: "on its own thread")
        if reloading.again {
            reloading.again = false
            reload()
        }
    }

    /// At stop: a read still under way (perhaps blocked on a FIFO) is let go; its result is dropped.
    func abandonReload() {
        guard let job = reloading.job else { return }
        reloading.job = nil
        try? loop.unregister(job.descriptor)
        job.detach()
        log.info("stopping with the configuration still being read: that SIGHUP is not applied")
    }

    /// Applies a configuration read after a SIGHUP: every key that can change while running
    /// changes now; those that need a restart (ConfigurationKeys) keep their running values and,
    /// when the file changed them, are named in the log.
    func apply(_ result: Result<PreparedConfiguration, AgentConfigurationError>, readIn nanoseconds: UInt64, where: String) {
        let next: AgentConfiguration, fingerprints: [UInt64], zone: ZoneRules
        switch result {
        case .success(let prepared): (next, fingerprints, zone) = (prepared.configuration, prepared.fingerprints, prepared.deviceZone)
        case .failure(let error):
            log.error("SIGHUP: \(error); keeping the previous configuration")
            return
        }
        let restart = ConfigurationKeys.restartKeysChanged(from: configuration, to: next)
        configuration = configuration.reloaded(by: next)
        log.level = next.logLevel
        // Caps, limits (max_radius: the zone-set build below gets the new one) and alert settings;
        // the engine decides each delivery's signal from its own copy of them.
        perform { $0.reconfigure(next.engine, clock: clock) }
        if !zone.hasSameRules(as: center.engine.deviceZone) {
            let from = center.engine.deviceZone.identifier
            perform { $0.setDeviceZone(zone, clock: clock) }
            log.info("SIGHUP: device zone \(from) → \(zone.identifier)\(from == zone.identifier ? " (new rules)" : ""): floating calendar triggers and quiet hours follow it")
        }
        deviceZoneWatch.schedule(at: SystemClocks.boottimeNow().nanosecondsSinceBoot,
                                zoneIsFixed: configuration.timeZone != nil || environment.readDeviceZone == nil)
        clients.reconfigure(maximumMessageBytes: next.maximumMessageBytes, limits: next.controlLimits)
        outputs.badgeEnabled = next.engine.alertSettings.badge
        outputs.setPatterns(next.patterns)
        outputs.setButtonTimings(next.gpio)
        hook.configure(next.hook)
        log.info("SIGHUP: configuration reloaded from \(next.path ?? "?") (read in \(LoopTurnWatch.milliseconds(nanoseconds)) \(`where`))")
        if !restart.isEmpty {
            log.warning("SIGHUP: \(restart.joined(separator: ", ")) changed but need\(restart.count == 1 ? "s" : "") a restart (systemctl restart fencepost); the running values are kept until then")
        }
        applyConfiguredRequestsInParts(fingerprints: fingerprints)
        reloadZoneSet()
        Memory.releaseFreePages()
    }
}
