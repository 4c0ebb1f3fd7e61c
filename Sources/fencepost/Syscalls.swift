// The few system calls the CLI makes itself: read(2), write(2), clock_gettime(2).
//
// Three layers, as in swift-system: a documented method that throws a typed error → an internal
// `_foo(...) -> Result<T, Errno>` → a one-line shim that alone touches libc. `EINTR` is retried
// in exactly one helper, `retryOnInterrupt`.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CivilTime

/// A failed system call: the `errno` value.
struct Errno: Error, Hashable, CustomStringConvertible {
    var rawValue: Int32

    /// The C library's sentence for this error (`strerror`).
    var description: String { String(cString: strerror(rawValue)) }

    static var current: Errno { Errno(rawValue: errno) }
    static let interrupted = Errno(rawValue: EINTR)
}

/// Runs `body` again while it fails with `EINTR`. The only place that retries on `EINTR`.
@inline(__always)
func retryOnInterrupt<T>(_ body: () -> Result<T, Errno>) -> Result<T, Errno> {
    while true {
        let result = body()
        if case .failure(.interrupted) = result { continue }
        return result
    }
}

/// A file descriptor the CLI reads or writes.
struct FileDescriptor: Sendable {
    var rawValue: Int32

    static let standardInput = FileDescriptor(rawValue: 0)
    static let standardOutput = FileDescriptor(rawValue: 1)
    static let standardError = FileDescriptor(rawValue: 2)

    /// Reads up to `buffer.count` bytes; 0 means end of file.
    /// The corresponding C function is `read`.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryOnInterrupt { _read(into: buffer) }.get()
    }

    /// Writes some of `buffer` and returns how many bytes were written.
    /// The corresponding C function is `write`.
    func write(_ buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try retryOnInterrupt { _write(buffer) }.get()
    }

    /// Writes all of `buffer`, looping over partial writes.
    func writeAll(_ buffer: UnsafeRawBufferPointer) throws(Errno) {
        var done = 0
        while done < buffer.count {
            done += try write(UnsafeRawBufferPointer(rebasing: buffer[done...]))
        }
    }

    func _read(into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        let n = system_read(rawValue, buffer.baseAddress, buffer.count)
        return n < 0 ? .failure(.current) : .success(n)
    }

    func _write(_ buffer: UnsafeRawBufferPointer) -> Result<Int, Errno> {
        let n = system_write(rawValue, buffer.baseAddress, buffer.count)
        return n < 0 ? .failure(.current) : .success(n)
    }
}

/// The wall clock, read once where "now" is needed (design §1: the shell reads clocks, the core
/// takes "now" as an argument). Sub-second part dropped (floor).
/// The corresponding C function is `clock_gettime(CLOCK_REALTIME)`.
func wallClockNow() -> WallInstant {
    var ts = timespec()
    _ = system_clock_gettime(CLOCK_REALTIME, &ts)
    return WallInstant(secondsSinceEpoch: Int64(ts.tv_sec))
}

// One-line shims: the only lines that call libc.
@inline(__always) func system_read(_ fd: Int32, _ buf: UnsafeMutableRawPointer?, _ n: Int) -> Int { read(fd, buf, n) }
@inline(__always) func system_write(_ fd: Int32, _ buf: UnsafeRawPointer?, _ n: Int) -> Int { write(fd, buf, n) }
@inline(__always) func system_clock_gettime(_ clock: clockid_t, _ ts: UnsafeMutablePointer<timespec>) -> Int32 {
    clock_gettime(clock, ts)
}
