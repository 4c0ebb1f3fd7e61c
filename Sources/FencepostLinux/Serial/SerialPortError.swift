// Errors of a serial port always say which device.

/// A serial port failure, naming the device: `/dev/serial0: No such file or directory`.
public struct SerialPortError: Error, Hashable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// A system call failed; `operation` is the C function (`open`, `tcsetattr` …).
        case system(operation: String, errno: Errno)
        /// A baud rate outside ``SerialPort/supportedBaudRates``.
        case unsupportedBaudRate(Int)
    }

    /// The device path given.
    public var path: String
    public var reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// The `errno` of a failed system call, else nil.
    public var errno: Errno? {
        if case .system(_, let e) = reason { return e }
        return nil
    }

    public var description: String {
        switch reason {
        case .system("open", let errno):
            return "\(path): \(errno)"
        case .system(let operation, let errno):
            return "\(path): \(operation): \(errno)"
        case .unsupportedBaudRate(let rate):
            let list = SerialPort.supportedBaudRates.map(String.init).joined(separator: ", ")
            return "\(path): unsupported baud rate \(rate) (supported: \(list))"
        }
    }
}
