// The GPS receiver's serial port (design §6: `/dev/serial0`, termios, baud): raw 8N1, nonblocking,
// read as bytes arrive, and a clear "disconnected" when a USB adapter is pulled so that the
// caller can close it and try to open the device again later.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// What one read of a serial port gave.
public enum SerialRead: Hashable, Sendable {
    /// `count` bytes were read into the buffer (at least 1).
    case bytes(Int)
    /// Nothing to read now; wait for the loop to report the port readable.
    case wouldBlock
    /// The device went away (hang-up, unplug, closed pty master): close the port and reopen
    /// the path later.
    case disconnected
}

/// A tty device opened `O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC` and set to raw mode
/// (`cfmakeraw`), 8 data bits, no parity, 1 stop bit, no flow control, `CLOCAL | CREAD`,
/// `VMIN = 0`, `VTIME = 0`. Register ``descriptor`` with the ``EventLoop`` for `.readable`.
public final class SerialPort {
    /// The device path, as given.
    public let path: String
    /// The line speed in bits per second.
    public let baudRate: Int
    /// The open device, closed with the port.
    public let descriptor: FileDescriptor

    /// The rates a GNSS receiver uses (NMEA's 4800 to the 460800 of fast u-blox modes).
    public static let supportedBaudRates = [4800, 9600, 19200, 38400, 57600, 115200, 230400, 460800]

    /// Opens and configures `path`. Errors name the path and the failed call.
    /// The corresponding C functions are `open`, `tcgetattr`, `cfmakeraw`, `cfsetispeed`,
    /// `cfsetospeed`, `tcsetattr(TCSANOW)` and `tcflush(TCIFLUSH)`.
    public init(path: String, baudRate: Int) throws(SerialPortError) {
        guard let speed = Self.speed(baudRate) else {
            throw SerialPortError(path: path, reason: .unsupportedBaudRate(baudRate))
        }
        let flags = O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC
        let fd: FileDescriptor
        do throws(Errno) { fd = try FileDescriptor.open(path, flags) } catch {
            throw SerialPortError(path: path, reason: .system(operation: "open", errno: error))
        }
        if case .failure(let failed) = Self._configure(fd, speed) {
            _ = fd._close()
            throw SerialPortError(path: path, reason: .system(operation: failed.operation, errno: failed.errno))
        }
        self.path = path
        self.baudRate = baudRate
        self.descriptor = fd
    }

    deinit { _ = descriptor._close() }

    /// Reads the bytes available, up to `buffer.count`.
    ///
    /// With `VMIN = 0` and `VTIME = 0` the kernel's tty read returns 0, not `EAGAIN`, when no byte
    /// is waiting (`n_tty_read` gives up before it looks at `O_NONBLOCK`), so 0 alone does not mean
    /// end of file here: a 0 is `.disconnected` only when the device also reports a hang-up
    /// (`POLLHUP`/`POLLERR`, asked with a zero-timeout `poll`), else `.wouldBlock`. `EIO` (the
    /// other side closed, e.g. a pty master) is `.disconnected`. When the loop reported a hang-up
    /// (`ReadyEvent.isHangup`), pass `hangupReported: true`: bytes still buffered come first, then
    /// `.disconnected`.
    /// The corresponding C functions are `read` and, after a 0, `poll`.
    public func read(into buffer: UnsafeMutableRawBufferPointer, hangupReported: Bool = false) throws(SerialPortError) -> SerialRead {
        precondition(buffer.count > 0, "SerialPort.read needs room for at least one byte")
        switch retryOnInterrupt({ descriptor._read(into: buffer) }) {
        case .success(0), .failure(.wouldBlock):
            if hangupReported { return .disconnected }
            switch retryOnInterrupt({ Self._hungUp(descriptor) }) {
            case .success(true): return .disconnected
            case .success(false): return .wouldBlock
            case .failure(let e): throw SerialPortError(path: path, reason: .system(operation: "poll", errno: e))
            }
        case .success(let n): return .bytes(n)
        case .failure(.ioError): return .disconnected
        case .failure(let e): throw SerialPortError(path: path, reason: .system(operation: "read", errno: e))
        }
    }

    /// Writes some of `bytes` (receiver configuration sentences); returns how many were taken,
    /// 0 when the output queue is full.
    /// The corresponding C function is `write`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SerialPortError) -> Int {
        switch retryOnInterrupt({ descriptor._write(bytes) }) {
        case .success(let n): return n
        case .failure(.wouldBlock): return 0
        case .failure(let e): throw SerialPortError(path: path, reason: .system(operation: "write", errno: e))
        }
    }

    /// The termios speed constant for `rate`, or nil when unsupported.
    static func speed(_ rate: Int) -> speed_t? {
        switch rate {
        case 4800: speed_t(B4800)
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 115200: speed_t(B115200)
        case 230400: speed_t(B230400)
        case 460800: speed_t(B460800)
        default: nil
        }
    }

    // MARK: Result layer

    /// Whether the device reports a hang-up or an error now (zero-timeout `poll`).
    static func _hungUp(_ fd: FileDescriptor) -> Result<Bool, Errno> {
        var p = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
        return valueOrErrno(system_poll(&p, 1, 0)).map { _ in p.revents & Int16(POLLHUP | POLLERR) != 0 }
    }

    /// Raw 8N1 at `speed`; a failure names the C function that failed.
    static func _configure(_ fd: FileDescriptor, _ speed: speed_t) -> Result<Void, FailedCall> {
        var t = termios()
        if case .failure(let e) = retryOnInterrupt({ nothingOrErrno(system_tcgetattr(fd.rawValue, &t)) }) {
            return .failure(FailedCall("tcgetattr", e))
        }
        system_cfmakeraw(&t)
        if case .failure(let e) = nothingOrErrno(system_cfsetispeed(&t, speed)) { return .failure(FailedCall("cfsetispeed", e)) }
        if case .failure(let e) = nothingOrErrno(system_cfsetospeed(&t, speed)) { return .failure(FailedCall("cfsetospeed", e)) }
        t.c_cflag &= ~(tcflag_t(CSIZE) | tcflag_t(PARENB) | tcflag_t(CSTOPB) | tcflag_t(CRTSCTS))
        t.c_cflag |= tcflag_t(CS8) | tcflag_t(CLOCAL) | tcflag_t(CREAD)
        withUnsafeMutableBytes(of: &t.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        if case .failure(let e) = retryOnInterrupt({ nothingOrErrno(system_tcsetattr(fd.rawValue, TCSANOW, &t)) }) {
            return .failure(FailedCall("tcsetattr", e))
        }
        // Bytes that arrived before raw mode may have been mangled by the line discipline.
        if case .failure(let e) = retryOnInterrupt({ nothingOrErrno(system_tcflush(fd.rawValue, TCIFLUSH)) }) {
            return .failure(FailedCall("tcflush", e))
        }
        return .success(())
    }
}
