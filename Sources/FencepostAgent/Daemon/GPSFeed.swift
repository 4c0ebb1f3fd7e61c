// The position source of the daemon: a serial receiver (NMEA through our own stream), gpsd
// (libgps), or a recorded drive replayed at a speed. Each is survived: a serial port that goes
// away is reopened every 2 s; a gpsd that goes away is reconnected with backoff (1 s … 30 s).
//
// Nothing here blocks the loop. The serial port opens O_NONBLOCK. gpsd's `gps_open` resolves the
// host and connects with blocking calls (an unreachable host: minutes of SYN retries), so it
// runs on a ``ThreadJob``: while it is pending the feed's descriptor is the job's eventfd (same
// `.gps` token), and when that is readable the client, or the failure and its backoff, is taken.
// An outage (the port missing, gpsd unreachable) is one repeating condition in the log: its start,
// then at most a line a minute with a count, then its end when the source is back (RepeatLimiter).
import CivilTime
import FencepostLinux
import NMEA
import Position
import Geofencing

/// Where fixes come from, and the state of that source.
final class GPSFeed {
    enum Source {
        case none
        case serial(path: String, baud: Int)
        case gpsd(host: String, port: String)
        /// Fixes with times, replayed at `speed`× from the moment the daemon starts.
        case replay(name: String, fixes: [Fix], speed: Double, exitAtEnd: Bool)
    }

    let source: Source
    /// Metres: a fix's error estimate is HDOP × UERE (serial and gpsd alike).
    let uere: Double
    let log: DaemonLog
    /// Called when the descriptor to watch changes (nil: none).
    var onDescriptorChange: (FileDescriptor?, FileDescriptor?) -> Void = { _, _ in }

    private var serial: SerialPort?
    private var stream: NMEAStreamBox
    private var gpsd: GPSDClient?
    /// gpsd's `gps_open` and watch on their thread, while pending.
    private var connecting: ThreadJob<GPSDClient, GPSDError>?
    private var backoff = ReconnectBackoff()
    private var retryAt: UInt64?
    private var replayIndex = 0
    private var replayStart: UInt64 = 0
    private var hangup = false
    /// One read buffer for the serial port, made once (not 4 KiB allocated and zeroed per event).
    private var readBuffer = [UInt8](repeating: 0, count: 4096)
    /// The source missing or unreachable: one log line when it starts, one a minute, one at the end.
    private var outage = RepeatLimiter()
    private(set) var fixesReceived = 0
    private(set) var lastFix: Fix?
    private(set) var lastFixAt: UInt64?
    /// Counters and the last fix's fields for `status` (``diagnostics(at:)``).
    private var counters = GPSDiagnostics()

    init(_ source: Source, uere: Double, log: DaemonLog) {
        self.source = source
        self.uere = uere
        self.log = log
        stream = NMEAStreamBox(uere: uere)
    }

    var descriptor: FileDescriptor? { serial?.descriptor ?? gpsd?.fileDescriptor ?? connecting?.descriptor }

    var isConnected: Bool {
        switch source {
        case .none: false
        case .serial: serial != nil
        case .gpsd: gpsd?.isConnected ?? false
        case .replay(_, let fixes, _, _): replayIndex < fixes.count
        }
    }

    var description: String {
        switch source {
        case .none: "none"
        case .serial(let path, let baud): "serial \(path) at \(baud) baud"
        case .gpsd(let host, let port): "gpsd://\(host):\(port)"
        case .replay(let name, let fixes, let speed, _): "replay of \(name) (\(fixes.count) fixes) at \(speed)×"
        }
    }

    /// Whether a replay has played its last fix and the daemon should end.
    var replayFinished: Bool {
        if case .replay(_, let fixes, _, let exitAtEnd) = source { return exitAtEnd && replayIndex >= fixes.count }
        return false
    }

    func start(at now: UInt64) {
        replayStart = now
        switch source {
        case .serial, .gpsd: connect(at: now)
        default: break
        }
    }

    private func connect(at now: UInt64) {
        let old = descriptor
        switch source {
        case .serial(let path, let baud):
            do {
                serial = try SerialPort(path: path, baudRate: baud)
                stream = NMEAStreamBox(uere: uere)
                counters.bytes = 0
                hangup = false
                retryAt = nil
                if !log.cleared("GPS: reading \(path) at \(baud) baud", limiter: &outage, at: now) {
                    log.info("GPS: reading \(path) at \(baud) baud")
                }
            } catch {
                serial = nil
                retryAt = now + 2_000_000_000
                log.repeating(.warning, "GPS: \(error); trying again every 2 s", limiter: &outage, at: now)
            }
        case .gpsd(let host, let port):
            guard connecting == nil else { return }
            retryAt = nil
            let uere = uere
            do {
                connecting = try ThreadJob { () throws(GPSDError) -> GPSDClient in try GPSDClient(host: host, port: port, uere: uere) }
                log.debug("GPS: connecting to gpsd at \(host):\(port)")
            } catch {
                gpsdFailed(at: now, "cannot start the thread that connects to gpsd (\(error))")
            }
        default: break
        }
        if old != descriptor { onDescriptorChange(old, descriptor) }
    }

