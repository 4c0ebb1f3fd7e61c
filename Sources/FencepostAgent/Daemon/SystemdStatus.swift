// The daemon's line to systemd (Type=notify): the watchdog pings, the one-line status
// `systemctl status` shows, and "stopping". Readiness and start-up progress are StartupProgress's.
// Without NOTIFY_SOCKET (a terminal, the tests) every call does nothing.
import FencepostLinux

/// The watchdog and the status line.
struct SystemdStatus {
    /// nil when systemd did not start the daemon with a notify socket.
    let notifier: SystemdNotifier?
    /// When the next watchdog ping is due (nil: no watchdog).
    private(set) var nextWatchdog: UInt64?

    init() { notifier = try? SystemdNotifier() }

    /// Pings from `now` on when the unit has a watchdog (WatchdogSec=); says how often.
    mutating func start(at now: UInt64, log: DaemonLog) {
        guard let interval = notifier?.watchdogInterval else { return }
        nextWatchdog = now
        // Whole milliseconds: Embedded Swift cannot interpolate a Duration.
        let ms = interval.components.seconds &* 1000 &+ interval.components.attoseconds / 1_000_000_000_000_000
        log.info("systemd watchdog every \(ms) ms")
    }

    /// Pings the watchdog when due.
    mutating func advance(to now: UInt64) {
        guard let w = nextWatchdog, w <= now, let interval = notifier?.watchdogInterval else { return }
        try? notifier?.watchdog()
        nextWatchdog = now + UInt64(interval.components.seconds) * 1_000_000_000 + UInt64(interval.components.attoseconds / 1_000_000_000)
    }

    /// The status line: `3 pending, 1 unacknowledged; GPS ok, 120 fixes; clock trusted`.
    func update(pending: Int, unacknowledged: Int, gpsConnected: Bool, fixes: Int, wallTrusted: Bool) {
        guard let n = notifier, n.isEnabled else { return }
        try? n.status("\(pending) pending, \(unacknowledged) unacknowledged; GPS \(gpsConnected ? "ok" : "not connected"), \(fixes) fixes; clock \(wallTrusted ? "trusted" : "untrusted")")
    }

    /// Tells systemd the daemon is stopping.
    func stopping() { try? notifier?.stopping() }
}
