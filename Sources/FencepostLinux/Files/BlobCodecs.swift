// SHA-256 (libcrypto) and gzip (zlib) for blobs through the fleet's broker, and the blob file a
// board downloads into. Both libraries are loaded at first use (CFencepostLinux's
// blob_codecs_loader.c): libcrypto is the one libmosquitto maps already; zlib is Debian's zlib1g.
// Nothing else in the shell calls them.
import CFencepostLinux
import Fleet
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a codec call failed: what, and the library's word for it.
public struct BlobCodecError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// SHA-256 by libcrypto's EVP interface (one EVP_MD_CTX, reused after each digest).
public final class SHA256: SHA256Hashing {
    private let context: UnsafeMutableRawPointer

    /// Loads libcrypto (once) and makes a context. The corresponding C functions are
    /// `EVP_MD_CTX_new` and `EVP_DigestInit_ex(EVP_sha256())`.
    public init() throws(BlobCodecError) {
        if let why = cfl_crypto_load() { throw BlobCodecError("SHA-256: \(String(cString: why))") }
        guard let c = cfl_sha256_new() else { throw BlobCodecError("SHA-256: EVP_MD_CTX_new or EVP_DigestInit_ex failed") }
        context = c
    }

    deinit { cfl_sha256_free(context) }

    /// The corresponding C function is `EVP_DigestUpdate`.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let rc = cfl_sha256_update(context, base, bytes.count)
        precondition(rc == 0, "EVP_DigestUpdate failed on an initialised SHA-256 context")
    }

    /// The corresponding C functions are `EVP_DigestFinal_ex`, then `EVP_DigestInit_ex`.
    public func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        let rc = out.withUnsafeMutableBufferPointer { cfl_sha256_final(context, $0.baseAddress) }
        precondition(rc == 0, "EVP_DigestFinal_ex failed on an initialised SHA-256 context")
        return out
    }

    /// The SHA-256 of `bytes` in lowercase hex.
    public static func hex(_ bytes: [UInt8]) throws(BlobCodecError) -> String {
        var h = try SHA256()
        return FleetHex.encode(h.digest(of: bytes))
    }
}

/// gzip files through zlib's gz* interface, in pieces of `piece` bytes (bounded memory).
public enum Gzip {
    static let piece = 1 << 16

    private static func load() throws(BlobCodecError) {
        if let why = cfl_zlib_load() { throw BlobCodecError("gzip: \(String(cString: why))") }
    }

    private static func error(_ file: UnsafeMutableRawPointer, _ what: String) -> BlobCodecError {
        var code: Int32 = 0
        let text = cfl_gz_error(file, &code).map { String(cString: $0) } ?? "zlib error"
        return BlobCodecError("\(what): \(text) (zlib \(code))")
    }

    /// Compresses `source` into `destination` (replaced atomically), level 1–9; returns the
    /// uncompressed byte count. The corresponding C functions are `gzopen`, `gzwrite`, `gzclose`.
    @discardableResult
    public static func compress(_ source: String, to destination: String, level: Int = 6) throws(BlobCodecError) -> Int {
        try load()
        let input: FileDescriptor
        do { input = try FileDescriptor.openForReading(source) } catch { throw BlobCodecError("\(source): \(error)") }
        defer { try? input.close() }
        let temporary = destination + ".tmp-\(system_getpid())"
        guard let out = cfl_gz_open(temporary, "wb\(max(1, min(9, level)))") else {
            throw BlobCodecError("\(temporary): gzopen failed: \(Errno.current)")
        }
        var total = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: piece, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n: Int
            do { n = try input.read(into: buffer) } catch {
                _ = cfl_gz_close(out); _ = system_unlink(temporary)
                throw BlobCodecError("\(source): read: \(error)")
            }
            if n == 0 { break }
            let w = cfl_gz_write(out, buffer.baseAddress, UInt32(n))
            guard w == Int32(n) else {
                let e = error(out, "\(temporary): gzwrite")
                _ = cfl_gz_close(out); _ = system_unlink(temporary)
                throw e
            }
            total += n
        }
        guard cfl_gz_close(out) == 0 else { _ = system_unlink(temporary); throw BlobCodecError("\(temporary): gzclose failed") }
        guard system_rename(temporary, destination) == 0 else {
            let e = Errno.current
            _ = system_unlink(temporary)
            throw BlobCodecError("\(destination): rename: \(e)")
        }
        return total
    }

    /// Decompresses the gzip file `source` into `destination` (replaced atomically through
    /// AtomicFile); a file that is not gzip, is cut short or is corrupt is refused, as is one
    /// that grows past `maximumBytes`. Returns the uncompressed byte count. The corresponding C
    /// functions are `gzopen`, `gzread`, `gzdirect`, `gzclose`.
    @discardableResult
    public static func decompress(_ source: String, to destination: String, maximumBytes: Int = Int.max) throws(BlobCodecError) -> Int {
        try load()
        guard let file = cfl_gz_open(source, "rb") else { throw BlobCodecError("\(source): gzopen failed: \(Errno.current)") }
        let out: AtomicFile
        do { out = try AtomicFile(replacing: destination) } catch {
            _ = cfl_gz_close(file)
            throw BlobCodecError("\(destination): \(error)")
        }
        var total = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: piece, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = cfl_gz_read(file, buffer.baseAddress, UInt32(piece))
            if n < 0 {
                let e = error(file, "\(source): gzread")
                _ = cfl_gz_close(file); out.abandon()
                throw e
            }
            if total == 0 && n > 0 && cfl_gz_direct(file) != 0 {
                _ = cfl_gz_close(file); out.abandon()
                throw BlobCodecError("\(source): not a gzip file")
            }
            if n == 0 { break }
            total += Int(n)
            guard total <= maximumBytes else {
                _ = cfl_gz_close(file); out.abandon()
                throw BlobCodecError("\(source): more than \(maximumBytes) bytes once decompressed")
            }
            do { try out.write(UnsafeRawBufferPointer(rebasing: buffer[0..<Int(n)])) } catch {
                _ = cfl_gz_close(file)
                throw BlobCodecError("\(destination): \(error)")
            }
        }
        let rc = cfl_gz_close(file)
        guard rc == 0 else {
            out.abandon()
            throw BlobCodecError("\(source): " + (rc == -5 ? "cut short (the gzip stream does not end)" : "corrupt (gzclose \(rc))"))
        }
        do { try out.commit() } catch { throw BlobCodecError("\(destination): \(error)") }
        return total
    }
}

