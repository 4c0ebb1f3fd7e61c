/// Why a GPIO operation failed. Each message says what to do about it.
public enum GPIOError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No chip by that name or path; `present` lists the chips that exist (empty: no GPIO at all).
    case chipNotFound(chip: String, errno: Errno, present: [String])
    /// The path exists but is not a GPIO character device.
    case notAGPIOChip(chip: String, errno: Errno)
    /// The chip's device node is not accessible to this user.
    case permissionDenied(chip: String, errno: Errno)
    /// The chip could not be opened for another reason.
    case chipOpenFailed(chip: String, errno: Errno)
    /// The chip has no line at that offset.
    case lineOutOfRange(chip: String, line: GPIOLineSpec, lineCount: UInt32)
    /// Another consumer holds the line (`consumer` when the kernel names it).
    case lineBusy(chip: String, line: GPIOLineSpec, consumer: String?)
    /// The line request failed for another reason.
    case requestFailed(chip: String, line: GPIOLineSpec, errno: Errno)
    /// Setting or reading a requested line failed.
    case ioFailed(operation: String, line: GPIOLineSpec, errno: Errno)
    /// The line was already released.
    case released(line: GPIOLineSpec)

    public var description: String {
        switch self {
        case .chipNotFound(let chip, let e, let present):
            let hint = present.isEmpty
                ? "this machine has no GPIO — use the console backend"
                : "chips present: \(present.joined(separator: ", "))"
            return "GPIO chip \"\(chip)\" not found (\(e)); \(hint)"
        case .notAGPIOChip(let chip, let e):
            return "\"\(chip)\" is not a GPIO chip (\(e)); give a name such as gpiochip0 or a path such as /dev/gpiochip0"
        case .permissionDenied(let chip, let e):
            return "cannot open GPIO chip \"\(chip)\" (\(e)); add the user to the gpio group (usermod -aG gpio USER) or run the service with SupplementaryGroups=gpio"
        case .chipOpenFailed(let chip, let e):
            return "cannot open GPIO chip \"\(chip)\" (\(e))"
        case .lineOutOfRange(let chip, let line, let count):
            let range = count == 0 ? "no lines" : "lines 0…\(count - 1)"
            return "GPIO line \(line.offset) for \(line.name) is out of range: chip \"\(chip)\" has \(range)"
        case .lineBusy(let chip, let line, let consumer):
            let by = consumer.map { "used by \"\($0)\"" } ?? "used by another program or driver"
            return "GPIO line \(line) on chip \"\(chip)\" is busy: \(by)"
        case .requestFailed(let chip, let line, let e):
            return "cannot request GPIO line \(line) on chip \"\(chip)\" (\(e))"
        case .ioFailed(let operation, let line, let e):
            return "GPIO \(operation) on \(line) failed (\(e))"
        case .released(let line):
            return "GPIO line \(line) was already released"
        }
    }
}
