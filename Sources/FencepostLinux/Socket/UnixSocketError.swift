// Errors of the control socket always say which socket path.

/// A control-socket failure, naming the path: `/run/fencepost.sock: bind: Permission denied`.
public struct UnixSocketError: Error, Hashable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// A system call failed; `operation` is the C function.
        case system(operation: String, errno: Errno)
        /// Longer than a `sockaddr_un` holds (``UnixSocketAddress/maximumLength`` bytes) or empty.
        case invalidPath
        /// Another process listens on the path: not a stale socket, left alone.
        case inUse
        /// The path exists and is not a socket: never removed.
        case notASocket
        /// No answer line before the timeout (``UnixClient``).
        case timedOut
        /// The peer closed the connection before a whole line came (``UnixClient``).
        case closedByPeer
        /// The answer line is longer than the limit (``UnixClient``).
        case lineTooLong(Int)
    }

    public var path: String
    public var reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .system(let operation, let errno): "\(path): \(operation): \(errno)"
        case .invalidPath: "\(path): not a socket path of 1 to \(UnixSocketAddress.maximumLength) bytes"
        case .inUse: "\(path): another process is listening on this socket"
        case .notASocket: "\(path): exists and is not a socket; not removed"
        case .timedOut: "\(path): no answer before the timeout"
        case .closedByPeer: "\(path): connection closed before a whole line arrived"
        case .lineTooLong(let limit): "\(path): answer longer than \(limit) bytes"
        }
    }
}
