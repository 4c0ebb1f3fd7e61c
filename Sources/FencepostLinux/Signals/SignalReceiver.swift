// Signals as events of the loop: blocked with sigprocmask and read from a signalfd, so that
// SIGTERM, SIGINT and SIGHUP arrive as data in the epoll loop (no handlers, no async-signal-safety).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux

/// One signal read from a ``SignalReceiver``.
public struct ReceivedSignal: Hashable, Sendable {
    /// The signal number (`SIGTERM` …).
    public var number: Int32
    /// The process that sent it (0 for the kernel, e.g. a terminal's `SIGINT`).
    public var senderPID: Int32
    /// The real user id of the sender.
    public var senderUID: UInt32

    public init(number: Int32, senderPID: Int32, senderUID: UInt32) {
        self.number = number
        self.senderPID = senderPID
        self.senderUID = senderUID
    }
}

/// Blocks a set of signals and receives them through a signalfd.
///
/// Create it first thing in the daemon, before any other thread exists: the mask is per thread
/// and threads inherit it, so a signal sent to the process is then left pending for the
/// signalfd instead of being delivered to a thread that does not block it. The mask stays in
/// place after the receiver is released (unblocking could deliver a pending `SIGTERM` with its
/// default action).
public final class SignalReceiver {
    /// The signalfd, to register with the event loop for `.readable`. Closed with the receiver.
    public let descriptor: FileDescriptor
    /// The signals received, in the order given.
    public let signals: [Int32]

    /// The signals a daemon always takes over: `SIGTERM` (systemd stop), `SIGINT` (Ctrl-C),
    /// `SIGHUP` (reload).
    public static let standardSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// Blocks ``standardSignals`` plus `additional`, and opens a signalfd for them.
    /// The corresponding C functions are `sigprocmask(SIG_BLOCK)` and
    /// `signalfd(-1, …, SFD_NONBLOCK | SFD_CLOEXEC)`.
    public init(additional: [Int32] = []) throws(Errno) {
        var all = Self.standardSignals
        for s in additional where !all.contains(s) { all.append(s) }
        signals = all
        var set = sigset_t()
        _ = system_sigemptyset(&set)
        for s in all {
            if system_sigaddset(&set, s) != 0 { throw Errno.invalidArgument }
        }
        try retryOnInterrupt { Self._block(&set) }.get()
        descriptor = try retryOnInterrupt { Self._signalfd(&set) }.get()
    }

    deinit { _ = descriptor._close() }

    /// The next pending signal, or nil when none is pending.
    /// The corresponding C function is `read` of a `struct signalfd_siginfo`.
    public func receive() throws(Errno) -> ReceivedSignal? {
        try retryOnInterrupt { _receive() }.get()
    }

    // MARK: Result layer

    static func _block(_ set: inout sigset_t) -> Result<Void, Errno> {
        nothingOrErrno(system_sigprocmask(SIG_BLOCK, &set, nil))
    }

    static func _signalfd(_ set: inout sigset_t) -> Result<FileDescriptor, Errno> {
        let flags = Int32(SFD_NONBLOCK) | Int32(SFD_CLOEXEC)
        return valueOrErrno(system_signalfd(-1, &set, flags)).map(FileDescriptor.init(rawValue:))
    }

    func _receive() -> Result<ReceivedSignal?, Errno> {
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        switch withUnsafeMutableBytes(of: &info, { descriptor._read(into: $0) }) {
        case .success(let n):
            precondition(n == size, "signalfd read returned \(n) bytes, expected \(size)")
            return .success(ReceivedSignal(number: Int32(info.ssi_signo), senderPID: Int32(bitPattern: info.ssi_pid),
                                           senderUID: info.ssi_uid))
        case .failure(.wouldBlock): return .success(nil)
        case .failure(let e): return .failure(e)
        }
    }
}
