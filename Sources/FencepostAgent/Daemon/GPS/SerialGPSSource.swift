// A receiver on a serial port, read through our own NMEA stream. The port opens O_NONBLOCK; a
// port that goes away (unplugged, or never there) is reopened every 2 s.
import FencepostLinux
import NMEA
import Position

/// `[gps] source = "serial"`.
final class SerialGPSSource: GPSSource {
    let path: String
    let baud: Int
    /// Metres: a fix's error estimate is HDOP × UERE.
    let uere: Double
    private let events: GPSSourceEvents
    private var port: SerialPort?
    private var stream: NMEAStreamBox
    private var retryAt: UInt64?
    private var hangup = false
    /// One read buffer for the port, made once (not 4 KiB allocated and zeroed per event).
    private var readBuffer = [UInt8](repeating: 0, count: 4096)
    /// Bytes read since the port was (re)opened; 0 with a fresh stream at each open, nil until
    /// the first (then `status` has no serial counters).
    private var bytes: Int64?

    init(path: String, baud: Int, uere: Double, events: GPSSourceEvents) {
        self.path = path
        self.baud = baud
        self.uere = uere
        self.events = events
        stream = NMEAStreamBox(uere: uere)
    }

    var descriptor: FileDescriptor? { port?.descriptor }
    var isConnected: Bool { port != nil }
    var description: String { "serial \(path) at \(baud) baud" }
    var nextDeadline: UInt64? { retryAt }

    func start(at now: UInt64) { open(at: now) }

    private func open(at now: UInt64) {
        let old = descriptor
        do {
            port = try SerialPort(path: path, baudRate: baud)
            stream = NMEAStreamBox(uere: uere)
            bytes = 0
            hangup = false
            retryAt = nil
            events.back("GPS: reading \(path) at \(baud) baud", at: now)
        } catch {
            port = nil
            retryAt = now + 2_000_000_000
            events.outage(.warning, "GPS: \(error); trying again every 2 s", at: now)
        }
        if old != descriptor { events.onDescriptorChange(old, descriptor) }
    }

    func handleDeadline(at now: UInt64) -> [Fix] {
        if let r = retryAt, r <= now { open(at: now) }
        return []
    }

    func handleReadable(at now: UInt64, hangup reported: Bool, counters: inout GPSDiagnostics) -> [Fix] {
        guard let port else { return [] }
        var fixes: [Fix] = []
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
                bytes = (bytes ?? 0) &+ Int64(n)
            case .wouldBlock:
                break reading
            case .disconnected:
                disconnected(at: now, "\(port.path) went away")
                break reading
            }
        }
        return fixes
    }

    private func disconnected(at now: UInt64, _ why: String) {
        let old = descriptor
        port = nil
        retryAt = now + 2_000_000_000
        events.outage(.warning, "GPS: \(why); reconnecting", at: now)
        events.onDescriptorChange(old, nil)
    }

    /// The stream's counters, read when asked, not per read.
    func addCounters(to d: inout GPSDiagnostics) {
        guard let bytes else { return }
        d.bytes = bytes
        d.count(stream.stream.counters, satellitesInView: stream.stream.decoder.satellitesInView)
    }

    func close() { port = nil }
}

/// `NMEAStream` is non-copyable; a class holds it so the source can replace it on reconnect.
final class NMEAStreamBox {
    var stream: NMEAStream
    init(uere: Double) { stream = NMEAStream(assembler: .init(uere: uere)) }
    func feed(_ bytes: UnsafeRawBufferPointer, _ onFix: (Fix) -> Void) { stream.feed(bytes, onFix) }
}
