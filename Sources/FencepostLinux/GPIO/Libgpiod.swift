import CGPIOD
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// libgpiod v1 calls in three layers (swift-system's pattern): internal `_…` functions returning
/// `Result<_, Errno>`, built on one-line shims that alone touch libgpiod; `EINTR` is retried by the
/// shell's one helper, ``retryOnInterrupt(_:)``. Nothing outside this file calls libgpiod or reads
/// `errno`.
enum Libgpiod {
    /// `pointer`, or the current `errno` when it is nil (`EIO` if the call left `errno` unset; the
    /// callers clear it first).
    static func pointerOrErrno(_ pointer: OpaquePointer?) -> Result<OpaquePointer, Errno> {
        if let pointer { return .success(pointer) }
        return .failure(errno == 0 ? .ioError : .current)
    }

    // MARK: Chips

    /// Opens a chip by name (`gpiochip0`), path (`/dev/gpiochip0`), label or number. The
    /// corresponding C function is `gpiod_chip_open_lookup`.
    static func _openChip(_ description: String) -> Result<OpaquePointer, Errno> {
        retryOnInterrupt { errno = 0; return pointerOrErrno(gpiod_chip_open_lookup(description)) }
    }

    /// The corresponding C function is `gpiod_chip_close`.
    static func _closeChip(_ chip: OpaquePointer) { gpiod_chip_close(chip) }

    /// The corresponding C function is `gpiod_chip_num_lines`.
    static func _lineCount(_ chip: OpaquePointer) -> UInt32 { gpiod_chip_num_lines(chip) }

    /// The corresponding C function is `gpiod_chip_name`.
    static func _chipName(_ chip: OpaquePointer) -> String { String(cString: gpiod_chip_name(chip)) }

    /// The line at `offset` (owned by the chip). The corresponding C function is `gpiod_chip_get_line`.
    static func _line(_ chip: OpaquePointer, _ offset: UInt32) -> Result<OpaquePointer, Errno> {
        retryOnInterrupt { errno = 0; return pointerOrErrno(gpiod_chip_get_line(chip, offset)) }
    }

    /// Who holds the line, when the kernel says. The corresponding C functions are
    /// `gpiod_line_update`, `gpiod_line_is_used` and `gpiod_line_consumer`.
    static func _consumer(_ line: OpaquePointer) -> String? {
        _ = gpiod_line_update(line)
        guard gpiod_line_is_used(line), let c = gpiod_line_consumer(line) else { return nil }
        return String(cString: c)
    }

    // MARK: Requests

    static func _flags(_ spec: GPIOLineSpec) -> Int32 {
        var flags: Int32 = 0
        if spec.activeLow { flags |= fencepost_gpiod_flag_active_low }
        switch spec.bias {
        case .asIs: break
        case .disabled: flags |= fencepost_gpiod_flag_bias_disable
        case .pullUp: flags |= fencepost_gpiod_flag_bias_pull_up
        case .pullDown: flags |= fencepost_gpiod_flag_bias_pull_down
        }
        return flags
    }

    /// Requests an output at its inactive level. The corresponding C function is
    /// `gpiod_line_request_output_flags`.
    static func _requestOutput(_ line: OpaquePointer, consumer: String, _ spec: GPIOLineSpec) -> Result<Void, Errno> {
        retryOnInterrupt { nothingOrErrno(gpiod_line_request_output_flags(line, consumer, _flags(spec), 0)) }
    }

    /// Requests both-edge events. The corresponding C function is
    /// `gpiod_line_request_both_edges_events_flags`.
    static func _requestBothEdges(_ line: OpaquePointer, consumer: String, _ spec: GPIOLineSpec) -> Result<Void, Errno> {
        retryOnInterrupt { nothingOrErrno(gpiod_line_request_both_edges_events_flags(line, consumer, _flags(spec))) }
    }

    /// The corresponding C function is `gpiod_line_release`.
    static func _release(_ line: OpaquePointer) { gpiod_line_release(line) }

    // MARK: Values and events

    /// The corresponding C function is `gpiod_line_set_value`.
    static func _setValue(_ line: OpaquePointer, _ active: Bool) -> Result<Void, Errno> {
        retryOnInterrupt { nothingOrErrno(gpiod_line_set_value(line, active ? 1 : 0)) }
    }

    /// The corresponding C function is `gpiod_line_event_get_fd`.
    static func _eventDescriptor(_ line: OpaquePointer) -> Result<FileDescriptor, Errno> {
        retryOnInterrupt { valueOrErrno(gpiod_line_event_get_fd(line)) }.map { FileDescriptor(rawValue: $0) }
    }

    /// Whether an event is pending, without waiting. The corresponding C function is
    /// `gpiod_line_event_wait` (with a zero timeout).
    static func _eventPending(_ line: OpaquePointer) -> Result<Bool, Errno> {
        var zero = timespec(tv_sec: 0, tv_nsec: 0)
        return retryOnInterrupt { valueOrErrno(gpiod_line_event_wait(line, &zero)) }.map { $0 == 1 }
    }

    /// Reads one pending event. The corresponding C function is `gpiod_line_event_read`.
    static func _readEvent(_ line: OpaquePointer) -> Result<GPIOEdge, Errno> {
        var event = gpiod_line_event()
        return retryOnInterrupt { nothingOrErrno(gpiod_line_event_read(line, &event)) }.map {
            GPIOEdge(
                isActive: event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE),
                timestamp: UInt64(event.ts.tv_sec) &* 1_000_000_000 &+ UInt64(event.ts.tv_nsec))
        }
    }

    // MARK: Device nodes

    /// Names of the `/dev/gpiochip*` nodes, sorted (for "chips present" in errors). The corresponding C
    /// functions are `opendir`, `readdir` and `closedir`.
    static func _presentChips() -> [String] {
        guard let dir = opendir("/dev") else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix("gpiochip") { names.append(name) }
        }
        return names.sorted()
    }
}
