// Start-up as systemd sees it (`Type=notify`). A first start may build a zone set of a million
// zones (about 10 s on a 2-core machine, longer on a board) and a big state file takes a while to
// load; systemd kills a start that passes `TimeoutStartSec=` (90 s by default). So, until
// `READY=1`, each step and, at most once a second, the progress within it is sent as
//
//     STATUS=building zone set: 420,000 zones read (42 % of 96.1 MB)
//     EXTEND_TIMEOUT_USEC=30000000
//
// in one datagram (a step's first progress goes at once): `systemctl status` shows what the agent is doing, and every message promises
// the next within 30 s (systemd then moves the start's time-out to 30 s from now, never
// earlier than the configured one). `READY=1` is sent only when the agent serves: state loaded,
// requests applied, zone set mapped, GPS started.
import FencepostLinux

/// Start-up steps and progress for systemd; does nothing without `$NOTIFY_SOCKET`.
final class StartupProgress {
    /// The time each message asks for (EXTEND_TIMEOUT_USEC): long enough for the longest step
    /// without a progress callback (sorting and writing a set of a million zones).
    static let extensionMicroseconds: UInt64 = 30_000_000
    /// Progress within a step is sent at most this often (nanoseconds).
    static let progressInterval: UInt64 = 1_000_000_000

    private let notifier: SystemdNotifier?
    private let now: () -> UInt64
    private var lastSent: UInt64?
    /// Whether the current step has shown progress yet (its first progress is sent at once).
    private var stepHasProgress = false
    /// Messages sent so far (steps and progress).
    private(set) var messagesSent = 0

    /// - Parameters:
    ///   - notifier: where messages go; nil or disabled: nothing is sent.
    ///   - now: monotonic nanoseconds (the boot-time clock; a test's own clock).
    init(notifier: SystemdNotifier?, now: @escaping () -> UInt64 = { SystemClocks.boottimeNow().nanosecondsSinceBoot }) {
        self.notifier = notifier
        self.now = now
    }

    /// A progress that begins with `step` (sent at once).
    convenience init(notifier: SystemdNotifier?, step text: String) {
        self.init(notifier: notifier)
        step(text)
    }

    private var isEnabled: Bool { notifier?.isEnabled ?? false }

    /// A new step ("loading state file …"): sent at once.
    func step(_ text: String) {
        guard isEnabled else { return }
        send(text)
        stepHasProgress = false
    }

    /// Progress within a step: the step's first is sent at once, later ones when a second has
    /// passed since the last message. `text` is made only when sent.
    func progress(_ text: () -> String) {
        guard isEnabled else { return }
        if stepHasProgress, let last = lastSent, now() &- last < Self.progressInterval { return }
        send(text())
        stepHasProgress = true
    }

    /// Start-up is over: `READY=1` (the running status line follows).
    func ready() {
        guard let notifier, notifier.isEnabled else { return }
        try? notifier.ready()
        messagesSent += 1
    }

    private func send(_ status: String) {
        try? notifier?.send("STATUS=" + Self.oneLine(status) + "\nEXTEND_TIMEOUT_USEC=\(Self.extensionMicroseconds)")
        lastSent = now()
        messagesSent += 1
    }

    static func oneLine(_ text: String) -> String { String(text.map { $0.isNewline ? " " : $0 }) }

    /// "420,000": thousands separated, as people read counts.
    static func count(_ n: Int) -> String {
        let digits = Array(String(n.magnitude))
        var out = n < 0 ? "-" : ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(d)
        }
        return out
    }

    /// "building zone set: 420,000 zones read (42 % of 96.1 MB)".
    static func zoneSetText(features: Int, offset: Int, total: Int) -> String {
        let percent = total > 0 ? offset * 100 / total : 100
        let tenths = (total + 50_000) / 100_000   // of a megabyte (10^6 bytes), rounded
        let size = total < 1_000_000 ? "\((total + 500) / 1000) kB" : "\(tenths / 10).\(tenths % 10) MB"
        return "building zone set: \(count(features)) zones read (\(percent) % of \(size))"
    }
}