    /// The connect thread has ended: the client, or the failure and the next try after the backoff.
    private func connected(_ job: ThreadJob<GPSDClient, GPSDError>, at now: UInt64) {
        guard case .gpsd(let host, let port) = source else { return }
        let old = descriptor   // the job's eventfd, open while `job` lives
        connecting = nil
        switch job.finish() {
        case .success(let client):
            gpsd = client
            backoff.reset()
            if !log.cleared("GPS: connected to gpsd at \(host):\(port)", limiter: &outage, at: now) {
                log.info("GPS: connected to gpsd at \(host):\(port)")
            }
        case .failure(let error):
            gpsdFailed(at: now, "\(error)")
        }
        onDescriptorChange(old, descriptor)
    }

    private func gpsdFailed(at now: UInt64, _ why: String) {
        let wait = backoff.nextDelay()
        retryAt = now + wait
        log.repeating(.warning, "GPS: \(why); trying again in \(wait / 1_000_000_000) s", limiter: &outage, at: now)
    }

    private func disconnected(at now: UInt64, _ why: String) {
        let old = descriptor
        serial = nil
        gpsd = nil
        switch source {
        case .serial: retryAt = now + 2_000_000_000
        case .gpsd:
            retryAt = now + backoff.nextDelay()
        default: break
        }
        log.repeating(.warning, "GPS: \(why); reconnecting", limiter: &outage, at: now)
        onDescriptorChange(old, nil)
    }

    /// The next time the feed needs ``handleDeadline(at:)``.
    var nextDeadline: UInt64? {
        if let retryAt { return retryAt }
        if case .replay(_, let fixes, let speed, _) = source, replayIndex < fixes.count,
           let t0 = fixes.first?.secondsSinceEpoch, let t = fixes[replayIndex].secondsSinceEpoch {
            return replayDue(t - t0, speed)
        }
        return nil
    }

    /// When a fix `offset` seconds into the replay is due (saturating: a log spanning centuries at
    /// a low speed is due never, not a trap).
    private func replayDue(_ offset: Double, _ speed: Double) -> UInt64 {
        SaturatingTime.add(replayStart, SaturatingTime.nanosecondsRoundedUp(offset / speed))
    }

    /// Reconnects when due; returns replayed fixes that are due.
    func handleDeadline(at now: UInt64) -> [Fix] {
        if let r = retryAt, r <= now { connect(at: now) }
        guard case .replay(_, let fixes, let speed, _) = source, let t0 = fixes.first?.secondsSinceEpoch else { return [] }
        var due: [Fix] = []
        while replayIndex < fixes.count, let t = fixes[replayIndex].secondsSinceEpoch,
              replayDue(t - t0, speed) <= now {
            due.append(fixes[replayIndex])
            replayIndex += 1
        }
        note(due, at: now)
        return due
    }

    /// Reads what the source has; returns the fixes completed.
    func handleReadable(at now: UInt64, hangup reported: Bool) -> [Fix] {
        var fixes: [Fix] = []
        if let job = connecting {
            connected(job, at: now)
        } else if let port = serial {
            reading: while true {
                let r: SerialRead
                // A Result inside: withUnsafeMutableBytes rethrows untyped, which Embedded Swift refuses.
                switch readBuffer.withUnsafeMutableBytes({ b in
                    Result { () throws(SerialPortError) in try port.read(into: b, hangupReported: reported || hangup) }
                }) {
                case .success(let read): r = read
                case .failure(let error):
                    disconnected(at: now, "\(error)")
                    break reading
                }
                switch r {
                case .bytes(let n):
                    readBuffer.withUnsafeBytes { b in stream.feed(UnsafeRawBufferPointer(rebasing: b[..<n])) { fixes.append($0) } }
                    counters.bytes = (counters.bytes ?? 0) &+ Int64(n)
                case .wouldBlock:
                    break reading
                case .disconnected:
                    disconnected(at: now, "\(port.path) went away")
                    break reading
                }
            }
        } else if let client = gpsd {
            let read = client.readAvailable()
            fixes = read.fixes
            counters.sentences += read.messages
            counters.rejected.unreadable += read.unreadableMessages
            if let n = read.satellitesVisible { counters.satellitesSeen = n }
            if let n = read.satellitesUsed { counters.satellitesUsed = n }
            if let d = read.disconnection { disconnected(at: now, "\(d)") }
        }
        correctWeekRollover(&fixes)
        note(fixes, at: now)
        return fixes
    }

    /// Whether a week-rollover date was seen (and said) since start.
    private(set) var rolloverSeen = false

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
        // The serial stream's counters are read when asked, not per read (bytes is set while a
        // serial port is the source: 0 at each connect, with a fresh stream).
        if d.bytes != nil { d.count(stream.stream.counters, satellitesInView: stream.stream.decoder.satellitesInView) }
        d.fixAge = lastFixAt.map { Double(now >= $0 ? now - $0 : 0) / 1e9 }
        return d
    }

    /// Closes the source (shutdown).
    func close() {
        serial = nil
        gpsd = nil
        // A connect still blocked in its thread is let go: it frees its client when it returns.
        connecting?.detach()
        connecting = nil
    }
}

/// `NMEAStream` is non-copyable; a class holds it so the feed can replace it on reconnect.
final class NMEAStreamBox {
    var stream: NMEAStream
    init(uere: Double) { stream = NMEAStream(assembler: .init(uere: uere)) }
    func feed(_ bytes: UnsafeRawBufferPointer, _ onFix: (Fix) -> Void) { stream.feed(bytes, onFix) }
}
