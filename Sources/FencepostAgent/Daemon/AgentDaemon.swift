// `fencepost run`: one thread, one epoll loop (design §1, §6).
//
//   signalfd (TERM/INT: stop with outputs off; HUP: reload; CHLD: reap the hook and zone-set
//             builds; IO: another process writes a mapped zone set, which is let go)
//   timerfd CLOCK_BOOTTIME  — the earliest of: engine intervals/dwell/fix timeout, annunciator
//                             pattern steps, button long press, GPS reconnect or replayed fix,
//                             hook time limit, systemd watchdog
//   timerfd CLOCK_REALTIME  — the next calendar fire (TFD_TIMER_ABSTIME | CANCEL_ON_SET:
//                             a clock step wakes the loop, and the engine recomputes)
//   GPS descriptor, button line, control socket and its connections
//
// Nothing polls: when nothing is due the process sleeps in epoll_wait. Every engine output is
// committed to SQLite (DurableNotificationCenter) before its signals reach the GPIO lines or
// the hook; the fsync that makes the commit survive a power cut follows the GPIO change: asked
// for at the end of the loop turn and run by the state file's sync thread, so that neither the
// due → buzzer latency nor the next turn waits for the disk. A control reply waits for the sync
// that covers what it reports (AgentDaemon+StateSync.swift).
//
// Size: the loop and its event handlers, each a few lines that hand the event to the concern
// that owns it (the extensions hold the reload, the zone-set swap, the state sync and memory
// release; the concerns are types of their own: WallClockTrust, SystemdStatus, DeviceZoneWatch,
// DaemonStatistics, GPSFeed, AlertOutputs, ControlConnections, DeliveryHook, IdleRelease).
import Annunciator
import CivilTime
import FencepostJSON
import FencepostLinux
import LocalNotifications
import Position
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// Why the daemon could not start or had to stop.
public struct DaemonError: Error, CustomStringConvertible {
    public var message: String
    public var exitCode: Int32
    public init(_ message: String, exitCode: Int32 = 1) { self.message = message; self.exitCode = exitCode }
    public var description: String { message }
}

/// The agent.
///
/// Stored properties: the router between the loop and the concerns. The loop, its signals and
/// its two timers (4); the configuration and the environment (2); one per concern it routes
/// events to (16: the notification center, the control service and connections, the outputs,
/// GPS, the hook, the zone set, the reload, the fleet's request-list reading, the applies in
/// parts, the regions' index build, the wall clock, systemd, the device zone watch, statistics,
/// idle release); and five facts of the loop itself (exit code, the fix being
/// handled, where syncs run, the GPIO and button lines' failure limiters).
public final class AgentDaemon {
    /// How to build the parts that depend on the machine; tests and the demo choose the console.
    public struct Environment {
        /// The GPIO backend for `configuration.gpio` (the executable opens libgpiod or the console).
        public var makeGPIO: (GPIOConfiguration) throws(GPIOError) -> any GPIOBackend
        /// Reads the configuration again (SIGHUP).
        public var reloadConfiguration: () throws(AgentConfigurationError) -> AgentConfiguration
        /// The fixes of a replay source, read by the executable.
        public var replayFixes: [Fix]
        /// The device zone and zone lookup.
        public var deviceZone: ZoneRules
        public var zoneLookup: (String) -> ZoneRules?
        /// The device zone for a configuration's `time_zone` (nil: the system's), at a SIGHUP.
        public var resolveDeviceZone: (String?) throws(ZoneError) -> ZoneRules
        /// Reads the device zone again (`TZ`, else /etc/localtime): called every
        /// ``DeviceZoneWatch/interval`` while the configuration names no `time_zone` (a SIGHUP may
        /// add or remove one); nil: never (tests with a fixed zone).
        public var readDeviceZone: (() -> Result<ZoneRules, ZoneError>)?
        public var log: DaemonLog

