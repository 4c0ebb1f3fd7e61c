// A file mapped read-only (a zone set, a large GeoJSON being read): its pages come from the page
// cache and count as file-backed memory, which the kernel can drop and read again at any time —
// not as the process's own (anonymous) memory.
//
// A mapping sees what others write into the file: a `cp` over it changes bytes that were checked,
// and a truncation turns the pages past the new end into SIGBUS. A mapping made `guarded` holds a
// read lease on the file (fcntl F_SETLEASE): before another process opens it for writing or
// truncates it, the kernel signals this one (SIGIO) and holds the writer back until this process
// lets the file go (``isBeingReplaced`` then says so), at most /proc/sys/fs/lease-break-time
// (45 s by default). Renaming another file over the path (how every writer here replaces a file)
// needs no lease break: the mapping keeps the old file.
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
    /// The descriptor that holds the lease of a guarded mapping (nil otherwise).
    private let leaseHolder: FileDescriptor?
    /// Why a guarded mapping holds no lease — EACCES/EPERM: neither this process's file nor
    /// CAP_LEASE; EINVAL/ENOLCK: the file system or kernel offers none — nil when it holds one
    /// or was not asked to.
    public let unguardedBecause: Errno?

    /// Maps `path`; with `guarded`, first takes a read lease on it (see above).
    /// The corresponding C functions are `open`, `fcntl` (`F_SETLEASE`), `fstat`, `mmap` (`PROT_READ`,
    /// `MAP_PRIVATE`), `close`.
    /// - Throws: ``FileError`` naming the call that failed; for a guarded mapping, `F_SETLEASE` with
    ///   EAGAIN when another process has the file open for writing (it may change under a mapping).
    public init(path: String, guarded: Bool = false) throws(FileError) {
        self.path = path
        let fd: FileDescriptor
        do { fd = try FileDescriptor.openForReading(path) } catch { throw FileError(path: path, operation: "open", errno: error) }
        var keep = false
        defer { if !keep { try? fd.close() } }
        var unguarded: Errno? = nil
        if guarded && system_take_read_lease(fd.rawValue) != 0 {
            let e = Errno.current
            if e.rawValue == EAGAIN {
                throw FileError(path: path, operation: "F_SETLEASE", errno: e)
            }
            unguarded = e
        }
        let fileSize: off_t
        do { fileSize = try fd.status().st_size } catch { throw FileError(path: path, operation: "fstat", errno: error) }
        // A file larger than the address space (past 2 GiB on a 32-bit board) cannot be mapped: an
        // error naming it, not a trap in the conversion.
        guard let size = Int(exactly: fileSize), size <= Int.max / 2 else {
            throw FileError(path: path, operation: "mmap (\(fileSize) bytes: larger than this machine's address space)", errno: Errno(rawValue: EFBIG))
        }
        var start: UnsafeMutableRawPointer? = nil
        if size > 0 {
            guard let p = system_mmap_read(fd.rawValue, size) else { throw FileError(path: path, operation: "mmap", errno: .current) }
            start = p
        }
        bytes = UnsafeRawBufferPointer(start: start, count: size)
        keep = guarded && unguarded == nil
        leaseHolder = keep ? fd : nil
        unguardedBecause = unguarded
    }

    deinit {
        if let p = bytes.baseAddress { _ = system_munmap(UnsafeMutableRawPointer(mutating: p), bytes.count) }
        if let fd = leaseHolder {
            _ = system_release_lease(fd.rawValue)
            try? fd.close()
        }
    }

    /// Whether another process has asked to write or truncate the file (a guarded mapping's
    /// lease is being broken): the mapping must be let go now — that writer waits for it.
    /// The corresponding C function is `fcntl` (`F_GETLEASE`).
    public var isBeingReplaced: Bool {
        guard let fd = leaseHolder else { return false }
        return system_lease(fd.rawValue) != F_RDLCK_VALUE
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
