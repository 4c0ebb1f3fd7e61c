// A position source of the daemon: one type per kind (serial, gpsd, replay), each owning its
// descriptor, its reconnect state and its counters, behind a class-bound protocol (Embedded Swift
// allows existentials of those). ``GPSFeed`` holds one and keeps what is common to all: the last
// fix, the fix count, the status counters and the week-rollover correction. A new kind of source
// is one new file and one case in ``GPSFeed/Source``.
//
// Nothing here blocks the loop. An outage (the port missing, gpsd unreachable) is one repeating
// condition in the log: its start, then at most a line a minute with a count, then its end when
// the source is back (RepeatLimiter).
import FencepostLinux
import Position

/// One source of fixes, driven by the daemon's loop through ``GPSFeed``.
protocol GPSSource: AnyObject {
    /// The descriptor the loop watches for this source (nil: none).
    var descriptor: FileDescriptor? { get }
    var isConnected: Bool { get }
    /// `serial /dev/serial0 at 9600 baud`, for the log and `status`.
    var description: String { get }
    /// Whether the source has played its last fix and the daemon should end (a replay).
    var finished: Bool { get }
    /// Whether its fixes come from a receiver now (their dates get the week-rollover correction).
    var isLive: Bool { get }
    /// The next time the source needs ``handleDeadline(at:)``.
    var nextDeadline: UInt64? { get }
    /// Opens or connects at the daemon's start.
    func start(at now: UInt64)
    /// Reconnects when due; returns the fixes that are due (a replay).
    func handleDeadline(at now: UInt64) -> [Fix]
    /// Reads what the descriptor has; returns the fixes completed and counts what it read.
    func handleReadable(at now: UInt64, hangup: Bool, counters: inout GPSDiagnostics) -> [Fix]
    /// Adds the counters the source keeps itself (a serial stream's) to `diagnostics`.
    func addCounters(to diagnostics: inout GPSDiagnostics)
    /// Closes the source (shutdown).
    func close()
}

extension GPSSource {
    var finished: Bool { false }
    var isLive: Bool { true }
    var nextDeadline: UInt64? { nil }
    func handleDeadline(at now: UInt64) -> [Fix] { [] }
    func addCounters(to diagnostics: inout GPSDiagnostics) {}
}

/// What a live source shares with the feed: the log, the outage's repeat limiter, and the
/// callback that tells the loop its descriptor changed.
final class GPSSourceEvents {
    let log: DaemonLog
    /// The source missing or unreachable: one log line when it starts, one a minute, one at the end.
    var outage = RepeatLimiter()
    /// Called when the descriptor to watch changes (nil: none).
    var onDescriptorChange: (FileDescriptor?, FileDescriptor?) -> Void = { _, _ in }

    init(log: DaemonLog) { self.log = log }

    /// Logs an outage's line (``DaemonLog/repeating(_:_:limiter:at:)``).
    func outage(_ level: LogLevel, _ text: String, at now: UInt64) {
        log.repeating(level, text, limiter: &outage, at: now)
    }

    /// Logs `text` as the end of an outage, or as news when there was none.
    func back(_ text: String, at now: UInt64) {
        if !log.cleared(text, limiter: &outage, at: now) { log.info(text) }
    }
}
