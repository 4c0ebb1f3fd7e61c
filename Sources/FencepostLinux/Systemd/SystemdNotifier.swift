// The sd_notify protocol by hand (no libsystemd): one datagram of `KEY=value` lines to the Unix
// socket named in $NOTIFY_SOCKET. With `Type=notify` systemd waits for `READY=1`; with
// `WatchdogSec=` it expects `WATCHDOG=1` at least every $WATCHDOG_USEC microseconds (we ping at
// half of it, as sd_watchdog_enabled(3) advises).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// Why a notification could not be sent.
public enum SystemdNotifyError: Error, Hashable, CustomStringConvertible {
    /// `$NOTIFY_SOCKET` is neither an absolute path nor `@abstract`, or too long.
    case unsupportedAddress(String)
    /// A system call failed.
    case system(operation: String, address: String, errno: Errno)

    public var description: String {
        switch self {
        case .unsupportedAddress(let text): "NOTIFY_SOCKET=\(text): not an absolute path or @name of at most \(UnixSocketAddress.maximumLength) bytes"
        case .system(let operation, let address, let errno): "\(operation) \(address): \(errno)"
        }
    }
}

/// Tells systemd about the daemon's state: ready, status line, watchdog pings, stopping.
/// Without `$NOTIFY_SOCKET` (not started by systemd) every method does nothing.
public final class SystemdNotifier {
    /// Where notifications go; nil when disabled.
    public let address: UnixSocketAddress?
    /// How often to send ``watchdog()``: half of `$WATCHDOG_USEC`, or nil when the watchdog is
    /// off (unset, not a positive number, or `$WATCHDOG_PID` names another process).
    public let watchdogInterval: Duration?
    private var socket: FileDescriptor?

    /// From explicit environment values (for tests and for callers that read the environment
    /// themselves). `processID` is compared with `watchdogPID`.
    public init(notifySocket: String?, watchdogMicroseconds: String? = nil, watchdogPID: String? = nil,
                processID: Int32 = getpid()) throws(SystemdNotifyError) {
        if let notifySocket, !notifySocket.isEmpty {
            guard notifySocket.hasPrefix("/") || notifySocket.hasPrefix("@"),
                  let address = UnixSocketAddress(systemdSpelling: notifySocket)
            else { throw .unsupportedAddress(notifySocket) }
            self.address = address
        } else {
            address = nil
        }
        watchdogInterval = Self.watchdogInterval(microseconds: watchdogMicroseconds, pid: watchdogPID, processID: processID)
    }

    /// From this process's environment: `$NOTIFY_SOCKET`, `$WATCHDOG_USEC`, `$WATCHDOG_PID`.
    /// The corresponding C function is `getenv`.
    public convenience init() throws(SystemdNotifyError) {
        try self.init(notifySocket: Self.environment("NOTIFY_SOCKET"), watchdogMicroseconds: Self.environment("WATCHDOG_USEC"),
                      watchdogPID: Self.environment("WATCHDOG_PID"))
    }

    deinit { if let socket { _ = socket._close() } }

    /// Whether notifications are sent at all.
    public var isEnabled: Bool { address != nil }

    /// Start-up is complete (`READY=1`).
    public func ready() throws(SystemdNotifyError) { try send("READY=1") }

    /// A one-line status for `systemctl status` (`STATUS=…`; newlines become spaces).
    public func status(_ text: String) throws(SystemdNotifyError) {
        try send("STATUS=" + String(text.map { $0.isNewline ? " " : $0 }))
    }

    /// The watchdog ping (`WATCHDOG=1`).
    public func watchdog() throws(SystemdNotifyError) { try send("WATCHDOG=1") }

    /// Shutdown has begun (`STOPPING=1`).
    public func stopping() throws(SystemdNotifyError) { try send("STOPPING=1") }

    /// Sends `state` (one or more `KEY=value` lines) as one datagram. Does nothing when disabled.
    /// The corresponding C functions are `socket(AF_UNIX, SOCK_DGRAM)` (once) and `sendto`.
    public func send(_ state: String) throws(SystemdNotifyError) {
        guard let address else { return }
        let fd: FileDescriptor
        if let socket {
            fd = socket
        } else {
            do throws(Errno) {
                fd = try retryOnInterrupt { Socket._unix(SOCK_DGRAM_VALUE, nonBlocking: false) }.get()
            } catch { throw .system(operation: "socket for", address: address.description, errno: error) }
            socket = fd
        }
        let bytes = Array(state.utf8)
        let result = bytes.withUnsafeBytes { raw in retryOnInterrupt { Socket._sendTo(fd, raw, address) } }
        if case .failure(let e) = result { throw .system(operation: "sendto", address: address.description, errno: e) }
    }

    /// Half of `WATCHDOG_USEC` when it is a positive integer and `WATCHDOG_PID`, if set, is us.
    static func watchdogInterval(microseconds: String?, pid: String?, processID: Int32) -> Duration? {
        guard let microseconds, let usec = UInt64(microseconds), usec > 0 else { return nil }
        if let pid, !pid.isEmpty {
            guard let owner = Int32(pid), owner == processID else { return nil }
        }
        return .microseconds(Int64(clamping: usec / 2)) + .nanoseconds(usec % 2 == 1 ? 500 : 0)
    }

    private static func environment(_ name: String) -> String? {
        system_getenv(name).map { String(cString: $0) }
    }
}
