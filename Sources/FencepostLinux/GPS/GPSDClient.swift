import CGPS
import CivilTime
import Position
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// Why talking to gpsd failed.
public enum GPSDError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `gps_open` failed: name lookup, socket or connect (gpsd not running, wrong port …).
    case connectFailed(host: String, port: String, code: Int32, message: String)
    /// The `?WATCH` command could not be sent, or the socket could not be set up.
    case watchFailed(host: String, port: String, code: Int32, message: String)
    /// The connection ended: gpsd closed it (stopped, restarted) or a read failed.
    case disconnected(host: String, port: String, code: Int32, message: String)
    /// libgps (loaded at first use) could not be loaded: not installed, or another version.
    case libraryUnavailable(soname: String, message: String)

    public var description: String {
        switch self {
        case .connectFailed(let host, let port, _, let message):
            return "cannot connect to gpsd at \(host):\(port) (\(message)); is gpsd running (systemctl status gpsd)?"
        case .watchFailed(let host, let port, _, let message):
            return "connected to gpsd at \(host):\(port) but cannot start the watch (\(message))"
        case .disconnected(let host, let port, _, let message):
            return "gpsd at \(host):\(port) disconnected (\(message))"
        case .libraryUnavailable(let soname, let message):
            return "libgps (\(soname)) cannot be loaded: \(message); install it with `apt-get install libgps28` (board/install-deps)"
        }
    }
}

/// What one ``GPSDClient/readAvailable()`` call got.
public struct GPSDRead: Sendable {
    /// Fixes from the TPV reports read, oldest first.
    public var fixes: [Fix]
    /// Set when the connection ended (after the fixes read before the end); the client is then closed.
    public var disconnection: GPSDError?
    /// JSON messages read (all classes).
    public var messages: Int
    /// Messages libgps could not unpack (skipped).
    public var unreadableMessages = 0
    /// Satellites seen and used in the last SKY report of this read; nil when none came.
    public var satellitesVisible: Int?
    public var satellitesUsed: Int?
}

/// A gpsd client through libgps: `gps_open`, `gps_stream(WATCH_ENABLE | WATCH_JSON)`, then
/// `gps_read` whenever the socket is readable.
///
///     let gpsd = try GPSDClient(host: "localhost", port: "2947")
///     epoll.add(gpsd.fileDescriptor!)           // level-triggered, readable
///     // when readable:
///     let read = gpsd.readAvailable()
///     read.fixes.forEach(monitor.update)
///     if let reason = read.disconnection { … reconnect with ReconnectBackoff … }
///
/// The socket is non-blocking after the connect. `init` blocks (name lookup, connect, the watch):
/// an event loop runs it on a thread of its own (the agent: `GPSFeed` on a `ThreadJob`). The
/// 24 KB `gps_data_t` lives on the heap. Not thread-safe: one thread owns it at a time.
public final class GPSDClient {
    public let host: String
    public let port: String
    private var data: UnsafeMutablePointer<gps_data_t>?
    /// Raw text of the last message (gps_read copies it here); 4 KB, gpsd's longest report is smaller.
    private let message: UnsafeMutableBufferPointer<CChar>

    /// gpsd's IANA port.
    public static let defaultPort = "2947"

    /// Connects and starts watching.
    ///
    /// - Throws: `.connectFailed` (nothing listens, unknown host), `.watchFailed`.
    public init(host: String = "localhost", port: String = GPSDClient.defaultPort, uere: Double = GPSDClient.defaultUERE) throws(GPSDError) {
        self.host = host
        self.port = port
        self.uere = uere
        try Self.loadLibrary()
        message = .allocate(capacity: 4096)
        message.initialize(repeating: 0)
        let data = LibGPS._allocate()
        if case .failure(let e) = LibGPS._open(host: host, port: port, data) {
            LibGPS._deallocate(data)
            throw .connectFailed(host: host, port: port, code: e.code, message: e.message)
        }
        var failure: (code: Int32, message: String)?
        if case .failure(let e) = LibGPS._watch(data) { failure = (e.code, e.message) }
        if failure == nil {
            do throws(Errno) {
                try LibGPS._descriptor(data).setNonBlocking(true)
            } catch {
                failure = (error.rawValue, error.description)
            }
        }
        if let failure {
            LibGPS._close(data)
            LibGPS._deallocate(data)
            throw .watchFailed(host: host, port: port, code: failure.code, message: failure.message)
        }
        self.data = data
    }

    // Runs also when `init` throws (every stored property is set by then): `message` is freed here only.
    deinit {
        close()
        message.deallocate()
    }

    /// The socket to watch for readability; nil once closed.
    public var fileDescriptor: FileDescriptor? { data.map(LibGPS._descriptor) }

    /// Whether the connection is open.
    public var isConnected: Bool { data != nil }