        public init(makeGPIO: @escaping (GPIOConfiguration) throws(GPIOError) -> any GPIOBackend,
                    reloadConfiguration: @escaping () throws(AgentConfigurationError) -> AgentConfiguration,
                    replayFixes: [Fix], deviceZone: ZoneRules, zoneLookup: @escaping (String) -> ZoneRules?,
                    resolveDeviceZone: @escaping (String?) throws(ZoneError) -> ZoneRules,
                    readDeviceZone: (() -> Result<ZoneRules, ZoneError>)? = nil, log: DaemonLog) {
            self.makeGPIO = makeGPIO; self.reloadConfiguration = reloadConfiguration; self.replayFixes = replayFixes
            self.deviceZone = deviceZone; self.zoneLookup = zoneLookup; self.resolveDeviceZone = resolveDeviceZone
            self.readDeviceZone = readDeviceZone; self.log = log
        }
    }

    var configuration: AgentConfiguration
    let environment: Environment
    var log: DaemonLog { environment.log }
    let loop: EventLoop<DaemonToken>
    let signals: SignalReceiver
    let monotonicTimer: MonotonicTimer
    let wallTimer: WallClockTimer
    let center: DurableNotificationCenter
    var control = ControlService()
    /// The control socket and its connections.
    let clients: ControlConnections
    let outputs: AlertOutputs
    let gps: GPSFeed
    let hook: DeliveryHook
    /// The zone set: mapped, being built, being checked (AgentDaemon+ZoneSet.swift).
    var zones = ZoneSetLifecycle()
    /// The watchdog and the status line (SystemdStatus.swift).
    var systemd = SystemdStatus()
    /// When to read the device zone again (DeviceZoneWatch.swift).
    var deviceZoneWatch = DeviceZoneWatch()
    /// The wall clock the engine reads and whether it is trusted (`clock_trust`).
    var wallClock = WallClockTrust()
    var exitCode: Int32?
    /// Since when it runs, due → GPIO and fix → GPIO latencies, loop turns (DaemonStatistics.swift).
    public internal(set) var statistics: DaemonStatistics
    /// A GPIO line that keeps failing while patterns step: logged as one repeating condition.
    var gpioFailures = RepeatLimiter()
    /// The button line failing to read (it stays readable, so this would repeat every loop turn).
    var buttonFailures = RepeatLimiter()
    /// When to give memory back after deliveries and control traffic.
    var idleRelease = IdleRelease()
    /// The time of the fix being processed, for the log of the location deliveries it causes.
    var fixTime: WallInstant?
    /// Whether the state file's fsyncs run on its sync thread (else in the loop, at the end of each turn).
    var syncsInBackground = false
    /// The configuration being read again after a SIGHUP (AgentDaemon+Reload.swift).
    var reloading = ConfigurationReload()
    /// The link to the fleet's broker, when configured (AgentDaemon+Fleet.swift).
    var fleet: FleetLink?
    /// A request list from the fleet being read on its thread (AgentDaemon+FleetBlobs.swift).
    var fleetReading = FleetRequestsReading()
    /// The configuration's or the fleet's request list applied in parts (AgentDaemon+PartedApply.swift).
    var applies = PartedApplies()
    /// The regions' index being built on its thread (AgentDaemon+RegionIndex.swift).
    var regionIndex = RegionIndexBuild()

