#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// GPIO through libgpiod v1 on one chip.
///
///     let gpio = try LibgpiodBackend(chip: "gpiochip0")
///     let buzzer = try gpio.requestOutput(GPIOLineSpec(name: "buzzer", offset: 18))
///     try buzzer.set(active: true)
///
/// Lines are requested with consumer `fencepost`; active-low and bias go in the request flags, so
/// levels are logical everywhere above this type. Outputs are driven inactive when requested and when
/// released. The chip stays open while the backend or any of its lines is alive.
public final class LibgpiodBackend: GPIOBackend {
    /// Owns the `gpiod_chip` (which owns its lines): closed when the backend and all lines are gone.
    final class Chip {
        let pointer: OpaquePointer
        /// As the caller named it, for messages.
        let description: String

        init(_ pointer: OpaquePointer, description: String) {
            self.pointer = pointer
            self.description = description
        }

        deinit { Libgpiod._closeChip(pointer) }
    }

    /// The consumer name the kernel shows for our lines (`gpioinfo`).
    public static let consumer = "fencepost"

    let chip: Chip

    /// Opens `chip`: a name (`gpiochip0`), a path (`/dev/gpiochip0`), a label or a number.
    ///
    /// - Throws: `.chipNotFound` (with the chips that do exist), `.notAGPIOChip`,
    ///   `.permissionDenied`, `.chipOpenFailed`.
    public init(chip description: String) throws(GPIOError) {
        switch Libgpiod._openChip(description) {
        case .success(let p):
            chip = Chip(p, description: description)
        case .failure(let e):
            switch e.rawValue {
            case ENOENT: throw .chipNotFound(chip: description, errno: e, present: Libgpiod._presentChips())
            case EACCES, EPERM: throw .permissionDenied(chip: description, errno: e)
            case ENOTTY, ENODEV, EINVAL: throw .notAGPIOChip(chip: description, errno: e)
            default: throw .chipOpenFailed(chip: description, errno: e)
            }
        }
    }

    /// The kernel's name of the chip (`gpiochip0`).
    public var chipName: String { Libgpiod._chipName(chip.pointer) }

    /// Number of lines on the chip.
    public var lineCount: UInt32 { Libgpiod._lineCount(chip.pointer) }

    public var backendDescription: String { "libgpiod \(chipName)" }

    public func requestOutput(_ spec: GPIOLineSpec) throws(GPIOError) -> any GPIOOutputLine {
        let line = try lineFor(spec)
        if case .failure(let e) = Libgpiod._requestOutput(line, consumer: Self.consumer, spec) {
            throw requestError(e, line, spec)
        }
        return LibgpiodOutputLine(chip: chip, line: line, spec: spec)
    }

    public func requestInput(_ spec: GPIOLineSpec) throws(GPIOError) -> any GPIOInputLine {
        let line = try lineFor(spec)
        if case .failure(let e) = Libgpiod._requestBothEdges(line, consumer: Self.consumer, spec) {
            throw requestError(e, line, spec)
        }
        switch Libgpiod._eventDescriptor(line) {
        case .success(let fd):
            return LibgpiodInputLine(chip: chip, line: line, spec: spec, fileDescriptor: fd)
        case .failure(let e):
            Libgpiod._release(line)
            throw .requestFailed(chip: chip.description, line: spec, errno: e)
        }
    }

    func lineFor(_ spec: GPIOLineSpec) throws(GPIOError) -> OpaquePointer {
        let count = lineCount
        guard spec.offset < count else { throw .lineOutOfRange(chip: chip.description, line: spec, lineCount: count) }
        switch Libgpiod._line(chip.pointer, spec.offset) {
        case .success(let line): return line
        case .failure(let e) where e == .invalidArgument:
            throw .lineOutOfRange(chip: chip.description, line: spec, lineCount: count)
        case .failure(let e): throw .requestFailed(chip: chip.description, line: spec, errno: e)
        }
    }

    func requestError(_ e: Errno, _ line: OpaquePointer, _ spec: GPIOLineSpec) -> GPIOError {
        if e.rawValue == EBUSY { return .lineBusy(chip: chip.description, line: spec, consumer: Libgpiod._consumer(line)) }
        if e == .accessDenied || e == .notPermitted { return .permissionDenied(chip: chip.description, errno: e) }
        return .requestFailed(chip: chip.description, line: spec, errno: e)
    }
}

/// A requested libgpiod output line.
final class LibgpiodOutputLine: GPIOOutputLine {
    let chip: LibgpiodBackend.Chip
    var line: OpaquePointer?
    let spec: GPIOLineSpec
    private(set) var isActive = false

    init(chip: LibgpiodBackend.Chip, line: OpaquePointer, spec: GPIOLineSpec) {
        self.chip = chip
        self.line = line
        self.spec = spec
    }

    func set(active: Bool) throws(GPIOError) {
        guard let line else { throw .released(line: spec) }
        if case .failure(let e) = Libgpiod._setValue(line, active) {
            throw .ioFailed(operation: "set", line: spec, errno: e)
        }
        isActive = active
    }

    func release() {
        guard let l = line else { return }
        _ = Libgpiod._setValue(l, false)  // best effort: the line is given back either way
        isActive = false
        Libgpiod._release(l)
        line = nil
    }

    deinit { release() }
}

/// A requested libgpiod both-edges input line.
final class LibgpiodInputLine: GPIOInputLine {
    /// Most events returned by one `readEvents` call (the rest stay pending; the fd stays readable).
    static let maximumEventsPerRead = 64

    let chip: LibgpiodBackend.Chip
    var line: OpaquePointer?
    let spec: GPIOLineSpec
    private(set) var fileDescriptor: FileDescriptor?

    init(chip: LibgpiodBackend.Chip, line: OpaquePointer, spec: GPIOLineSpec, fileDescriptor: FileDescriptor) {
        self.chip = chip
        self.line = line
        self.spec = spec
        self.fileDescriptor = fileDescriptor
    }

    func readEvents() throws(GPIOError) -> [GPIOEdge] {
        guard let line else { throw .released(line: spec) }
        var edges: [GPIOEdge] = []
        while edges.count < Self.maximumEventsPerRead {
            switch Libgpiod._eventPending(line) {
            case .success(false): return edges
            case .success(true): break
            case .failure(let e): throw .ioFailed(operation: "event wait", line: spec, errno: e)
            }
            switch Libgpiod._readEvent(line) {
            case .success(let edge): edges.append(edge)
            case .failure(let e): throw .ioFailed(operation: "event read", line: spec, errno: e)
            }
        }
        return edges
    }

    func release() {
        guard let l = line else { return }
        Libgpiod._release(l)
        line = nil
        fileDescriptor = nil
    }

    deinit { release() }
}