    /// Reads every complete message available now without blocking and returns the fixes of its TPV
    /// reports. It always drains libgps's internal buffer: epoll cannot see messages already read from
    /// the socket into that buffer, so stopping early could leave one waiting until the next report. When the connection has ended the result says so and the client closes itself (its
    /// descriptor is closed, which also removes it from any epoll set).
    ///
    /// - Complexity: O(bytes available).
    public func readAvailable() -> GPSDRead {
        var read = GPSDRead(fixes: [], disconnection: nil, messages: 0)
        guard let data else {
            read.disconnection = .disconnected(host: host, port: port, code: EBADF, message: "not connected")
            return read
        }
        var unreadable = 0
        while true {
            switch LibGPS._read(data, message) {
            case .message:
                read.messages += 1
                // Fields are read in place: gps_data_t is ~24 KB, not to be copied per message.
                if Self.hasClass(message, Self.tpv) {
                    read.fixes.append(Self.fix(data.pointee.fix, hdop: data.pointee.dop.hdop, uere: uere))
                } else if Self.hasClass(message, Self.sky) {
                    // Each SKY's counts, 0 included (a receiver that lost the sky says so).
                    read.satellitesVisible = Int(data.pointee.satellites_visible)
                    read.satellitesUsed = Int(data.pointee.satellites_used)
                }
            case .wouldBlock:
                return read
            case .unreadable:
                // Skipped; bounded so a libgps that does not consume it cannot spin here.
                read.unreadableMessages += 1
                unreadable += 1
                if unreadable >= 64 { return read }
            case .closed(let e):
                read.disconnection = .disconnected(host: host, port: port, code: e.code, message: e.message)
                close()
                return read
            }
        }
    }

    /// Closes the connection. Idempotent. The corresponding C function is `gps_close`.
    public func close() {
        guard let d = data else { return }
        LibGPS._close(d)
        LibGPS._deallocate(d)
        data = nil
    }

    static let tpv = Array(#"{"class":"TPV""#.utf8)
    static let sky = Array(#"{"class":"SKY""#.utf8)

    /// Whether the NUL-terminated JSON text starts with `prefix` (`{"class":"TPV"`: a TPV report).
    static func hasClass(_ text: UnsafeMutableBufferPointer<CChar>, _ prefix: [UInt8]) -> Bool {
        guard text.count > prefix.count else { return false }
        for i in prefix.indices where UInt8(bitPattern: text[i]) != prefix[i] { return false }
        return true
    }

    /// Loads libgps if it is not loaded yet (the agent checks this at start when its source is gpsd).
    public static func loadLibrary() throws(GPSDError) { try LibGPS._load().get() }

    /// User equivalent range error, metres: the error estimate is HDOP × UERE, as for a serial
    /// receiver (`NMEAEpochAssembler`), so that both sources are judged alike.
    public let uere: Double

    /// The UERE of a typical consumer receiver, metres (the serial and replay sources' default too).
    public static let defaultUERE = Fix.typicalUERE

    /// A ``Fix`` from libgps's state after a TPV: NaN (unknown) becomes nil, nothing is invented.
    /// `hdop` is the latest gpsd reported (SKY, or the TPV's epoch for NMEA sources); satellites used
    /// are left nil (they come only with SKY).
    ///
    /// The error estimate: HDOP × `uere` when gpsd knows the HDOP (the serial source's model);
    /// otherwise gpsd's `eph` halved. gpsd derives `eph` from the DOPs with its own UERE constants
    /// at 95 % confidence (about HDOP × 19 m without DGPS, gpsd.h), twice a one-sigma figure like
    /// ours: taken as it is, a fix at HDOP 3 (57 m) would be held as poor by the region monitor's
    /// 50 m limit, and a whole drive with it.
    static func fix(_ f: gps_fix_t, hdop: Double, uere: Double) -> Fix {
        func known(_ v: Double) -> Double? { v.isFinite ? v : nil }
        let mode: FixMode = f.mode == 3 ? .threeD : f.mode == 2 ? .twoD : .none
        var coordinate: Coordinate?
        if mode >= .twoD, f.latitude.isFinite, f.longitude.isFinite {
            coordinate = Coordinate(latitude: f.latitude, longitude: f.longitude)
        }
        let hasTime = f.time.tv_sec != 0 || f.time.tv_nsec != 0
        return Fix(
            time: hasTime ? WallInstant(secondsSinceEpoch: Int64(f.time.tv_sec)) : nil,
            nanoseconds: hasTime ? Int32(clamping: f.time.tv_nsec) : 0,
            coordinate: coordinate,
            altitudeMSL: mode == .threeD ? known(f.altMSL) : nil,
            mode: mode,
            isValid: mode >= .twoD,
            speed: known(f.speed),
            course: known(f.track),
            hdop: known(hdop),
            satellitesUsed: nil,
            horizontalError: known(hdop).map { $0 * uere } ?? known(f.eph).map { $0 / 2 })
    }
}
