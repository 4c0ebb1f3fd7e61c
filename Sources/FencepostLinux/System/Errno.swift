// Errno: the one error type of a failed system call in the shell.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// A failed system call: the `errno` value it left.
///
/// `description` is the C library's sentence (`strerror`), e.g. "No such file or directory";
/// `name` is the C constant (`ENOENT`) for the values the shell meets.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The raw `errno` value.
    public var rawValue: Int32

    @inlinable
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The `errno` of the calling thread now. Read it right after the failed call.
    @inlinable
    public static var current: Errno { Errno(rawValue: errno) }

    /// The C library's sentence for this error. The corresponding C function is `strerror`.
    public var description: String { String(cString: strerror(rawValue)) }

    /// The C name and the sentence, e.g. `ENOENT: No such file or directory`.
    public var debugDescription: String {
        guard let name else { return "errno \(rawValue): \(description)" }
        return "\(name): \(description)"
    }

    /// The C constant's name (`ENOENT`), or nil for a value not in the table.
    public var name: String? {
        for (value, name) in Self.names where value == rawValue { return name }
        return nil
    }

    private static let names: [(Int32, String)] = [
        (EPERM, "EPERM"), (ENOENT, "ENOENT"), (ESRCH, "ESRCH"), (EINTR, "EINTR"), (EIO, "EIO"),
        (ENXIO, "ENXIO"), (EBADF, "EBADF"), (EAGAIN, "EAGAIN"), (ENOMEM, "ENOMEM"), (EACCES, "EACCES"),
        (EFAULT, "EFAULT"), (EBUSY, "EBUSY"), (EEXIST, "EEXIST"), (ENODEV, "ENODEV"), (ENOTDIR, "ENOTDIR"),
        (EISDIR, "EISDIR"), (EINVAL, "EINVAL"), (ENFILE, "ENFILE"), (EMFILE, "EMFILE"), (ENOTTY, "ENOTTY"), (EFBIG, "EFBIG"),
        (ENOSPC, "ENOSPC"), (EROFS, "EROFS"), (EPIPE, "EPIPE"), (ENAMETOOLONG, "ENAMETOOLONG"),
        (ENOTSOCK, "ENOTSOCK"), (EADDRINUSE, "EADDRINUSE"), (ECONNRESET, "ECONNRESET"),
        (ENOTCONN, "ENOTCONN"), (ECONNABORTED, "ECONNABORTED"), (ETIMEDOUT, "ETIMEDOUT"), (ECONNREFUSED, "ECONNREFUSED"),
        (EINPROGRESS, "EINPROGRESS"), (ECANCELED, "ECANCELED"), (EOPNOTSUPP, "EOPNOTSUPP"),
    ]

    // The values the shell tests for.
    public static let notPermitted = Errno(rawValue: EPERM)
    public static let noEntry = Errno(rawValue: ENOENT)
    public static let noSuchProcess = Errno(rawValue: ESRCH)
    public static let interrupted = Errno(rawValue: EINTR)
    public static let ioError = Errno(rawValue: EIO)
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// `EAGAIN` (= `EWOULDBLOCK` on Linux): a nonblocking call has nothing to do now.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let accessDenied = Errno(rawValue: EACCES)
    public static let exists = Errno(rawValue: EEXIST)
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    public static let isDirectory = Errno(rawValue: EISDIR)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let notTerminal = Errno(rawValue: ENOTTY)
    /// `ENODEV`: from a read that takes regular files only, the path is a device or a pipe.
    public static let notRegularFile = Errno(rawValue: ENODEV)
    /// `EFBIG`: a bounded read found more than its bound.
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    /// `EMFILE`: this process has as many descriptors open as `RLIMIT_NOFILE` allows.
    public static let processDescriptorLimit = Errno(rawValue: EMFILE)
    /// `ENFILE`: the whole system is out of open-file entries.
    public static let systemDescriptorLimit = Errno(rawValue: ENFILE)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    public static let inProgress = Errno(rawValue: EINPROGRESS)
    /// `ECANCELED`: from a `TFD_TIMER_CANCEL_ON_SET` timerfd, the wall clock was set.
    public static let canceled = Errno(rawValue: ECANCELED)
}
