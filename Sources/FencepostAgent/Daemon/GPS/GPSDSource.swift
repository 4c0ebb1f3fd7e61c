// gpsd through libgps, reconnected with backoff (1 s … 30 s) when it goes away.
//
// gpsd's `gps_open` resolves the host and connects with blocking calls (an unreachable host:
// minutes of SYN retries), so it runs on a ``ThreadJob``: while it is pending the source's
// descriptor is the job's eventfd (same `.gps` token), and when that is readable the client, or
// the failure and its backoff, is taken.
import FencepostLinux
import Position

/// `[gps] source = "gpsd"`.
final class GPSDSource: GPSSource {
    let host: String
    let port: String
    /// Metres: a fix's error estimate is HDOP × UERE.
    let uere: Double
    private let events: GPSSourceEvents
    private var client: GPSDClient?
    /// gpsd's `gps_open` and watch on their thread, while pending.
    private var connecting: ThreadJob<GPSDClient, GPSDError>?
    private var backoff = ReconnectBackoff()
    private var retryAt: UInt64?

    init(host: String, port: String, uere: Double, events: GPSSourceEvents) {
        self.host = host
        self.port = port
        self.uere = uere
        self.events = events
    }

    var descriptor: FileDescriptor? { client?.fileDescriptor ?? connecting?.descriptor }
    var isConnected: Bool { client?.isConnected ?? false }
    var description: String { "gpsd://\(host):\(port)" }
    var nextDeadline: UInt64? { retryAt }

    func start(at now: UInt64) { connect(at: now) }

    private func connect(at now: UInt64) {
        guard connecting == nil else { return }
        let old = descriptor
        retryAt = nil
        let (host, port, uere) = (host, port, uere)
        do {
            connecting = try ThreadJob { () throws(GPSDError) -> GPSDClient in try GPSDClient(host: host, port: port, uere: uere) }
            events.log.debug("GPS: connecting to gpsd at \(host):\(port)")
        } catch {
            failed(at: now, "cannot start the thread that connects to gpsd (\(error))")
        }
        if old != descriptor { events.onDescriptorChange(old, descriptor) }
    }

    /// The connect thread has ended: the client, or the failure and the next try after the backoff.
    private func connected(_ job: ThreadJob<GPSDClient, GPSDError>, at now: UInt64) {
        let old = descriptor   // the job's eventfd, open while `job` lives
        connecting = nil
        switch job.finish() {
        case .success(let c):
            client = c
            backoff.reset()
            events.back("GPS: connected to gpsd at \(host):\(port)", at: now)
        case .failure(let error):
            failed(at: now, "\(error)")
        }
        events.onDescriptorChange(old, descriptor)
    }

    private func failed(at now: UInt64, _ why: String) {
        let wait = backoff.nextDelay()
        retryAt = now + wait
        events.outage(.warning, "GPS: \(why); trying again in \(wait / 1_000_000_000) s", at: now)
    }

    private func disconnected(at now: UInt64, _ why: String) {
        let old = descriptor
        client = nil
        retryAt = now + backoff.nextDelay()
        events.outage(.warning, "GPS: \(why); reconnecting", at: now)
        events.onDescriptorChange(old, nil)
    }

    func handleDeadline(at now: UInt64) -> [Fix] {
        if let r = retryAt, r <= now { connect(at: now) }
        return []
    }

    func handleReadable(at now: UInt64, hangup: Bool, counters: inout GPSDiagnostics) -> [Fix] {
        if let job = connecting {
            connected(job, at: now)
            return []
        }
        guard let client else { return [] }
        let read = client.readAvailable()
        counters.sentences += read.messages
        counters.rejected.unreadable += read.unreadableMessages
        if let n = read.satellitesVisible { counters.satellitesSeen = n }
        if let n = read.satellitesUsed { counters.satellitesUsed = n }
        if let d = read.disconnection { disconnected(at: now, "\(d)") }
        return read.fixes
    }

    func close() {
        client = nil
        // A connect still blocked in its thread is let go: it frees its client when it returns.
        connecting?.detach()
        connecting = nil
    }
}
