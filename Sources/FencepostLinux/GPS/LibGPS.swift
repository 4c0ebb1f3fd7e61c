import CFencepostLinux
import CGPS
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// libgps calls in three layers (swift-system's pattern): internal `_…` functions returning
/// `Result<_, GPSErrno>`, built on one-line shims that alone touch libgps. Nothing outside this file
/// calls libgps or reads `errno`. libgps is loaded at the first ``_load()`` (dlopen), not linked.
///
/// libgps reports its own failures as *negative* `errno` values (`NL_NOCONNECT` …) next to ordinary
/// positive ones; ``GPSErrno/message`` uses `gps_errstr`, which knows both (design §7).
enum LibGPS {
    struct GPSErrno: Error, Equatable {
        var code: Int32

        /// The corresponding C function is `gps_errstr`.
        var message: String { String(cString: cfl_gps_errstr(code)) }
    }

    /// Loads libgps (once; later calls return at once). Fails with dlerror's text and the soname.
    static func _load() -> Result<Void, GPSDError> {
        guard let why = cfl_gps_load() else { return .success(()) }
        return .failure(.libraryUnavailable(soname: String(cString: cfl_gps_soname()), message: String(cString: why)))
    }

    /// The current `errno`, or `EIO` when a call failed without setting it.
    static func lastError() -> GPSErrno { GPSErrno(code: errno == 0 ? EIO : errno) }

    /// A zeroed `gps_data_t` on the heap (it is 24 KB: never on the stack).
    static func _allocate() -> UnsafeMutablePointer<gps_data_t> {
        let p = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
        UnsafeMutableRawPointer(p).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<gps_data_t>.size)
        return p
    }

    static func _deallocate(_ data: UnsafeMutablePointer<gps_data_t>) { data.deallocate() }

    /// Connects to gpsd (blocking `connect`). The corresponding C function is `gps_open`.
    static func _open(host: String, port: String, _ data: UnsafeMutablePointer<gps_data_t>) -> Result<Void, GPSErrno> {
        errno = 0
        return cfl_gps_open(host, port, data) == 0 ? .success(()) : .failure(lastError())
    }

    /// Asks gpsd to stream JSON reports (`?WATCH={"enable":true,"json":true};`). The corresponding C
    /// function is `gps_stream`.
    static func _watch(_ data: UnsafeMutablePointer<gps_data_t>) -> Result<Void, GPSErrno> {
        errno = 0
        let flags = fencepost_gps_watch_enable | fencepost_gps_watch_json
        return cfl_gps_stream(data, flags) == 0 ? .success(()) : .failure(lastError())
    }

    /// The socket. The corresponding C field is `gps_data_t.gps_fd`.
    static func _descriptor(_ data: UnsafeMutablePointer<gps_data_t>) -> FileDescriptor {
        FileDescriptor(rawValue: fencepost_gps_fd(data))
    }

    /// The outcome of one `gps_read`.
    enum ReadOutcome {
        /// One JSON message was unpacked into the `gps_data_t`; `message` is its text.
        case message
        /// No complete message is buffered and the socket has nothing more now.
        case wouldBlock
        /// libgps could not unpack a message (a negative libgps code in errno, e.g. a JSON field it
        /// does not know): the message is consumed, the connection is fine.
        case unreadable(GPSErrno)
        /// The peer closed the connection, or a read error.
        case closed(GPSErrno)
    }

    /// Reads and unpacks at most one message; its raw text goes to `message` (NUL-terminated). Never
    /// blocks on a non-blocking socket (libgps maps `EINTR`/`EAGAIN` to 0). The corresponding C
    /// function is `gps_read`.
    static func _read(_ data: UnsafeMutablePointer<gps_data_t>, _ message: UnsafeMutableBufferPointer<CChar>) -> ReadOutcome {
        errno = 0
        let r = cfl_gps_read(data, message.baseAddress, Int32(message.count))
        if r > 0 { return .message }
        if r == 0 { return .wouldBlock }
        // libgps's own (negative) codes are unpack failures of one message, not socket errors.
        if errno < 0 { return .unreadable(GPSErrno(code: errno)) }
        // recv returned 0 (orderly shutdown) leaves errno 0: say so rather than "Success".
        return .closed(errno == 0 ? GPSErrno(code: ECONNRESET) : GPSErrno(code: errno))
    }

    /// Closes the socket and frees libgps's private data. The corresponding C function is `gps_close`.
    static func _close(_ data: UnsafeMutablePointer<gps_data_t>) { _ = cfl_gps_close(data) }
}
