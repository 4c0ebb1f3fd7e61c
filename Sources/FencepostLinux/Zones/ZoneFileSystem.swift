#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// The file system calls zone loading needs, in three layers (swift-system's pattern): internal
/// `_…` functions returning `Result<_, Errno>`, built on one-line shims that alone touch libc.
/// `EINTR` is retried by the shell's one helper, `retryOnInterrupt`.
enum ZoneFileSystem {
    /// Largest file read; real TZif files are under 200 KB.
    static let maximumFileSize = 16 << 20

    // MARK: Operations

    /// The whole contents of a regular file (at most ``maximumFileSize`` bytes; larger is `EFBIG`),
    /// with the file's identity for cache validation. The corresponding C functions are `open`,
    /// `fstat`, `read` and `close`.
    static func _readFile(path: String) -> Result<(bytes: [UInt8], identity: FileIdentity), Errno> {
        let fd: Int32
        switch retryOnInterrupt({ valueOrErrno(system_open(path, O_RDONLY | O_CLOEXEC)) }) {
        case .success(let v): fd = v
        case .failure(let e): return .failure(e)
        }
        defer { _ = system_close(fd) }  // close is not retried: Linux releases the descriptor anyway
        var st = stat()
        if case .failure(let e) = retryOnInterrupt({ valueOrErrno(system_fstat(fd, &st)) }) { return .failure(e) }
        if (st.st_mode & mode_t(S_IFMT)) == mode_t(S_IFDIR) { return .failure(Errno.isDirectory) }
        // Compared as they are: `Int(st_size)` would trap on a 32-bit machine for a file past 2 GiB.
        guard st.st_size <= maximumFileSize else { return .failure(Errno(rawValue: EFBIG)) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(Int(st.st_size), 4096) + 1)
        while true {
            let n: Int
            switch retryOnInterrupt({ valueOrErrno(chunk.withUnsafeMutableBytes { system_read(fd, $0.baseAddress, $0.count) }) }) {
            case .success(let v): n = v
            case .failure(let e): return .failure(e)
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[..<n])
            if bytes.count > maximumFileSize { return .failure(Errno(rawValue: EFBIG)) }
        }
        return .success((bytes, FileIdentity(st)))
    }

    /// Up to `count` bytes from the start of a file (`open`, `read`, `close`).
    static func _readPrefix(path: String, count: Int) -> Result<[UInt8], Errno> {
        let fd: Int32
        switch retryOnInterrupt({ valueOrErrno(system_open(path, O_RDONLY | O_CLOEXEC)) }) {
        case .success(let v): fd = v
        case .failure(let e): return .failure(e)
        }
        defer { _ = system_close(fd) }
        var buffer = [UInt8](repeating: 0, count: count)
        return retryOnInterrupt({ valueOrErrno(buffer.withUnsafeMutableBytes { system_read(fd, $0.baseAddress, $0.count) }) })
            .map { n in Array(buffer[..<n]) }
    }

    /// The identity of the file a path leads to (symlinks followed). The corresponding C function
    /// is `stat`.
    static func _identity(path: String) -> Result<FileIdentity, Errno> {
        var st = stat()
        return retryOnInterrupt({ valueOrErrno(system_stat(path, &st)) }).map { _ in FileIdentity(st) }
    }

    /// The target of a symbolic link, as written in the link. The corresponding C function is
    /// `readlink`.
    static func _readLink(path: String) -> Result<String, Errno> {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.count
        return retryOnInterrupt({ valueOrErrno(buffer.withUnsafeMutableBufferPointer { system_readlink(path, $0.baseAddress!, count - 1) }) })
            .map { n in String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    }

    /// Kind of a directory entry, symlinks followed.
    enum EntryKind { case directory, regularFile, other }

    /// The entries of a directory except `.` and `..`, sorted, with their kinds (symlinks
    /// followed; a dangling link is `.other`). The corresponding C functions are `opendir`,
    /// `readdir`, `closedir` and `stat`.
    static func _listDirectory(path: String) -> Result<[(name: String, kind: EntryKind, identity: FileIdentity?)], Errno> {
        guard let dir = system_opendir(path) else { return .failure(Errno.current) }
        defer { _ = system_closedir(dir) }
        var names: [String] = []
        while let entry = system_readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        names.sort()
        return .success(names.map { name in
            var st = stat()
            guard system_stat(path + "/" + name, &st) == 0 else { return (name, .other, nil) }
            let kind: EntryKind = switch st.st_mode & mode_t(S_IFMT) {
            case mode_t(S_IFDIR): .directory
            case mode_t(S_IFREG): .regularFile
            default: .other
            }
            return (name, kind, FileIdentity(st))
        })
    }

    // MARK: Shims (the only code that calls libc)

    static func system_open(_ path: String, _ flags: Int32) -> Int32 { open(path, flags) }
    static func system_close(_ fd: Int32) -> Int32 { close(fd) }
    static func system_read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
    static func system_fstat(_ fd: Int32, _ st: inout stat) -> Int32 { fstat(fd, &st) }
    static func system_stat(_ path: String, _ st: inout stat) -> Int32 { stat(path, &st) }
    static func system_readlink(_ path: String, _ buffer: UnsafeMutablePointer<CChar>, _ size: Int) -> Int {
        readlink(path, buffer, size)
    }
    static func system_opendir(_ path: String) -> OpaquePointer? { opendir(path) }
    static func system_readdir(_ dir: OpaquePointer) -> UnsafeMutablePointer<dirent>? { readdir(dir) }
    static func system_closedir(_ dir: OpaquePointer) -> Int32 { closedir(dir) }
}

/// Device, inode, size and modification time: enough to notice that a zone file was replaced.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modifiedSeconds: Int64
    var modifiedNanoseconds: Int64

    init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        modifiedSeconds = Int64(st.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(st.st_mtim.tv_nsec)
    }
}
