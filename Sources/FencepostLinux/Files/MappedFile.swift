// A file mapped read-only (a zone set, a large GeoJSON being read): its pages come from the page
// cache and count as file-backed memory, which the kernel can drop and read again at any time —
// not as the process's own (anonymous) memory.
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// A whole file mapped read-only, unmapped when the value goes.
public final class MappedFile {
    /// The file's bytes (empty for an empty file). Valid while this object lives.
    public let bytes: UnsafeRawBufferPointer
    public let path: String

    /// Maps `path`.
    /// The corresponding C functions are `open`, `fstat`, `mmap` (`PROT_READ`, `MAP_PRIVATE`), `close`.
    /// - Throws: ``FileError`` naming the call that failed.
    public init(path: String) throws(FileError) {
        self.path = path
        let fd: FileDescriptor
        do { fd = try FileDescriptor.openForReading(path) } catch { throw FileError(path: path, operation: "open", errno: error) }
        defer { try? fd.close() }
        let fileSize: off_t
        do { fileSize = try fd.status().st_size } catch { throw FileError(path: path, operation: "fstat", errno: error) }
        // A file larger than the address space (past 2 GiB on a 32-bit board) cannot be mapped: an
        // error naming it, not a trap in the conversion.
        guard let size = Int(exactly: fileSize), size <= Int.max / 2 else {
            throw FileError(path: path, operation: "mmap (\(fileSize) bytes: larger than this machine's address space)", errno: Errno(rawValue: EFBIG))
        }
        if size == 0 {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let p = system_mmap_read(fd.rawValue, Int(size)) else { throw FileError(path: path, operation: "mmap", errno: .current) }
        bytes = UnsafeRawBufferPointer(start: p, count: Int(size))
    }

    deinit {
        if let p = bytes.baseAddress { _ = system_munmap(UnsafeMutableRawPointer(mutating: p), bytes.count) }
    }

    /// Lets the kernel drop the mapping's pages from this process's resident set (they are read
    /// again from the page cache or the file when touched): after a pass over the whole file, such
    /// as a checksum, the process keeps only what it uses.
    /// The corresponding C function is `madvise` with `MADV_DONTNEED`.
    public func dropResidentPages() { dropResidentPages(upTo: bytes.count) }

    /// As ``dropResidentPages()``, for the whole pages before `offset` (a reader that streams
    /// through the file lets go of what it has read).
    public func dropResidentPages(upTo offset: Int) {
        guard let p = bytes.baseAddress else { return }
        let page = 4096 * 16
        let end = min(offset, bytes.count) / page * page
        guard end > 0 else { return }
        _ = system_madvise(UnsafeMutableRawPointer(mutating: p), end, MADV_DONTNEED_VALUE)
    }

    /// As ``dropResidentPages()``, for the pages that hold bytes `offset ..< offset + length`
    /// (widened to whole pages: a page dropped too many is read again when touched).
    public func dropResidentPages(offset: Int, length: Int) {
        guard let p = bytes.baseAddress, length > 0, offset < bytes.count else { return }
        let page = 4096
        let start = max(0, offset) / page * page
        let end = min(bytes.count, offset + length)
        _ = system_madvise(UnsafeMutableRawPointer(mutating: p + start), end - start, MADV_DONTNEED_VALUE)
    }
}

/// A failed file operation: the path, the C function and its `errno`.
public struct FileError: Error, Hashable, Sendable, CustomStringConvertible {
    public var path: String
    public var operation: String
    public var errno: Errno

    public init(path: String, operation: String, errno: Errno) {
        self.path = path; self.operation = operation; self.errno = errno
    }

    public var description: String { "\(path): \(operation): \(errno)" }
}
