// Files for `fencepost replay`: open(2) and close(2), in the three layers of Syscalls.swift
// (documented method with a typed error → `_foo` returning Result → one-line libc shim), and
// whole-file reads over `FileDescriptor.read`.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension FileDescriptor {
    /// Opens `path` for reading.
    /// The corresponding C function is `open` with `O_RDONLY | O_CLOEXEC`.
    static func openForReading(_ path: String) throws(Errno) -> FileDescriptor {
        try retryOnInterrupt { _open(path, O_RDONLY | O_CLOEXEC, 0) }.get()
    }

    /// Creates or truncates `path` for writing, mode 0644 before the umask.
    /// The corresponding C function is `open` with `O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC`.
    static func createForWriting(_ path: String) throws(Errno) -> FileDescriptor {
        try retryOnInterrupt { _open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }.get()
    }

    /// Closes the descriptor. Not retried on `EINTR` (Linux has released it already).
    /// The corresponding C function is `close`.
    func close() throws(Errno) {
        try _close().get()
    }

    static func _open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Result<FileDescriptor, Errno> {
        let fd = system_open(path, flags, mode)
        return fd < 0 ? .failure(.current) : .success(FileDescriptor(rawValue: fd))
    }

    func _close() -> Result<Void, Errno> {
        system_close(rawValue) < 0 ? .failure(.current) : .success(())
    }

    /// Reads to the end of the file.
    /// - Complexity: O(n); one read(2) per 256 KiB.
    func readToEnd() throws(Errno) -> [UInt8] {
        var out: [UInt8] = []
        let chunk = 256 * 1024
        while true {
            let old = out.count
            out.reserveCapacity(old + chunk)
            var n = 0
            var failure: Errno? = nil
            out.append(contentsOf: repeatElement(0, count: chunk))
            out.withUnsafeMutableBytes { raw in
                do throws(Errno) { n = try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[old...])) } catch { failure = error }
            }
            out.removeLast(chunk - n)
            if let failure { throw failure }
            if n == 0 { return out }
        }
    }
}

extension Errno {
    static let noEntry = Errno(rawValue: ENOENT)
    static let accessDenied = Errno(rawValue: EACCES)
    static let notDirectory = Errno(rawValue: ENOTDIR)
    static let isDirectory = Errno(rawValue: EISDIR)
}

/// The whole content of the file at `path`.
///
/// - Throws: `ReplayFailure` with exit 66 when the file cannot be opened (missing, not
///   permitted, a directory) and 74 when reading it fails.
func readWholeFile(_ path: String, what: String) throws(ReplayFailure) -> [UInt8] {
    let fd: FileDescriptor
    do throws(Errno) { fd = try FileDescriptor.openForReading(path) } catch {
        throw ReplayFailure(66, "cannot open \(what) \(path): \(error)")
    }
    defer { try? fd.close() }
    do throws(Errno) { return try fd.readToEnd() } catch {
        if error == .isDirectory { throw ReplayFailure(66, "cannot read \(what) \(path): \(error)") }
        throw ReplayFailure(74, "cannot read \(what) \(path): \(error)")
    }
}

/// Writes `bytes` to a new file at `path` (replacing it).
func writeWholeFile(_ path: String, _ bytes: [UInt8], what: String) throws(ReplayFailure) {
    let fd: FileDescriptor
    do throws(Errno) { fd = try FileDescriptor.createForWriting(path) } catch {
        throw ReplayFailure(73, "cannot create \(what) \(path): \(error)")
    }
    do throws(Errno) {
        try bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try fd.writeAll(raw) } }.get()
        try fd.close()
    } catch {
        throw ReplayFailure(74, "cannot write \(what) \(path): \(error)")
    }
}

@inline(__always) func system_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
@inline(__always) func system_close(_ fd: Int32) -> Int32 { close(fd) }
