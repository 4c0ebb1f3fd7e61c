// One accepted control-socket connection: nonblocking reads, buffered writes, peer credentials.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// What one read of a connection gave.
public enum SocketRead: Hashable, Sendable {
    /// `count` bytes were read (at least 1).
    case bytes(Int)
    /// Nothing to read now.
    case wouldBlock
    /// The peer closed the connection (end of file or reset): close it.
    case closed
}

/// A connected Unix stream socket, nonblocking, with an output buffer: ``enqueue(_:)`` answers,
/// ``flush()`` when the socket is writable, watch `.writable` only while
/// ``hasPendingOutput``.
public final class UnixConnection {
    /// The connected socket, closed with the connection.
    public let descriptor: FileDescriptor
    private var output: [UInt8] = []
    private var outputHead = 0

    /// The output buffer capacity kept between answers; a larger one is freed once written.
    public static let keptCapacity = 4096

    /// Takes ownership of a connected, nonblocking socket.
    public init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    deinit { _ = descriptor._close() }

    /// Bytes enqueued and not yet written.
    public var pendingOutputCount: Int { output.count - outputHead }
    /// Whether ``flush()`` has work left.
    public var hasPendingOutput: Bool { pendingOutputCount > 0 }

    /// The process that connected: its pid, uid, gid and supplementary groups at `connect`
    /// time, from the kernel.
    /// The corresponding C function is `getsockopt(SOL_SOCKET, SO_PEERCRED)`, then
    /// `getsockopt(SOL_SOCKET, SO_PEERGROUPS)`.
    public func peerCredentials() throws(Errno) -> PeerCredentials {
        try retryOnInterrupt { Socket._peerCredentials(descriptor) }.get()
    }

    /// Reads what is available, up to `buffer.count` bytes.
    /// The corresponding C function is `read`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> SocketRead {
        precondition(buffer.count > 0, "UnixConnection.read needs room for at least one byte")
        switch retryOnInterrupt({ descriptor._read(into: buffer) }) {
        case .success(0): return .closed
        case .success(let n): return .bytes(n)
        case .failure(.wouldBlock): return .wouldBlock
        case .failure(.connectionReset): return .closed
        case .failure(let e): throw e
        }
    }

    /// Appends bytes to the output buffer (nothing is written until ``flush()``).
    public func enqueue(_ bytes: some Sequence<UInt8>) {
        if outputHead > 0 && outputHead == output.count {
            output.removeAll(keepingCapacity: output.capacity <= Self.keptCapacity)
            outputHead = 0
        }
        output.append(contentsOf: bytes)
    }

    /// Writes as much of the output buffer as the socket takes. Returns true when all is
    /// written; false when the socket is full (watch `.writable` and call again).
    /// `EPIPE` (peer gone) is thrown, never raised as `SIGPIPE`.
    /// The corresponding C function is `send(…, MSG_NOSIGNAL)`.
    public func flush() throws(Errno) -> Bool {
        while outputHead < output.count {
            let result = output.withUnsafeBytes { raw in
                retryOnInterrupt { Socket._send(descriptor, UnsafeRawBufferPointer(rebasing: raw[outputHead...])) }
            }
            switch result {
            case .success(let n): outputHead += n
            case .failure(.wouldBlock): return false
            case .failure(let e): throw e
            }
        }
        // A large answer's buffer goes back to the heap; a small one is kept for the next.
        output.removeAll(keepingCapacity: output.capacity <= Self.keptCapacity)
        outputHead = 0
        return true
    }
}
