// The CLI's side of the control socket: connect, send a line, wait for a line, with a timeout.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
import CivilTime
#endif

/// A blocking Unix stream client for one-line requests and answers.
public final class UnixClient {
    /// The socket path connected to.
    public let path: String
    /// The connected socket, closed with the client.
    public let descriptor: FileDescriptor
    private var framer: LineFramer
    /// Bytes received so far (to tell "no answer at all" from "an answer that did not end").
    public private(set) var bytesReceived = 0

    private init(path: String, descriptor: FileDescriptor, maximumLineLength: Int) {
        self.path = path
        self.descriptor = descriptor
        self.framer = LineFramer(maximumLineLength: maximumLineLength)
    }

    deinit { _ = descriptor._close() }

    /// Connects to the listener at `path`; answers longer than `maximumLineLength` are refused.
    /// The corresponding C functions are `socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC)` and `connect`.
    public static func connect(_ path: String, maximumLineLength: Int = 1 << 20) throws(UnixSocketError) -> UnixClient {
        guard let address = UnixSocketAddress(path: path) else { throw UnixSocketError(path: path, reason: .invalidPath) }
        let fd: FileDescriptor
        do throws(Errno) { fd = try retryOnInterrupt { Socket._unix(SOCK_STREAM_VALUE, nonBlocking: false) }.get() } catch {
            throw UnixSocketError(path: path, reason: .system(operation: "socket", errno: error))
        }
        // connect is not restarted after EINTR (it continues asynchronously); no signal handlers
        // are installed by the CLI, so it is not expected.
        if case .failure(let e) = Socket._connect(fd, address) {
            _ = fd._close()
            throw UnixSocketError(path: path, reason: .system(operation: "connect", errno: e))
        }
        return UnixClient(path: path, descriptor: fd, maximumLineLength: maximumLineLength)
    }

    /// Sends `text` and a `\n`, all of it. The corresponding C function is `send(…, MSG_NOSIGNAL)`.
    public func sendLine(_ text: String) throws(UnixSocketError) {
        var bytes = Array(text.utf8)
        bytes.append(0x0A)
        var done = 0
        while done < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                retryOnInterrupt { Socket._send(descriptor, UnsafeRawBufferPointer(rebasing: raw[done...])) }
            }
            switch result {
            case .success(let n): done += n
            case .failure(let e): throw UnixSocketError(path: path, reason: .system(operation: "send", errno: e))
            }
        }
    }

    /// The next line from the server (without `\n`), waiting at most `timeout` in all.
    /// The corresponding C functions are `poll` and `read`.
    public func readLine(timeout: Duration) throws(UnixSocketError) -> String {
        let start = SystemClocks.boottimeNow().nanosecondsSinceBoot
        let (seconds, attoseconds) = timeout.components
        let limit = UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds / 1_000_000_000))
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            switch framer.next() {
            case .line(let bytes): return String(decoding: bytes, as: UTF8.self)
            case .tooLong: throw UnixSocketError(path: path, reason: .lineTooLong(framer.maximumLineLength))
            case nil: break
            }
            let elapsed = SystemClocks.boottimeNow().nanosecondsSinceBoot &- start
            guard elapsed < limit else { throw UnixSocketError(path: path, reason: .timedOut) }
            let remaining = EventLoop<UInt64>.milliseconds(roundingUp: .nanoseconds(Int64(clamping: limit - elapsed)))
            switch retryOnInterrupt({ Socket._poll(descriptor, events: Int16(POLLIN), milliseconds: remaining) }) {
            case .success(false): continue
            case .success(true): break
            case .failure(let e): throw UnixSocketError(path: path, reason: .system(operation: "poll", errno: e))
            }
            let n: Int
            switch chunk.withUnsafeMutableBytes({ raw in retryOnInterrupt { descriptor._read(into: raw) } }) {
            case .success(let count): n = count
            case .failure(.connectionReset): throw UnixSocketError(path: path, reason: .closedByPeer)
            case .failure(let e): throw UnixSocketError(path: path, reason: .system(operation: "read", errno: e))
            }
            if n == 0 { throw UnixSocketError(path: path, reason: .closedByPeer) }
            bytesReceived += n
            framer.append(chunk[..<n])
        }
    }
}