    /// Opens everything: state file, control socket, GPIO, GPS; restores the engine and applies
    /// the configuration's requests and categories (idempotently).
    public init(configuration: AgentConfiguration, environment: Environment) throws(DaemonError) {
        self.configuration = configuration
        self.environment = environment
        let log = environment.log
        // One heap for every thread, before any exists (the sync and read threads free into it).
        Memory.useOneHeap()
        do {
            // Signals first, before any thread or child exists, so the mask is everyone's.
            signals = try SignalReceiver(additional: [SIGCHLD, SIGIO])   // SIGIO: a lease on a mapped file is being broken
            loop = try EventLoop(capacity: 64)
            monotonicTimer = try MonotonicTimer()
            wallTimer = try WallClockTimer()
        } catch {
            throw DaemonError("cannot set up the event loop: \(error)")
        }
        statistics = DaemonStatistics(startedWall: SystemClocks.wallNow(), startedMonotonic: SystemClocks.boottimeNow())
        var engineConfiguration = configuration.engine
        engineConfiguration.deliveredCap = max(engineConfiguration.deliveredCap, 1)
        let engine = NotificationEngine(configuration: engineConfiguration, deviceZone: environment.deviceZone,
                                        zoneLookup: environment.zoneLookup)
        var noGNSSYet = GNSSClock()
        let firstClock = WallClockTrust.read(configuration.clockTrust, gnss: &noGNSSYet)
        _ = StartupProgress(notifier: systemd.notifier, step: "loading state file \(configuration.statePath)")
        do {
            center = try DurableNotificationCenter(path: configuration.statePath, engine: engine, clock: firstClock, guardState: true)
        } catch {
            throw DaemonError("state file: \(error)", exitCode: 73)
        }
        for problem in center.unreadableRows { log.error(problem) }
        center.defersSync = true
        let listener: UnixListener
        do {
            listener = try UnixListener(path: configuration.socketPath, mode: mode_t(configuration.socketMode))
        } catch {
            throw DaemonError("control socket: \(error)", exitCode: 73)
        }
        var groups: [(id: UInt32, name: String)] = []
        if let name = configuration.socketGroup {
            guard let gid = SystemUsers.groupID(named: name) else {
                throw DaemonError("control socket: there is no group \"\(name)\" (socket_group in \(configuration.path ?? "the configuration"))", exitCode: 78)
            }
            do { try SystemUsers.setGroup(of: configuration.socketPath, to: gid) } catch {
                throw DaemonError("control socket: cannot give \(configuration.socketPath) to group \(name): \(error)", exitCode: 73)
            }
            groups.append((gid, name))
        }
        let policy = ControlPolicy(ownerUserID: SystemUsers.currentUserID, groups: groups)
        clients = ControlConnections(listener: listener, loop: loop, policy: policy,
                                     maximumMessageBytes: configuration.maximumMessageBytes, limits: configuration.controlLimits, log: log)
        let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
        do {
            let backend = try environment.makeGPIO(configuration.gpio)
            outputs = try AlertOutputs(backend: backend, configuration: configuration.gpio, patterns: configuration.patterns, now: now)
        } catch {
            throw DaemonError("GPIO: \(error)", exitCode: 69)
        }
        outputs.badgeEnabled = configuration.engine.alertSettings.badge
        let source: GPSFeed.Source
        switch configuration.gps {
        case .none: source = .none
        case .serial(let device, let baud): source = .serial(path: device, baud: baud)
        case .gpsd(let host, let port):
            // libgps is loaded at first use: a missing library is a start-up error, not a retry loop.
            do { try GPSDClient.loadLibrary() } catch { throw DaemonError("GPS: \(error)", exitCode: 69) }
            source = .gpsd(host: host, port: port)
        case .replay(let path, let speed, let exitAtEnd):
            source = .replay(name: path, fixes: environment.replayFixes.filter { $0.time != nil }, speed: speed, exitAtEnd: exitAtEnd)
        }
        gps = GPSFeed(source, uere: configuration.gpsUERE, log: log)
        hook = DeliveryHook(configuration.hook, log: log)
        do {
            try loop.register(signals.descriptor, for: .readable, token: .signals)
            try loop.register(monotonicTimer.descriptor, for: .readable, token: .monotonicTimer)
            try loop.register(wallTimer.descriptor, for: .readable, token: .wallTimer)
            try loop.register(clients.listener.descriptor, for: .readable, token: .listener)
            if let fd = outputs.button?.fileDescriptor { try loop.register(fd, for: .readable, token: .button) }
        } catch {
            throw DaemonError("cannot set up the event loop: \(error)")
        }
        gps.onDescriptorChange = { [loop] old, new in
            if let old { try? loop.unregister(old) }
            if let new { try? loop.register(new, for: [.readable, .hangup], token: .gps) }
        }
        try setUpFleet()
    }

    // MARK: Clocks (WallClockTrust.swift)

    var clock: EngineClock { wallClock.clock(configuration.clockTrust) }

    /// Whether the engine's wall time is GNSS time now (`clock_trust = "gnss"` and a fix gave one).
    var wallIsGNSS: Bool { wallClock.isGNSS(configuration.clockTrust) }

