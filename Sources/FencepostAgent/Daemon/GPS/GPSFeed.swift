// The position feed of the daemon: one ``GPSSource`` (serial, gpsd, a replay, or none) and what
// is common to every source: the last fix and when it came, the fix count, the counters `status`
// shows, and the week-rollover correction of live receivers' dates. Each source survives its
// outages itself (GPSSource.swift).
import CivilTime
import FencepostLinux
import Position

/// Where fixes come from, and what came.
final class GPSFeed {
    /// The source the configuration names.
    enum Source {
        case none
        case serial(path: String, baud: Int)
        case gpsd(host: String, port: String)
        /// Fixes with times, replayed at `speed`× from the moment the daemon starts.
        case replay(name: String, fixes: [Fix], speed: Double, exitAtEnd: Bool)
    }

    let log: DaemonLog
    private let events: GPSSourceEvents
    /// nil: no source (`[gps] source = "none"`).
    private let source: (any GPSSource)?
    private(set) var fixesReceived = 0
    private(set) var lastFix: Fix?
    private(set) var lastFixAt: UInt64?
    /// Counters and the last fix's fields for `status` (``diagnostics(at:)``).
    private var counters = GPSDiagnostics()
    /// Whether a week-rollover date was seen (and said) since start.
    private(set) var rolloverSeen = false

    /// - Parameter uere: metres; a fix's error estimate is HDOP × UERE (serial and gpsd alike).
    init(_ source: Source, uere: Double, log: DaemonLog) {
        self.log = log
        let events = GPSSourceEvents(log: log)
        self.events = events
        switch source {
        case .none: self.source = nil
        case .serial(let path, let baud): self.source = SerialGPSSource(path: path, baud: baud, uere: uere, events: events)
        case .gpsd(let host, let port): self.source = GPSDSource(host: host, port: port, uere: uere, events: events)
        case .replay(let name, let fixes, let speed, let exitAtEnd):
            self.source = ReplayGPSSource(name: name, fixes: fixes, speed: speed, exitAtEnd: exitAtEnd)
        }
    }

    /// Called when the descriptor to watch changes (nil: none).
    var onDescriptorChange: (FileDescriptor?, FileDescriptor?) -> Void {
        get { events.onDescriptorChange }
        set { events.onDescriptorChange = newValue }
    }

    var descriptor: FileDescriptor? { source?.descriptor }
    var isConnected: Bool { source?.isConnected ?? false }
    var description: String { source?.description ?? "none" }
    /// Whether a replay has played its last fix and the daemon should end.
    var replayFinished: Bool { source?.finished ?? false }
    /// The next time the feed needs ``handleDeadline(at:)``.
    var nextDeadline: UInt64? { source?.nextDeadline }

    func start(at now: UInt64) { source?.start(at: now) }

    /// Reconnects when due; returns replayed fixes that are due.
    func handleDeadline(at now: UInt64) -> [Fix] {
        guard let source else { return [] }
        let due = source.handleDeadline(at: now)
        note(due, at: now)
        return due
    }

    /// Reads what the source has; returns the fixes completed.
    func handleReadable(at now: UInt64, hangup reported: Bool) -> [Fix] {
        guard let source else { return [] }
        var fixes = source.handleReadable(at: now, hangup: reported, counters: &counters)
        if source.isLive { correctWeekRollover(&fixes) }
        note(fixes, at: now)
        return fixes
    }

    /// Live receivers only (a replay is a recording: its dates are history): dates 1024·k weeks
    /// before the build's date are moved forward (ReceiverDates), the first one logged.
    private func correctWeekRollover(_ fixes: inout [Fix]) {
        for i in fixes.indices {
            guard let t = fixes[i].time else { continue }
            let (corrected, periods) = ReceiverDates.correctingWeekRollover(t)
            guard periods > 0 else { continue }
            fixes[i].time = corrected
            if !rolloverSeen {
                rolloverSeen = true
                log.warning("GPS: the receiver reports \(t), \(periods * 1024) weeks in the past (the GPS week rollover bug of its firmware): read as \(corrected) (dates before this build's are moved forward by 1024 weeks, as gpsd does)")
            }
        }
    }

    private func note(_ fixes: [Fix], at now: UInt64) {
        guard let last = fixes.last else { return }
        fixesReceived += fixes.count
        lastFix = last
        lastFixAt = now
        counters.take(last)
        for f in fixes where f.coordinate != nil { counters.positionFixes += 1 }
        log.debug("GPS: \(fixes.count) \(fixes.count == 1 ? "fix" : "fixes"), last at \(last.coordinate.map { "\($0.latitude), \($0.longitude)" } ?? "no position") ±\(last.horizontalError.map { "\($0)" } ?? "?") m")
    }

    /// The fix's fields and the source's counters, with the age of the last fix at `now`.
    func diagnostics(at now: UInt64) -> GPSDiagnostics {
        var d = counters
        source?.addCounters(to: &d)
        d.fixAge = lastFixAt.map { Double(now >= $0 ? now - $0 : 0) / 1e9 }
        return d
    }

    /// Closes the source (shutdown).
    func close() { source?.close() }
}
