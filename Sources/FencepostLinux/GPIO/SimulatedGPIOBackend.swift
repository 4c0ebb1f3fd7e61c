/// One output level change, as the simulated backends report it.
public struct GPIOPinChange: Hashable, Sendable, CustomStringConvertible {
    /// From the backend's clock, nanoseconds.
    public var time: UInt64
    public var line: GPIOLineSpec
    public var isActive: Bool

    public init(time: UInt64, line: GPIOLineSpec, isActive: Bool) {
        self.time = time
        self.line = line
        self.isActive = isActive
    }

    public var description: String { "\(time) \(line) \(isActive ? "on" : "off")" }
}

/// Outputs that report each level change to a closure; inputs that fire only when fed. The base of
/// ``ConsoleGPIOBackend`` and ``TraceGPIOBackend``.
///
/// A change is reported when the level differs from the last one reported for that line; the request
/// reports the line going inactive (as real outputs are driven at request), and the release reports
/// it going inactive if it was active.
public class SimulatedGPIOBackend: GPIOBackend {
    let clock: () -> UInt64
    let report: (GPIOPinChange) -> Void
    /// Input lines by name, for ``feed(_:to:)``.
    private var inputs: [String: SimulatedInputLine] = [:]

    /// - Parameters:
    ///   - clock: the caller's clock, nanoseconds (monotonic).
    ///   - report: called for each change.
    public init(clock: @escaping () -> UInt64, report: @escaping (GPIOPinChange) -> Void) {
        self.clock = clock
        self.report = report
    }

    public var backendDescription: String { "simulated" }

    public func requestOutput(_ spec: GPIOLineSpec) throws(GPIOError) -> any GPIOOutputLine {
        let line = SimulatedOutputLine(spec: spec) { [clock, report] active in
            report(GPIOPinChange(time: clock(), line: spec, isActive: active))
        }
        line.onChange(false)
        return line
    }

    public func requestInput(_ spec: GPIOLineSpec) throws(GPIOError) -> any GPIOInputLine {
        let line = SimulatedInputLine(spec: spec)
        inputs[spec.name] = line
        return line
    }

    /// Queues `edges` on the input line called `name` (tests); they come out of its `readEvents`.
    /// Returns false when no such input was requested.
    @discardableResult
    public func feed(_ edges: [GPIOEdge], to name: String) -> Bool {
        guard let line = inputs[name] else { return false }
        line.pending += edges
        return true
    }
}

final class SimulatedOutputLine: GPIOOutputLine {
    let spec: GPIOLineSpec
    let onChange: (Bool) -> Void
    private(set) var isActive = false
    private var released = false

    init(spec: GPIOLineSpec, onChange: @escaping (Bool) -> Void) {
        self.spec = spec
        self.onChange = onChange
    }

    func set(active: Bool) throws(GPIOError) {
        guard !released else { throw .released(line: spec) }
        if active != isActive { onChange(active) }
        isActive = active
    }

    func release() {
        guard !released else { return }
        if isActive { onChange(false) }
        isActive = false
        released = true
    }

    deinit { release() }
}

final class SimulatedInputLine: GPIOInputLine {
    let spec: GPIOLineSpec
    var pending: [GPIOEdge] = []
    private var released = false

    init(spec: GPIOLineSpec) { self.spec = spec }

    var fileDescriptor: FileDescriptor? { nil }

    func readEvents() throws(GPIOError) -> [GPIOEdge] {
        guard !released else { throw .released(line: spec) }
        defer { pending.removeAll() }
        return pending
    }

    func release() { released = true }
}

/// For machines without GPIO: each output change becomes one line of text, e.g.
///
///     +12.345 s  buzzer (BCM 18) on
///
/// The time is the caller's clock relative to when the backend was made. Inputs never fire on their
/// own (they can be fed, see ``SimulatedGPIOBackend/feed(_:to:)``).
public final class ConsoleGPIOBackend: SimulatedGPIOBackend {
    /// Lines go to `write` (one call per line, with its newline).
    public init(clock: @escaping () -> UInt64, write: @escaping (String) -> Void) {
        let origin = clock()
        super.init(clock: clock) { change in
            write(ConsoleGPIOBackend.format(change, since: origin))
        }
    }

    /// Lines go to `fileDescriptor` (e.g. 1 for standard output) with `write(2)`; write errors are
    /// ignored (the console is best effort).
    public convenience init(clock: @escaping () -> UInt64, fileDescriptor: FileDescriptor) {
        self.init(clock: clock) { text in try? fileDescriptor.writeAll(text) }
    }

    public override var backendDescription: String { "console" }

    /// `+12.345 s  buzzer (BCM 18) on` (milliseconds, truncated).
    public static func format(_ change: GPIOPinChange, since origin: UInt64) -> String {
        let ms = (change.time >= origin ? change.time - origin : 0) / 1_000_000
        let fraction = ms % 1000
        let pad = fraction < 10 ? "00" : fraction < 100 ? "0" : ""
        return "+\(ms / 1000).\(pad)\(fraction) s  \(change.line) \(change.isActive ? "on" : "off")\n"
    }
}

/// Records every output change in memory (tests, simulations).
public final class TraceGPIOBackend: SimulatedGPIOBackend {
    private final class Log { var changes: [GPIOPinChange] = [] }
    private let log: Log

    /// Every change so far, in order.
    public var changes: [GPIOPinChange] { log.changes }

    public init(clock: @escaping () -> UInt64) {
        let log = Log()
        self.log = log
        super.init(clock: clock) { log.changes.append($0) }
    }

    public override var backendDescription: String { "trace" }
}
