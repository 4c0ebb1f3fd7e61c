// Whole-file reads and writes for `fencepost replay`, over FencepostLinux's `FileDescriptor`.
import FencepostLinux

/// The whole content of the file at `path`.
///
/// - Throws: `ReplayFailure` with exit 66 when the file cannot be opened (missing, not
///   permitted, a directory) and 74 when reading it fails.
func readWholeFile(_ path: String, what: String, maximumBytes: Int = 1 << 30) throws(ReplayFailure) -> [UInt8] {
    let fd: FileDescriptor
    do throws(Errno) { fd = try FileDescriptor.openForReading(path) } catch {
        throw ReplayFailure(66, "cannot open \(what) \(path): \(error)")
    }
    defer { try? fd.close() }
    do throws(Errno) { return try fd.readToEnd(maximumBytes: maximumBytes) } catch {
        if error == .fileTooLarge { throw ReplayFailure(65, "cannot read \(what) \(path): larger than \(maximumBytes >> 20) MiB (the most read; is it the right file?)") }
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