/// The file a board downloads a blob into: preallocated to its size, written one chunk at a
/// time at its offset, read back one chunk at a time. Each call moves at most one chunk
/// (≤ 64 KiB): bounded work for a loop turn.
public final class BlobFile {
    public let path: String
    private let fd: FileDescriptor

    /// Opens (creating) `path` and gives it `size` bytes on disk. The corresponding C functions
    /// are `open` and `posix_fallocate`.
    public init(path: String, size: Int) throws(BlobCodecError) {
        self.path = path
        do { fd = try FileDescriptor.open(path, O_RDWR | O_CREAT | O_CLOEXEC, mode: 0o600) } catch {
            throw BlobCodecError("\(path): open: \(error)")
        }
        let rc = posix_fallocate(fd.rawValue, 0, off_t(size))
        if rc != 0 {
            try? fd.close()
            throw BlobCodecError("\(path): posix_fallocate of \(size) bytes: \(Errno(rawValue: rc))")
        }
    }

    deinit { try? fd.close() }

    /// The corresponding C function is `pwrite`.
    public func write(_ bytes: [UInt8], at offset: Int) throws(BlobCodecError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(fd.rawValue, $0.baseAddress! + done, $0.count - done, off_t(offset + done)) }
            if n < 0 {
                let e = Errno.current
                if e == .interrupted { continue }
                throw BlobCodecError("\(path): pwrite at \(offset + done): \(e)")
            }
            done += n
        }
    }

    /// The corresponding C function is `pread`.
    public func read(_ length: Int, at offset: Int) throws(BlobCodecError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let n = out.withUnsafeMutableBytes { pread(fd.rawValue, $0.baseAddress! + done, length - done, off_t(offset + done)) }
            if n < 0 {
                let e = Errno.current
                if e == .interrupted { continue }
                throw BlobCodecError("\(path): pread at \(offset + done): \(e)")
            }
            if n == 0 { break }
            done += n
        }
        if done < length { out.removeLast(length - done) }
        return out
    }

    /// Removes `path` (no error when it is not there). The corresponding C function is `unlink`.
    public static func remove(_ path: String) { _ = system_unlink(path) }

    /// Renames `path` to `destination` (replacing it); false when it could not. The corresponding
    /// C function is `rename`.
    public static func rename(_ path: String, to destination: String) -> Bool { system_rename(path, destination) == 0 }

    /// The bytes the file at `path` holds on disk (0 when there is none).
    /// The corresponding C function is `stat`.
    public static func allocatedBytes(_ path: String) -> Int {
        var s = stat()
        guard stat(path, &s) == 0 else { return 0 }
        return Int(s.st_blocks) * 512
    }

    /// Makes the written chunks durable. The corresponding C function is `fsync`.
    public func synchronize() throws(BlobCodecError) {
        do { try fd.synchronize() } catch { throw BlobCodecError("\(path): fsync: \(error)") }
    }
}

/// The operator's side: a gzip file's manifest and chunks.
public enum BlobPacking {
    /// The manifest of the compressed bytes `blob` cut in `chunkSize` pieces.
    public static func manifest(of blob: [UInt8], chunkSize: Int = BlobManifest.maximumChunkSize, rawSize: Int?) throws(BlobCodecError) -> BlobManifest {
        var h = try SHA256()
        var hashes: [[UInt8]] = []
        var offset = 0
        while offset < blob.count {
            let end = min(blob.count, offset + chunkSize)
            blob.withUnsafeBytes { h.update(UnsafeRawBufferPointer(rebasing: $0[offset..<end])) }
            hashes.append(h.finish())
            offset = end
        }
        let whole = h.digest(of: blob)
        return BlobManifest(sha256: FleetHex.encode(whole), size: blob.count, chunkSize: chunkSize, chunkSHA256: hashes, rawSize: rawSize)
    }
}
