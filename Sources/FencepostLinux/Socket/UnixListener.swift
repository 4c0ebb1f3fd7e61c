// The daemon's control socket: a listening Unix stream socket at a path, with a stale socket
// file from a crashed run removed (only if it is a socket and nobody answers on it).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// A listening Unix stream socket, nonblocking. Register ``descriptor`` with the ``EventLoop``
/// for `.readable` and call ``accept()`` until it returns nil.
public final class UnixListener {
    /// The socket path.
    public let path: String
    /// The listening socket, closed with the listener.
    public let descriptor: FileDescriptor
    /// Device and inode of the socket file we created, to remove only our own at the end.
    private let identity: (dev_t, ino_t)?

    /// Binds `path`, sets its permissions to `mode` (e.g. `0o660`: owner and group may connect),
    /// and listens. A socket file already at `path` is removed first when connecting to it is
    /// refused (a stale file from a crashed run); a live listener or a file that is not a socket
    /// is an error.
    /// The corresponding C functions are `lstat`, `connect`, `unlink`, `socket`, `bind`, `chmod`
    /// and `listen`.
    public init(path: String, mode: mode_t, backlog: Int32 = 16) throws(UnixSocketError) {
        guard let address = UnixSocketAddress(path: path) else { throw UnixSocketError(path: path, reason: .invalidPath) }
        func fail(_ operation: String, _ errno: Errno) -> UnixSocketError {
            UnixSocketError(path: path, reason: .system(operation: operation, errno: errno))
        }
        try Self.removeStaleSocket(address, path: path)
        let fd: FileDescriptor
        do throws(Errno) { fd = try retryOnInterrupt { Socket._unix(SOCK_STREAM_VALUE, nonBlocking: true) }.get() } catch {
            throw fail("socket", error)
        }
        let setUp = retryOnInterrupt { Socket._bind(fd, address) }.labelled("bind")
            .flatMap { retryOnInterrupt { nothingOrErrno(system_chmod(path, mode)) }.labelled("chmod") }
            .flatMap { retryOnInterrupt { Socket._listen(fd, backlog: backlog) }.labelled("listen") }
        if case .failure(let failed) = setUp {
            _ = fd._close()
            throw fail(failed.operation, failed.errno)
        }
        var st = stat()
        identity = system_lstat(path, &st) == 0 ? (st.st_dev, st.st_ino) : nil
        self.path = path
        self.descriptor = fd
    }

    /// Closes the socket and removes the socket file if it is still the one we created.
    deinit {
        _ = descriptor._close()
        var st = stat()
        if let identity, system_lstat(path, &st) == 0, st.st_dev == identity.0, st.st_ino == identity.1 {
            _ = system_unlink(path)
        }
    }

    /// The next waiting connection, nonblocking and close-on-exec, or nil when none is waiting.
    /// The corresponding C function is `accept4(…, SOCK_NONBLOCK | SOCK_CLOEXEC)`.
    public func accept() throws(UnixSocketError) -> UnixConnection? {
        switch retryOnInterrupt({ Socket._accept(descriptor) }) {
        case .success(let fd): return fd.map(UnixConnection.init(descriptor:))
        // The client gave up between connect and accept: nothing to take.
        case .failure(Errno.connectionAborted): return nil
        case .failure(let e): throw UnixSocketError(path: path, reason: .system(operation: "accept4", errno: e))
        }
    }

    /// Removes `path` if it is a socket nobody listens on; nothing if it does not exist.
    static func removeStaleSocket(_ address: UnixSocketAddress, path: String) throws(UnixSocketError) {
        var st = stat()
        switch retryOnInterrupt({ nothingOrErrno(system_lstat(path, &st)) }) {
        case .success: break
        case .failure(.noEntry): return
        case .failure(let e): throw UnixSocketError(path: path, reason: .system(operation: "lstat", errno: e))
        }
        guard st.st_mode & mode_t(S_IFMT) == mode_t(S_IFSOCK) else { throw UnixSocketError(path: path, reason: .notASocket) }
        let probe: FileDescriptor
        do throws(Errno) { probe = try retryOnInterrupt { Socket._unix(SOCK_STREAM_VALUE, nonBlocking: true) }.get() } catch {
            throw UnixSocketError(path: path, reason: .system(operation: "socket", errno: error))
        }
        defer { _ = probe._close() }
        switch Socket._connect(probe, address) {
        case .success, .failure(.wouldBlock), .failure(.inProgress), .failure(.interrupted):
            throw UnixSocketError(path: path, reason: .inUse)
        case .failure(.connectionRefused):
            if case .failure(let e) = nothingOrErrno(system_unlink(path)), e != .noEntry {
                throw UnixSocketError(path: path, reason: .system(operation: "unlink", errno: e))
            }
        case .failure(let e):
            throw UnixSocketError(path: path, reason: .system(operation: "connect", errno: e))
        }
    }
}
