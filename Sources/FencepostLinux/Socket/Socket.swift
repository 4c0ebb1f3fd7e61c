// The socket calls the Unix listener, connection, client and the sd_notify sender share.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux

/// Result-layer socket calls on a raw descriptor. Internal: the public faces are
/// ``UnixListener``, ``UnixConnection``, ``UnixClient`` and ``SystemdNotifier``.
enum Socket {
    /// A new Unix-domain socket of `type` (`SOCK_STREAM`, `SOCK_DGRAM`), close-on-exec, optionally
    /// nonblocking. The corresponding C function is `socket(AF_UNIX, …)`.
    static func _unix(_ type: Int32, nonBlocking: Bool) -> Result<FileDescriptor, Errno> {
        let flags = Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        return valueOrErrno(system_socket(AF_UNIX, type | flags, 0)).map(FileDescriptor.init(rawValue:))
    }

    /// The corresponding C function is `bind`.
    static func _bind(_ fd: FileDescriptor, _ address: UnixSocketAddress) -> Result<Void, Errno> {
        address.withSockaddr { nothingOrErrno(system_bind(fd.rawValue, $0, $1)) }
    }

    /// The corresponding C function is `listen`.
    static func _listen(_ fd: FileDescriptor, backlog: Int32) -> Result<Void, Errno> {
        nothingOrErrno(system_listen(fd.rawValue, backlog))
    }

    /// The corresponding C function is `connect`.
    static func _connect(_ fd: FileDescriptor, _ address: UnixSocketAddress) -> Result<Void, Errno> {
        address.withSockaddr { nothingOrErrno(system_connect(fd.rawValue, $0, $1)) }
    }

    /// A connection from the queue, nonblocking and close-on-exec; nil when none is waiting.
    /// The corresponding C function is `accept4(…, SOCK_NONBLOCK | SOCK_CLOEXEC)`.
    static func _accept(_ fd: FileDescriptor) -> Result<FileDescriptor?, Errno> {
        let flags = Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        switch valueOrErrno(system_accept4(fd.rawValue, nil, nil, flags)) {
        case .success(let raw): return .success(FileDescriptor(rawValue: raw))
        case .failure(.wouldBlock): return .success(nil)
        case .failure(let e): return .failure(e)
        }
    }

    /// Sends without raising `SIGPIPE` on a closed peer (`EPIPE` instead).
    /// The corresponding C function is `send(…, MSG_NOSIGNAL)`.
    static func _send(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer) -> Result<Int, Errno> {
        valueOrErrno(system_send(fd.rawValue, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)))
    }

    /// One datagram to `address`. The corresponding C function is `sendto(…, MSG_NOSIGNAL)`.
    static func _sendTo(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer, _ address: UnixSocketAddress) -> Result<Int, Errno> {
        address.withSockaddr {
            valueOrErrno(system_sendto(fd.rawValue, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, $1))
        }
    }

    /// The credentials of the peer process at `connect` time.
    /// The corresponding C function is `getsockopt(SOL_SOCKET, SO_PEERCRED)`.
    static func _peerCredentials(_ fd: FileDescriptor) -> Result<PeerCredentials, Errno> {
        var creds = cfl_ucred()
        var length = socklen_t(MemoryLayout<cfl_ucred>.size)
        return nothingOrErrno(system_getsockopt(fd.rawValue, SOL_SOCKET, SO_PEERCRED, &creds, &length)).flatMap {
            _peerGroups(fd).map { PeerCredentials(processID: creds.pid, userID: creds.uid, groupID: creds.gid, groupIDs: $0) }
        }
    }

    /// The supplementary groups the peer had at `connect`, from the kernel (Linux ≥ 4.13): the
    /// groups its process holds, as the socket file's permissions saw them — not what the group
    /// database says now. `ERANGE` says the buffer was short and how long it must be.
    static func _peerGroups(_ fd: FileDescriptor) -> Result<[UInt32], Errno> {
        var groups = [gid_t](repeating: 0, count: 32)
        while true {
            var length = socklen_t(groups.count * MemoryLayout<gid_t>.size)
            let rc = groups.withUnsafeMutableBytes { system_getsockopt(fd.rawValue, SOL_SOCKET, SO_PEERGROUPS, $0.baseAddress!, &length) }
            if rc == 0 { return .success(Array(groups.prefix(Int(length) / MemoryLayout<gid_t>.size))) }
            let e = Errno.current
            let needed = Int(length) / MemoryLayout<gid_t>.size
            guard e == Errno(rawValue: ERANGE), needed > groups.count, needed <= 65_536 else { return .failure(e) }
            groups = [gid_t](repeating: 0, count: needed)
        }
    }

    /// Waits until `fd` has `events` (`POLLIN`, `POLLOUT`) or `milliseconds` pass; false on timeout.
    /// The corresponding C function is `poll`.
    static func _poll(_ fd: FileDescriptor, events: Int16, milliseconds: Int32) -> Result<Bool, Errno> {
        var p = pollfd(fd: fd.rawValue, events: events, revents: 0)
        return valueOrErrno(system_poll(&p, 1, milliseconds)).map { $0 > 0 }
    }
}

/// `SOCK_DGRAM` as the `Int32` `socket` takes (Glibc imports the socket types as an enum).
let SOCK_DGRAM_VALUE = Int32(SOCK_DGRAM.rawValue)
/// `SOCK_STREAM` as the `Int32` `socket` takes.
let SOCK_STREAM_VALUE = Int32(SOCK_STREAM.rawValue)

/// Who is at the other end of a Unix socket (`SO_PEERCRED`): the process that connected.
public struct PeerCredentials: Hashable, Sendable {
    public var processID: Int32
    public var userID: UInt32
    /// The primary group.
    public var groupID: UInt32
    /// The supplementary groups (`adduser pi fencepost` adds one), as the process held them.
    public var groupIDs: [UInt32]

    public init(processID: Int32, userID: UInt32, groupID: UInt32, groupIDs: [UInt32] = []) {
        self.processID = processID
        self.userID = userID
        self.groupID = groupID
        self.groupIDs = groupIDs
    }
}
