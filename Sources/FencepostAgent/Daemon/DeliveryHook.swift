// The delivery hook: a command (argv, no shell) started for each delivery with the notification
// in its environment, killed when it outlives its time limit.
import FencepostLinux
import LocalNotifications
import FencepostJSON

/// Runs the configured hook and keeps track of the children until they end — also across a
/// reload that changes or removes the hook (children started before are still reaped and held to
/// their time limit).
///
/// Bounded: at most ``maximumRunning`` children at once; further deliveries wait in a queue of at
/// most ``maximumWaiting`` (started as children end); beyond that a delivery's hook is not run,
/// and the log says how many were skipped (the delivery itself is signalled and stored as always).
final class DeliveryHook {
    /// Children running at once.
    let maximumRunning = 4
    /// Deliveries waiting for a free child.
    let maximumWaiting = 64
    /// The hook to start for each delivery; nil: none.
    private(set) var configuration: HookConfiguration?
    let log: DaemonLog
    private var running: [(child: ChildProcess, deadline: UInt64, limit: UInt64, name: String, delivery: String, killed: Bool)] = []
    private var waiting: [(configuration: HookConfiguration, delivery: DeliveredNotification)] = []
    private var waitingHead = 0
    private var skipped = 0
    private var skippedSeen = 0
    private var skipLines = RepeatLimiter()

    init(_ configuration: HookConfiguration?, log: DaemonLog) {
        self.configuration = configuration
        self.log = log
    }

    /// The hook of a reloaded configuration, for the deliveries from now on.
    func configure(_ configuration: HookConfiguration?) { self.configuration = configuration }

    /// The environment of the hook for delivery `d`: FENCEPOST_* variables (and PATH).
    static func environment(_ d: DeliveredNotification) -> [String] {
        var env = ["PATH=/usr/local/bin:/usr/bin:/bin",
                   "FENCEPOST_DELIVERY=\(d.identifier)", "FENCEPOST_REQUEST=\(d.requestIdentifier)",
                   "FENCEPOST_TITLE=\(d.content.title)", "FENCEPOST_BODY=\(d.content.body)",
                   "FENCEPOST_OUTCOME=\(d.outcome.name)",
                   "FENCEPOST_INTERRUPTION_LEVEL=\(d.content.interruptionLevel.rawValue)",
                   "FENCEPOST_JSON=\(d.json.serialized())"]
        if let s = d.content.sound { env.append("FENCEPOST_SOUND=\(s)") }
        if let c = d.content.categoryIdentifier { env.append("FENCEPOST_CATEGORY=\(c)") }
        if let t = d.content.threadIdentifier { env.append("FENCEPOST_THREAD=\(t)") }
        if let b = d.content.badge { env.append("FENCEPOST_BADGE=\(b)") }
        if let s = d.scheduled { env.append("FENCEPOST_SCHEDULED=\(s)") }
        if let t = d.date { env.append("FENCEPOST_DATE=\(t)") }
        if let e = d.regionEvent { env.append("FENCEPOST_REGION_EVENT=\(e)") }
        for (k, v) in d.content.userInfo {
            let name = String(k.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
            env.append("FENCEPOST_USERINFO_\(name)=\(v)")
        }
        // A NUL cannot be passed in the environment: such values are cut there.
        return env.map { String($0.prefix { $0 != "\0" }) }
    }

    /// Starts the hook for `d`, or queues it while ``maximumRunning`` children run.
    func run(_ d: DeliveredNotification, at now: UInt64) {
        guard let configuration else { return }
        guard running.count >= maximumRunning || waitingHead < waiting.count else { return start(configuration, d, at: now) }
        if waiting.count - waitingHead >= maximumWaiting {
            skipped += 1
            return
        }
        waiting.append((configuration, d))
    }

    private func start(_ configuration: HookConfiguration, _ d: DeliveredNotification, at now: UInt64) {
        let command = configuration.command
        let limit = UInt64(max(0.001, configuration.timeoutSeconds) * 1e9)
        do {
            let child = try ChildProcess.spawn(command, environment: Self.environment(d))
            running.append((child, now + limit, limit, command[0], d.identifier, false))
        } catch {
            log.error("hook \(command[0]) for \(d.identifier) could not start: \(error)")
        }
    }

    /// Reaps children that ended and kills those past their time limit.
    func poll(at now: UInt64) {
        running.removeAll { entry in
            if let end = try? entry.child.reap() {
                if end != .exited(0) && !entry.killed {
                    log.warning("hook \(entry.name) for \(entry.delivery) \(end)")
                }
                return true
            }
            return false
        }
        for i in running.indices where !running[i].killed && running[i].deadline <= now {
            log.warning("hook \(running[i].name) for \(running[i].delivery) ran longer than \(Double(running[i].limit) / 1e9) s: killed")
            try? running[i].child.send(9)
            running[i].killed = true
        }
        while running.count < maximumRunning && waitingHead < waiting.count {
            let next = waiting[waitingHead]
            waitingHead += 1
            start(next.configuration, next.delivery, at: now)
        }
        // The consumed head is dropped once it is half the array (amortised O(1)): under steady
        // load the queue never empties, and the array grew by every delivery ever queued.
        if waitingHead > 0 && waitingHead * 2 >= waiting.count {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
        // One line for the deliveries skipped: at once, then at most once a minute with the
        // count since the last line (it was written on every loop turn of an overload).
        let counted = skipped > skippedSeen
        skippedSeen = skipped
        if skipped > 0 && skipLines.summary(counted: counted, at: now) {
            log.warning("hook: \(skipped) deliveries not given to the hook: \(maximumRunning) hooks were running and \(maximumWaiting) waiting")
            skipped = 0
            skippedSeen = 0
        }
    }

    /// Entries the waiting array holds, consumed ones included (tests: its storage is bounded).
    var waitingStorage: Int { waiting.count }

    /// Children running now and deliveries waiting for one.
    var counts: (running: Int, waiting: Int) { (running.count, waiting.count - waitingHead) }

    /// When ``poll(at:)`` must run to kill a child past its limit (ended children are reaped on
    /// SIGCHLD, which the daemon receives through its signalfd).
    var nextDeadline: UInt64? {
        var next: UInt64?
        for r in running where !r.killed { next = min(next ?? r.deadline, r.deadline) }
        if let due = skipLines.heldLineDue { next = min(next ?? due, due) }
        return next
    }
}
