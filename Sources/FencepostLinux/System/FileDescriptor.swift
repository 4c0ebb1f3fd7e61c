// A file descriptor and the calls every kind of descriptor shares: read, write, open, close, fcntl.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// A file descriptor: a plain value, as in swift-system. Whoever opens it closes it; the owning
/// types of the shell (``EventLoop``, ``MonotonicTimer``, ``SerialPort`` …) close theirs in `deinit`.
public struct FileDescriptor: Hashable, Sendable {
    /// The raw descriptor number.
    public var rawValue: Int32

    @inlinable
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let standardInput = FileDescriptor(rawValue: 0)
    public static let standardOutput = FileDescriptor(rawValue: 1)
    public static let standardError = FileDescriptor(rawValue: 2)

    /// Reads up to `buffer.count` bytes; 0 means end of file.
    /// The corresponding C function is `read`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryOnInterrupt { _read(into: buffer) }.get()
    }

    /// Writes some of `buffer` and returns how many bytes were written.
    /// The corresponding C function is `write`.
    public func write(_ buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try retryOnInterrupt { _write(buffer) }.get()
    }

    /// Writes all of `buffer`, looping over partial writes (for blocking descriptors).
    public func writeAll(_ buffer: UnsafeRawBufferPointer) throws(Errno) {
        var done = 0
        while done < buffer.count {
            done += try write(UnsafeRawBufferPointer(rebasing: buffer[done...]))
        }
    }

    /// Writes all of `text`'s UTF-8 bytes (a log line, a message on standard error).
    public func writeAll(_ text: String) throws(Errno) {
        var text = text
        try text.withUTF8 { bytes in Result { () throws(Errno) in try writeAll(UnsafeRawBufferPointer(bytes)) } }.get()
    }

    /// The whole content of the file at `path`: open, read to the end, close.
    public static func readFile(_ path: String) throws(Errno) -> [UInt8] {
        let fd = try openForReading(path)
        defer { try? fd.close() }
        return try fd.readToEnd()
    }

    /// The whole file, or `EFBIG` ("File too large") once more than `maximumBytes` were read —
    /// for files a person names, which may be a device or a pipe without end.
    /// With `regularOnly`, a file that is not a regular file (a device such as /dev/zero, a
    /// pipe) is `ENODEV`, and one whose size is over the bound is `EFBIG` before anything is read.
    /// The corresponding C functions are `open`, `fstat` and `read`.
    public static func readFile(_ path: String, maximumBytes: Int, regularOnly: Bool = false) throws(Errno) -> [UInt8] {
        let fd = try openForReading(path)
        defer { try? fd.close() }
        var expected = 0
        if regularOnly {
            let st = try fd.status()
            guard st.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else { throw Errno.notRegularFile }
            guard st.st_size <= maximumBytes else { throw Errno.fileTooLarge }
            expected = Int(st.st_size)
        }
        return try fd.readToEnd(maximumBytes: maximumBytes, expectedBytes: expected)
    }

    /// The file's type, size and times.
    /// The corresponding C function is `fstat`.
    public func status() throws(Errno) -> stat {
        var st = stat()
        try retryOnInterrupt { valueOrErrno(system_fstat(rawValue, &st)) }.get()
        return st
    }

    /// Opens `path` with `flags` (`O_…`) and, when creating, `mode` before the umask.
    /// The corresponding C function is `open`.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(Errno) -> FileDescriptor {
        try retryOnInterrupt { _open(path, flags, mode) }.get()
    }

    /// Opens `path` for reading.
    /// The corresponding C function is `open` with `O_RDONLY | O_CLOEXEC`.
    public static func openForReading(_ path: String) throws(Errno) -> FileDescriptor {
        try open(path, O_RDONLY | O_CLOEXEC)
    }

    /// Creates or truncates `path` for writing, mode 0644 before the umask.
    /// The corresponding C function is `open` with `O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC`.
    public static func createForWriting(_ path: String) throws(Errno) -> FileDescriptor {
        try open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode: 0o644)
    }

    /// Makes what was written durable (data and metadata).
    /// The corresponding C function is `fsync`.
    public func synchronize() throws(Errno) {
        try retryOnInterrupt { nothingOrErrno(system_fsync(rawValue)) }.get()
    }

    /// Closes the descriptor. Not retried on `EINTR` (Linux has released it already).
    /// The corresponding C function is `close`.
    public func close() throws(Errno) {
        try _close().get()
    }

    /// Sets or clears `O_NONBLOCK`. The corresponding C function is `fcntl` (`F_GETFL`, `F_SETFL`).
    public func setNonBlocking(_ on: Bool) throws(Errno) {
        try retryOnInterrupt { _setNonBlocking(on) }.get()
    }

    /// Reads to the end of the file.
    ///
    /// Each read(2) goes into one scratch buffer made once, and only the bytes it returned are
    /// appended: a file in /proc returns a page per read, and filling and trimming a 256 KiB
    /// chunk of the result for each of them cost 165 ms a read in a debug build (3.4 s for
    /// /proc/self/smaps, during which the agent's loop did not run).
    /// - Complexity: O(n) bytes copied once; at most one read(2) per 256 KiB.
    public func readToEnd(maximumBytes: Int = Int.max, expectedBytes: Int = 0) throws(Errno) -> [UInt8] {
        var out: [UInt8] = []
        // The size fstat gave, when known: one allocation instead of a doubling series (a read
        // past it still works; the file may have grown).
        if expectedBytes > 0 { out.reserveCapacity(min(expectedBytes, maximumBytes) + 1) }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
        defer { scratch.deallocate() }
        while true {
            if out.count > maximumBytes { throw Errno.fileTooLarge }
            let n = try read(into: scratch)
            if n == 0 { return out }
            // `append` grows the array geometrically (O(n) in all, not O(n²) for a large file).
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<n]))
        }
    }

    // MARK: Result layer

    func _read(into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        valueOrErrno(system_read(rawValue, buffer.baseAddress, buffer.count))
    }

    func _write(_ buffer: UnsafeRawBufferPointer) -> Result<Int, Errno> {
        valueOrErrno(system_write(rawValue, buffer.baseAddress, buffer.count))
    }

    static func _open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Result<FileDescriptor, Errno> {
        valueOrErrno(system_open(path, flags, mode)).map(FileDescriptor.init(rawValue:))
    }

    func _close() -> Result<Void, Errno> {
        nothingOrErrno(system_close(rawValue))
    }

    func _setNonBlocking(_ on: Bool) -> Result<Void, Errno> {
        valueOrErrno(system_fcntl(rawValue, F_GETFL, 0)).flatMap { flags in
            let wanted = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
            return wanted == flags ? .success(()) : nothingOrErrno(system_fcntl(rawValue, F_SETFL, wanted))
        }
    }
}