    /// Takes the GNSS times of `fix` into the wall clock (``WallClockTrust/take(_:arrival:trust:minimumTrustedWall:log:)``).
    func takeGNSSTime(_ fix: Fix, arrival: UInt64) {
        wallClock.take(fix, arrival: arrival, trust: configuration.clockTrust,
                       minimumTrustedWall: configuration.engine.minimumTrustedWall, log: log)
    }

    /// GNSS time minus the system clock, seconds (nil unless the wall clock is GNSS time).
    var gnssOffsetToSystem: Double? { wallClock.offsetToSystem(configuration.clockTrust) }

    // MARK: Run

    /// Nanoseconds of control work a loop turn starts (the turn's other work and the last answer
    /// begun come on top): the longest turn stays near it however many clients are ready.
    static let controlBudget: UInt64 = 20_000_000

    /// Runs until SIGTERM/SIGINT (exit 0), the end of a replay with `exit_at_end` (exit 0), or a
    /// fatal error (its exit code). Outputs are off when this returns.
    public func run() -> Int32 {
        let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
        log.info("running: state \(configuration.statePath), socket \(configuration.socketPath), GPIO \(outputs.backendDescription), GPS \(gps.description), \(center.engine.pendingCount) pending")
        // Deliveries unanswered before the restart light the badge again.
        for d in center.engine.delivered where !d.isAcknowledged { try? outputs.remind(d.identifier, usesLED: configuration.engine.alertSettings.led, at: now) }
        act(on: center.restoreOutput)
        let startup = StartupProgress(notifier: systemd.notifier, step: "applying the configuration's requests")
        applyConfiguredRequests()
        if !installZoneSetAtStart(startup) {
            log.error("zones: no usable zone set; stopping")
            shutDown()
            return 78
        }
        gps.start(at: now)
        fleet?.start(now: now)
        deviceZoneWatch.schedule(at: now, zoneIsFixed: configuration.timeZone != nil || environment.readDeviceZone == nil)
        systemd.start(at: now, log: log)
        syncState()
        startSyncThread()
        startup.ready()   // serving: state, requests, zone set and GPS in place
        updateStatusLine()
        let code = releaseMemory()
        log.info("start-up memory released: heap trimmed, \(code.mappings) read-only file mappings (\(code.bytes / 1024) KiB) dropped from the page table")

        while exitCode == nil {
            armTimers()
            let events: ReadyEvents<DaemonToken>
            do { events = try loop.wait() } catch {
                log.error("epoll_wait: \(error)")
                exitCode = 1
                break
            }
            var mark = SystemClocks.boottimeNow().nanosecondsSinceBoot
            var markCPU = SystemClocks.threadCPUNow()
            let turnStart = mark
            /// The work since `mark` is one part of the turn, named `what` when the turn is slow;
            /// `mark` moves on to now.
            func endPart(_ what: () -> String) {
                let done = SystemClocks.boottimeNow().nanosecondsSinceBoot
                let doneCPU = SystemClocks.threadCPUNow()
                statistics.turns.note(what, from: mark, to: done, cpu: doneCPU &- markCPU)
                mark = done
                markCPU = doneCPU
            }
            statistics.turns.begin(at: mark, cpu: markCPU)
            for event in events {
                var what = "?"
                var served: ServedLines?
                switch event.token {
                case .signals: what = handleSignals()
                case .monotonicTimer:
                    let armed = monotonicTimer.deadline   // read before: an expired timer forgets its deadline
                    _ = try? monotonicTimer.readExpirations()
                    statistics.deliveries.wakeDue = armed?.nanosecondsSinceBoot
                case .wallTimer:
                    let armed = wallTimer.deadline
                    switch try? wallTimer.read() {
                    case .clockWasSet?: log.info("the wall clock was set: recomputing calendar triggers")
                    case .expired?:
                        if let d = armed {
                            // The wall deadline on the monotonic clock: now minus how late the wall clock says we are.
                            let wall = SystemClocks.realtimeNow()
                            let lateNs = (wall.instant.secondsSinceEpoch - d.instant.secondsSinceEpoch) * 1_000_000_000
                                + Int64(wall.nanoseconds) - Int64(d.nanoseconds)
                            let mono = SystemClocks.boottimeNow().nanosecondsSinceBoot
                            statistics.deliveries.wakeDue = lateNs >= 0 ? mono - UInt64(lateNs) : mono
                        }
                    case nil: break
                    }
                case .gps:
                    what = "GPS input"
                    handleFixes(gps.handleReadable(at: SystemClocks.boottimeNow().nanosecondsSinceBoot, hangup: event.isHangup))
                case .button: what = "button"; handleButton()
                case .fleet: what = "fleet link"; fleet?.handle(readable: event.isReadable || event.isHangup || event.isError, writable: event.isWritable, now: mark)
                case .listener: what = "accepting clients"; clients.acceptAll(now: mark)
                case .stateSynced: what = "state synced"; stateSynced(now: mark)
                case .configurationRead: what = "SIGHUP: configuration read in, its settings applied"; configurationRead()
                case .fleetRequestsRead: what = "fleet: request list applied"; fleetRequestsRead()
                case .regionIndexBuilt: what = "regions: index installed"; regionIndexBuilt()
                case .connection(let id):
                    // Control work has a budget per turn: past it, the other ready connections
                    // wait for the next turn (epoll is level-triggered: they are reported again,
                    // after the due work below), so many busy clients cannot hold a buzzer back.
                    if mark &- turnStart < Self.controlBudget { served = handleConnection(id, now: mark) } else { what = "control connection deferred" }
                }
                let done = SystemClocks.boottimeNow().nanosecondsSinceBoot
                let doneCPU = SystemClocks.threadCPUNow()
                switch event.token {
                case .monotonicTimer, .wallTimer: break     // their work is in handleTime
                default:
                    statistics.turns.note({ served?.description ?? what }, from: mark, to: done, cpu: doneCPU &- markCPU)
                    idleRelease.worked(at: done)
                }
                mark = done
                markCPU = doneCPU
            }
            if let due = statistics.deliveries.wakeDue, let late = statistics.turns.woke(due: due) {
                log.repeating(.warning, late, limiter: &statistics.turns.late.lines, at: turnStart)
            } else if statistics.turns.late.mayClear(at: turnStart) {
                log.cleared("timers are met on time again", limiter: &statistics.turns.late.lines, at: turnStart)
            }
            handleTime()
            statistics.deliveries.wakeDue = nil
            releaseMemoryIfIdle()
            endPart { "due work (engine, outputs, hook, GPS timers)" }
            if let origin = applies.current?.origin {
                continuePartedApply()
                endPart { "\(origin.name): apply in parts, a part" }
            }
            if !applies.settled.isEmpty {
                serveSettledConnections(now: mark)
                endPart { "control connections: the lines after an apply's answer" }
            }
            fleet?.endTurn()
            endPart { "fleet link (acknowledged rows deleted, rows handed)" }
            endTurnSync()
            endPart { syncsInBackground ? "state sync (asked)" : "state sync (fsync)" }
            if let slow = statistics.turns.end(at: mark, cpu: markCPU) {
                log.repeating(.warning, slow, limiter: &statistics.turns.slowLines, at: mark)
            } else if statistics.turns.slowLinesMayClear(at: mark) {
                // Read before: the message is built while `statistics.turns.slowLines` is held inout.
                let threshold = statistics.turns.threshold
                log.cleared("loop turns are under \(threshold / 1_000_000) ms again", limiter: &statistics.turns.slowLines, at: mark)
            }
        }
        shutDown()
        return exitCode ?? 0
    }

