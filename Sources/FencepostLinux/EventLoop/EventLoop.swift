// The daemon's one loop: epoll over every descriptor the agent owns (design §1: one thread, no
// polling; when nothing is due the process sleeps in `epoll_wait` until a timerfd or input).
//
// The loop dispatches nothing itself: `wait` returns the tokens of the ready descriptors and the
// caller switches on them. Timers are timerfds registered like any other descriptor
// (``MonotonicTimer``, ``WallClockTimer``), signals a signalfd (``SignalReceiver``), so the
// `wait` timeout is normally `nil` (forever).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux

/// An epoll instance with a reused event buffer. One thread.
public final class EventLoop<Token: EventToken> {
    /// The epoll descriptor, closed with the loop.
    public let descriptor: FileDescriptor
    private let buffer: UnsafeMutableBufferPointer<epoll_event>

    /// Creates the epoll instance.
    /// - Parameter capacity: the most events one `wait` returns; more stay ready for the next.
    /// The corresponding C function is `epoll_create1(EPOLL_CLOEXEC)`.
    public init(capacity: Int = 64) throws(Errno) {
        precondition(capacity > 0, "EventLoop capacity must be positive")
        descriptor = try Self._create().get()
        buffer = .allocate(capacity: capacity)
        buffer.initialize(repeating: epoll_event())
    }

    deinit {
        buffer.deallocate()
        _ = descriptor._close()
    }

    /// Starts watching `fd` for `interest`; `wait` will report it with `token`.
    /// The corresponding C function is `epoll_ctl(EPOLL_CTL_ADD)`.
    public func register(_ fd: FileDescriptor, for interest: Interest, token: Token) throws(Errno) {
        try retryOnInterrupt { _control(EPOLL_CTL_ADD, fd, interest, token) }.get()
    }

    /// Changes the interest or the token of a registered `fd`.
    /// The corresponding C function is `epoll_ctl(EPOLL_CTL_MOD)`.
    public func modify(_ fd: FileDescriptor, for interest: Interest, token: Token) throws(Errno) {
        try retryOnInterrupt { _control(EPOLL_CTL_MOD, fd, interest, token) }.get()
    }

    /// Stops watching `fd`. Call it before closing `fd` (epoll forgets a descriptor only when
    /// every duplicate of it is closed).
    /// The corresponding C function is `epoll_ctl(EPOLL_CTL_DEL)`.
    public func unregister(_ fd: FileDescriptor) throws(Errno) {
        try retryOnInterrupt { _control(EPOLL_CTL_DEL, fd, nil, nil) }.get()
    }

    /// Sleeps until a registered descriptor is ready or `timeout` passes, and returns the ready
    /// ones (empty on timeout). `nil` waits forever. The timeout is rounded up to whole
    /// milliseconds, so the wait never ends before it; an `EINTR` restarts it with the same
    /// timeout. The result is valid until the next `wait`.
    /// The corresponding C function is `epoll_wait`.
    public func wait(timeout: Duration? = nil) throws(Errno) -> ReadyEvents<Token> {
        let milliseconds = Self.milliseconds(roundingUp: timeout)
        let count = try retryOnInterrupt { _wait(milliseconds) }.get()
        return ReadyEvents(UnsafeBufferPointer(rebasing: buffer[..<count]))
    }

    /// `epoll_wait`'s timeout argument: -1 for forever, else milliseconds rounded up, at most
    /// `Int32.max` (24.8 days; the caller's timers wake it before that).
    static func milliseconds(roundingUp timeout: Duration?) -> Int32 {
        guard let timeout else { return -1 }
        let (seconds, attoseconds) = timeout.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let perMillisecond: Int64 = 1_000_000_000_000_000
        let ms = seconds.multipliedReportingOverflow(by: 1000)
        if ms.overflow { return Int32.max }
        let total = ms.partialValue.addingReportingOverflow((attoseconds + perMillisecond - 1) / perMillisecond)
        if total.overflow || total.partialValue > Int64(Int32.max) { return Int32.max }
        return Int32(total.partialValue)
    }

    // MARK: Result layer

    static func _create() -> Result<FileDescriptor, Errno> {
        valueOrErrno(system_epoll_create1(Int32(EPOLL_CLOEXEC))).map(FileDescriptor.init(rawValue:))
    }

    func _control(_ operation: Int32, _ fd: FileDescriptor, _ interest: Interest?, _ token: Token?) -> Result<Void, Errno> {
        var event = epoll_event()
        event.events = interest?.rawValue ?? 0
        event.data.u64 = token?.epollData ?? 0
        return nothingOrErrno(system_epoll_ctl(descriptor.rawValue, operation, fd.rawValue, &event))
    }

    func _wait(_ milliseconds: Int32) -> Result<Int, Errno> {
        valueOrErrno(system_epoll_wait(descriptor.rawValue, buffer.baseAddress!, Int32(buffer.count), milliseconds))
            .map { Int($0) }
    }
}
