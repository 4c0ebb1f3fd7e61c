// Who may read a file: a secret (a private key, a password file) that others can read is refused.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

public enum FilePermissions {
    /// The file's permission bits (`st_mode & 0o7777`), following symbolic links.
    /// The corresponding C function is `stat`.
    public static func mode(of path: String) throws(Errno) -> UInt32 {
        var st = stat()
        guard stat(path, &st) == 0 else { throw Errno(rawValue: errno) }
        return UInt32(st.st_mode) & 0o7777
    }

    /// Refuses a secret (a private key, a password file) that anyone but its owner may read or
    /// write: any group or other permission bit, as OpenSSH refuses a private key. The agent and
    /// `fencepost fleet` share this rule.
    public static func requirePrivate(_ path: String, what: String) throws(SecretFileError) {
        let bits: UInt32
        do { bits = try mode(of: path) } catch { throw SecretFileError(what: what, path: path, problem: .unreadable(error)) }
        if bits & 0o077 != 0 { throw SecretFileError(what: what, path: path, problem: .notPrivate(mode: bits & 0o777)) }
    }

    /// The first line of a private secret file (``requirePrivate(_:what:)``), e.g. a password: the
    /// bytes before the first CR or LF of at most 4 KiB.
    public static func readSecretFirstLine(_ path: String, what: String) throws(SecretFileError) -> String {
        try requirePrivate(path, what: what)
        let bytes: [UInt8]
        do { bytes = try FileDescriptor.readFile(path, maximumBytes: 4096) } catch {
            throw SecretFileError(what: what, path: path, problem: .unreadable(error))
        }
        return String(decoding: bytes.prefix { $0 != 0x0A && $0 != 0x0D }, as: UTF8.self)
    }
}

/// A secret file that cannot be used: "the key file /etc/fencepost/van.key can be read or
/// changed by others (mode 644): chmod 600 /etc/fencepost/van.key".
public struct SecretFileError: Error, CustomStringConvertible, Sendable {
    public enum Problem: Sendable {
        /// It cannot be read (stat or read failed).
        case unreadable(Errno)
        /// Group or other permission bits are set.
        case notPrivate(mode: UInt32)
    }

    /// What the file is ("the key file", "[fleet] password_file").
    public var what: String
    public var path: String
    public var problem: Problem

    public var isNotPrivate: Bool {
        if case .notPrivate = problem { true } else { false }
    }

    public var description: String {
        switch problem {
        case .unreadable(let e): "cannot read \(what) \(path): \(e)"
        case .notPrivate(let mode): "\(what) \(path) can be read or changed by others (mode \(String(mode, radix: 8))): chmod 600 \(path)"
        }
    }
}

public enum FileSystemSpace {
    /// Bytes an unprivileged user may still write on the file system holding `path`
    /// (`f_bavail × f_frsize`); nil when it cannot be read. The corresponding C function is `statvfs`.
    public static func available(at path: String) -> Int64? {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { return nil }
        return Int64(s.f_bavail) &* Int64(s.f_frsize)
    }
}