    /// Everything due by the clocks: engine timers, replayed fixes, reconnects, patterns, hook limits, watchdog.
    func handleTime() {
        let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
        let fixes = gps.handleDeadline(at: now)
        if !fixes.isEmpty { handleFixes(fixes) }
        perform { $0.advance(clock: clock) }
        for press in outputs.advanceButton(to: now) { handlePress(press) }
        do {
            try outputs.advance(to: SystemClocks.boottimeNow().nanosecondsSinceBoot)
            log.cleared("GPIO: the lines answer again", limiter: &gpioFailures, at: now)
        } catch {
            log.repeating(.error, "GPIO: \(error)", limiter: &gpioFailures, at: now)
        }
        hook.poll(at: now)
        fleet?.tick(now: now)
        if deviceZoneWatch.isDue(at: now) { checkDeviceZone(at: now) }
        continueZoneSetSwap()
        clients.advance(to: now)
        systemd.advance(to: now)
        if gps.replayFinished && outputs.annunciator.playingID == nil && exitCode == nil {
            log.info("replay finished")
            exitCode = 0
        }
    }

    func armTimers() {
        var deadlines: [UInt64] = []
        let wake = center.engine.nextWakeup
        if let m = wake.monotonic { deadlines.append(m.nanosecondsSinceBoot) }
        if let d = outputs.nextDeadline { deadlines.append(d) }
        if let d = gps.nextDeadline { deadlines.append(d) }
        if let d = hook.nextDeadline { deadlines.append(d) }
        if let d = fleet?.nextDeadline { deadlines.append(d) }
        if let d = clients.nextDeadline { deadlines.append(d) }
        if let d = systemd.nextWatchdog { deadlines.append(d) }
        if let d = deviceZoneWatch.nextCheck { deadlines.append(d) }
        if let d = idleRelease.deadline { deadlines.append(d) }
        if zones.swap != nil { deadlines.append(1) }   // the next slice of a new zone set's check: at once
        if applies.current != nil { deadlines.append(1) }   // the next part of a request list's apply: at once
        if center.engine.hasDeferredFires { deadlines.append(1) }   // fires over the engine's per-turn budget: at once
        if let d = wallClock.deadline(trust: configuration.clockTrust, wallTrusted: center.engine.wallTrusted, nextWallWake: wake.wall) {
            deadlines.append(d)
        }
        do {
            if let next = deadlines.min() {
                try monotonicTimer.arm(at: MonotonicInstant(nanosecondsSinceBoot: max(next, 1)))
            } else {
                try monotonicTimer.disarm()
            }
            // On GNSS time the calendar deadline is a boot time (the system clock may be years off).
            if let w = wake.wall, !wallIsGNSS { try wallTimer.arm(at: w) } else { try wallTimer.disarm() }
        } catch {
            log.error("timerfd: \(error)")
        }
    }

