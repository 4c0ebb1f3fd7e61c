// The events one `EventLoop.wait` returned, read in place from the loop's reused buffer.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux

/// One ready descriptor: the caller's token and what is ready.
public struct ReadyEvent<Token: EventToken> {
    /// The token given at registration.
    public var token: Token
    /// The raw `epoll_event.events` bits.
    public var rawEvents: UInt32

    @inlinable
    public init(token: Token, rawEvents: UInt32) {
        self.token = token
        self.rawEvents = rawEvents
    }

    /// Data to read, or a connection to accept (`EPOLLIN`, `EPOLLPRI`).
    public var isReadable: Bool { rawEvents & UInt32(EPOLLIN.rawValue | EPOLLPRI.rawValue) != 0 }
    /// Room to write (`EPOLLOUT`).
    public var isWritable: Bool { rawEvents & UInt32(EPOLLOUT.rawValue) != 0 }
    /// The peer hung up, entirely (`EPOLLHUP`: a closed pty master, an unplugged USB adapter) or
    /// its writing half (`EPOLLRDHUP`). Data may still be readable before the end.
    public var isHangup: Bool { rawEvents & UInt32(EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0 }
    /// An error condition on the descriptor (`EPOLLERR`); the next read or write reports it.
    public var isError: Bool { rawEvents & UInt32(EPOLLERR.rawValue) != 0 }
}

/// The events of one wait: a view of the loop's buffer, valid until the next `wait` on the same
/// loop (it allocates nothing; copy out what must outlive it).
public struct ReadyEvents<Token: EventToken>: RandomAccessCollection {
    @usableFromInline let events: UnsafeBufferPointer<epoll_event>

    @inlinable
    init(_ events: UnsafeBufferPointer<epoll_event>) { self.events = events }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { events.count }

    @inlinable
    public subscript(position: Int) -> ReadyEvent<Token> {
        let e = events[position]
        return ReadyEvent(token: Token(epollData: e.data.u64), rawEvents: e.events)
    }
}
