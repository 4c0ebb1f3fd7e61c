// Replacing a file so that a crash or a power cut at any instant leaves either the old file or the
// new one, never a mix: write a temporary file next to it, fsync it, rename it over the target,
// fsync the folder. A failure on the way (the disk full, ENOSPC) removes the temporary file and
// leaves the old one untouched.

/// A file being written to replace `path` atomically.
public final class AtomicFile {
    public let path: String
    /// The temporary file: `path` + ".tmp-" + the process id.
    public let temporaryPath: String
    private var fd: FileDescriptor?
    /// Bytes written so far.
    public private(set) var written = 0

    /// Creates the temporary file (replacing a stale one of this process id).
    /// The corresponding C function is `open` with `O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC`.
    public init(replacing path: String) throws(FileError) {
        self.path = path
        temporaryPath = path + ".tmp-\(system_getpid())"
        do { fd = try FileDescriptor.createForWriting(temporaryPath) } catch {
            throw FileError(path: temporaryPath, operation: "open", errno: error)
        }
    }

    /// Appends `bytes`; on failure the temporary file is removed.
    /// The corresponding C function is `write`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        guard let fd else { throw FileError(path: temporaryPath, operation: "write", errno: Errno(rawValue: EBADF_VALUE)) }
        do { try fd.writeAll(bytes) } catch {
            abandon()
            throw FileError(path: temporaryPath, operation: "write", errno: error)
        }
        written += bytes.count
    }

    /// Makes the new content durable and puts it in place of `path`.
    /// The corresponding C functions are `fsync`, `close`, `rename`, then `open` + `fsync` of the folder.
    public func commit() throws(FileError) {
        guard let fd else { throw FileError(path: temporaryPath, operation: "commit", errno: Errno(rawValue: EBADF_VALUE)) }
        do { try fd.synchronize() } catch {
            abandon()
            throw FileError(path: temporaryPath, operation: "fsync", errno: error)
        }
        try? fd.close()
        self.fd = nil
        if system_rename(temporaryPath, path) != 0 {
            let e = Errno.current
            _ = system_unlink(temporaryPath)
            throw FileError(path: path, operation: "rename", errno: e)
        }
        // The rename itself must survive a power cut: fsync the folder.
        if let dir = try? FileDescriptor.openForReading(Directories.parent(of: path)) {
            try? dir.synchronize()
            try? dir.close()
        }
    }

    /// Removes the temporary file; the target stays as it was.
    public func abandon() {
        if let fd { try? fd.close() }
        fd = nil
        _ = system_unlink(temporaryPath)
    }

    deinit { if fd != nil { abandon() } }
}