    // MARK: Engine

    /// Runs an engine operation through the durable center and acts on its output.
    func perform(_ operation: (inout NotificationEngine) -> EngineOutput) {
        do {
            let out = try center.perform { (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in operation(&e) }
            act(on: out)
        } catch {
            fatal(error)
        }
    }

    /// Signals deliveries and stops acknowledged ones. Called only after the output was committed.
    func act(on out: EngineOutput) {
        let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
        for d in out.deliveries {
            var signalled = false
            do { signalled = try outputs.deliver(d, at: now) } catch { log.error("GPIO: \(error)") }
            let after = SystemClocks.boottimeNow().nanosecondsSinceBoot
            // Only signals that began at once count: one queued behind a playing pattern waits by design.
            if signalled, d.outcome == .onTime { statistics.deliveries.recordSignal(regionEvent: d.regionEvent != nil, signalledAt: after) }
            log.info("delivered \(d.identifier) \"\(d.content.title)\"\(d.outcome == .onTime ? "" : " (\(d.outcome.name))")\(d.regionEvent.map { " on \($0)" } ?? "")\(d.regionEvent != nil ? fixTime.map { " (fix \($0))" } ?? "" : "")")
            hook.run(d, at: now)
        }
        if !out.deliveries.isEmpty { idleRelease.worked(at: SystemClocks.boottimeNow().nanosecondsSinceBoot) }
        for o in out.outcomes { log.info("\(o.kind.rawValue) \(o.requestIdentifier): \(o.detail)") }
        for id in out.acknowledged { try? outputs.acknowledge(id, at: now) }
        if !out.deliveries.isEmpty || !out.acknowledged.isEmpty { updateStatusLine() }
    }

    func handleFixes(_ fixes: [Fix]) {
        for fix in fixes {
            statistics.deliveries.fixArrival = SystemClocks.boottimeNow().nanosecondsSinceBoot
            takeGNSSTime(fix, arrival: statistics.deliveries.fixArrival!)
            fixTime = fix.time
            perform { $0.process(fix, clock: clock) }
            statistics.deliveries.fixArrival = nil
            fixTime = nil
        }
        if !fixes.isEmpty { updateStatusLine() }
    }

    /// Applies the configuration's requests and categories in process (the socket's `apply`
    /// semantics) at once, at start, before the loop serves; then lets go of the requests: the
    /// engine holds what it needs, and a SIGHUP reads the file again.
    func applyConfiguredRequests() {
        let requests = configuration.requests
        configuration.requests = []
        let reply = control.apply(requests: requests, categories: configuration.categories, center: center, clock: clock)
        if let fatal = reply.fatal { self.fatal(fatal); return }
        act(on: reply.output)
        // The spatial index of the regions now, not at the first fix (whose delivery would wait
        // for it).
        perform { $0.prepareRegionIndex(); return EngineOutput() }
        configurationApplied(reply.result, error: reply.error)
    }

    /// A SIGHUP's: the same apply in parts, one per loop turn, from the next one on
    /// (AgentDaemon+PartedApply.swift), with the requests' `fingerprints` made off the loop.
    func applyConfiguredRequestsInParts(fingerprints: [UInt64]) {
        let requests = configuration.requests
        configuration.requests = []
        applyInParts(PartedApplyRequest(origin: .configuration, requests: requests, fingerprints: fingerprints,
                                        categories: configuration.categories))
    }

    /// How the configuration's apply ended: its `result`, or the `error` that refused it (the
    /// request named by its line in the file).
    func configurationApplied(_ result: ApplyResult?, error: String?) {
        if let result {
            log.info("configuration applied: \(result.summary())")
        } else {
            log.error("configuration not applied: \(configuration.locate(error ?? "?"))")
        }
    }

    // MARK: Device zone


    /// Reads the device zone; when its name or rules changed, floating calendar triggers and quiet
    /// hours follow the new one (NotificationEngine.setDeviceZone).
    func checkDeviceZone(at now: UInt64) {
        guard configuration.timeZone == nil, let read = environment.readDeviceZone else { deviceZoneWatch.nextCheck = nil; return }
        switch read() {
        case .success(let zone):
            log.cleared("time zone: the device zone reads again", limiter: &deviceZoneWatch.readFailures, at: now)
            let old = center.engine.deviceZone
            guard !zone.hasSameRules(as: old) else { return }
            log.info("time zone: the device zone changed from \(old.identifier) to \(zone.identifier)\(old.identifier == zone.identifier ? " (new rules)" : ""): floating calendar triggers and quiet hours follow it")
            perform { $0.setDeviceZone(zone, clock: clock) }
        case .failure(let error):
            log.repeating(.error, "time zone: cannot read the device zone (\(error)); keeping \(center.engine.deviceZone.identifier)",
                          limiter: &deviceZoneWatch.readFailures, at: now)
        }
    }

    // MARK: Button

    func handleButton() {
        let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
        do {
            for press in try outputs.readButton(at: now) { handlePress(press) }
            log.cleared("button: the line reads again", limiter: &buttonFailures, at: now)
        } catch {
            log.repeating(.error, "button: \(error)", limiter: &buttonFailures, at: now)
        }
    }

    func handlePress(_ press: ButtonEvent) {
        guard let id = outputs.currentAlert else { return }
        let action = press.kind == .longPress ? ActionIdentifier.snooze : ActionIdentifier.default
        do {
            let out = try center.perform(answeredBy: .button) { (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in
                try e.respond(to: id, action: action, clock: clock)
            }
            log.info("button: \(press.kind == .longPress ? "long" : "short") press answers \(id) with \(action)")
            act(on: out)
        } catch {
            if case .store = error { fatal(error) } else {
                // Not a delivery of the engine (a reminder of one removed meanwhile): just stop its signal.
                try? outputs.acknowledge(id, at: SystemClocks.boottimeNow().nanosecondsSinceBoot)
            }
        }
    }

    // MARK: Signals

    /// Handles the pending signals; returns what it did, for the loop's timing.
    func handleSignals() -> String {
        var did: [String] = []
        while let s = try? signals.receive() {
            switch s.number {
            case SIGTERM, SIGINT:
                log.info("signal \(s.number == SIGTERM ? "TERM" : "INT") from pid \(s.senderPID): stopping")
                exitCode = 0
                did.append("stop")
            case SIGHUP:
                reload()
                did.append("SIGHUP reload")
            case SIGCHLD:
                hook.poll(at: SystemClocks.boottimeNow().nanosecondsSinceBoot)
                did.append("hook reaping")
                pollZoneSetBuild()
            case SIGIO:
                letGoOfZoneSetsBeingWritten()
                did.append("zone-set file written by another process")
            default:
                break
            }
        }
        return "signals (" + did.joined(separator: ", ") + ")"
    }

    // MARK: Control socket

    var status: AgentStatus {
        let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
        let trusted = center.engine.wallTrusted
        let trust = configuration.clockTrust
        let source: AgentStatus.ClockSource = trusted && wallIsGNSS ? .gnss
            : AgentStatus.ClockSource(trusted: trusted, trust: trust,
                                      ntpSynchronized: trusted && trust != .always && SystemClocks.isWallClockSynchronized())
        var status = AgentStatus(
            started: statistics.startedWall, startedMonotonic: statistics.startedMonotonic, wallTrusted: trusted, clockSource: source,
            gpsSource: gps.description, gpsConnected: gps.isConnected,
            lastFixAge: gps.lastFixAt.map { Double(now - $0) / 1e9 }, lastFixError: gps.lastFix?.horizontalError,
            lastFixLatitude: gps.lastFix?.coordinate?.latitude, lastFixLongitude: gps.lastFix?.coordinate?.longitude,
            fixesReceived: gps.fixesReceived, deviceZone: center.engine.deviceZone.identifier,
            configPath: configuration.path, statePath: configuration.statePath)
        status.gps = gps.diagnostics(at: now)
        status.offsetToSystemClock = gnssOffsetToSystem
        return status
    }

    /// What one connection's turn served, for the loop's timing (text made only for a slow part).
    struct ServedLines {
        var connection: UInt32
        var first: String?
        var lines = 0
        var description: String {
            "control connection \(connection)" + (lines == 0 ? " (reading/writing)"
                : ": " + (first ?? "(not a request)") + (lines > 1 ? " and \(lines - 1) more line\(lines > 2 ? "s" : "")" : ""))
        }
    }

    /// Answers what connection `id` sent: each line through the control service, the state
    /// synced before any answer is written. Returns what it served, for the loop's timing.
    func handleConnection(_ id: UInt32, now: UInt64) -> ServedLines {
        var served = ServedLines(connection: id)
        clients.handle(id, now: now, answer: { line in
            let reply = control.handle(line: line, center: center, clock: clock, deferringApply: true, status: { status })
            if served.lines == 0 { served.first = reply.method }
            served.lines += 1
            if let f = reply.fatal { fatal(f) }
            act(on: reply.output)
            if let d = reply.deferredApply {
                // Applied in parts, from the next turn on; the connection owes the answer till the end.
                applyInParts(PartedApplyRequest(origin: .socket(connection: id, id: d.id), requests: d.requests, fingerprints: nil,
                                                categories: d.categories))
                return .later
            }
            return .now(reply.line)
        }, durability: { replyDurability() })
        return served
    }

    // MARK: Status and shutdown

    func updateStatusLine() {
        let e = center.engine
        systemd.update(pending: e.pendingCount, unacknowledged: e.badgeCount, gpsConnected: gps.isConnected,
                       fixes: gps.fixesReceived, wallTrusted: e.wallTrusted)
    }

    func shutDown() {
        systemd.stopping()
        abandonReload()
        abandonFleetReading()
        abandonRegionIndexBuild()
        outputs.shutDown(at: SystemClocks.boottimeNow().nanosecondsSinceBoot)
        gps.close()
        tearDownFleet()
        finalSync()
        clients.closeAll()
        for line in statistics.summaryLines() { log.info(line) }
        log.info("stopped; outputs off")
    }
}
