/// Which GPIO line an output or input is, and how it is wired.
public struct GPIOLineSpec: Hashable, Sendable, CustomStringConvertible {
    /// Role, for messages and the console: "buzzer", "led", "badge", "button".
    public var name: String
    /// Line offset on the chip (on a Raspberry Pi's `gpiochip0`, the BCM number).
    public var offset: UInt32
    /// The line is active when low (e.g. an LED wired from 3.3 V through the pin, a button to ground).
    public var activeLow: Bool
    /// Pull resistor (inputs).
    public var bias: GPIOBias

    public init(name: String, offset: UInt32, activeLow: Bool = false, bias: GPIOBias = .asIs) {
        self.name = name
        self.offset = offset
        self.activeLow = activeLow
        self.bias = bias
    }

    /// `buzzer (BCM 18)`.
    public var description: String { "\(name) (BCM \(offset))" }
}

/// The pull resistor asked for an input line.
public enum GPIOBias: UInt8, Hashable, Sendable {
    /// Leave as configured (device tree, previous user).
    case asIs
    case disabled
    case pullUp
    case pullDown
}

/// One change of an input line, as the kernel timestamped it.
public struct GPIOEdge: Hashable, Sendable {
    /// The line's new logical level (active-low already applied).
    public var isActive: Bool
    /// Nanoseconds on the kernel's event clock: `CLOCK_MONOTONIC` for the v1 uAPI since Linux 5.7
    /// (`CLOCK_REALTIME` before). Advance a ``ButtonDebouncer`` fed with these on the same clock;
    /// `CLOCK_BOOTTIME` equals it on a board that never suspends.
    public var timestamp: UInt64

    public init(isActive: Bool, timestamp: UInt64) {
        self.isActive = isActive
        self.timestamp = timestamp
    }
}

/// A source of GPIO lines: libgpiod on a board, the console or an in-memory trace elsewhere.
///
/// Lines are driven to their inactive level when requested and when released (explicitly or when the
/// last reference goes away).
public protocol GPIOBackend: AnyObject {
    /// For logs: `libgpiod gpiochip0`, `console`, `trace`.
    var backendDescription: String { get }
    /// Requests `spec` as an output, driven inactive.
    func requestOutput(_ spec: GPIOLineSpec) throws(GPIOError) -> any GPIOOutputLine
    /// Requests `spec` as an input reporting both edges.
    func requestInput(_ spec: GPIOLineSpec) throws(GPIOError) -> any GPIOInputLine
}

/// An output line (buzzer, LED). Logical levels: `active` honours the spec's active-low.
public protocol GPIOOutputLine: AnyObject {
    var spec: GPIOLineSpec { get }
    /// The level last set (false after the request).
    var isActive: Bool { get }
    /// Drives the line. Setting the current level again is allowed (the hardware is written again).
    func set(active: Bool) throws(GPIOError)
    /// Drives the line inactive and gives it back. Idempotent; later `set` calls throw `.released`.
    func release()
}

/// An input line (push button) reporting edges.
public protocol GPIOInputLine: AnyObject {
    var spec: GPIOLineSpec { get }
    /// A descriptor that becomes readable when edges are pending (for the epoll loop); nil when the
    /// line never fires on its own (console backend).
    var fileDescriptor: FileDescriptor? { get }
    /// The edges pending now, oldest first, without blocking (empty when none).
    func readEvents() throws(GPIOError) -> [GPIOEdge]
    /// Gives the line back. Idempotent.
    func release()
}
