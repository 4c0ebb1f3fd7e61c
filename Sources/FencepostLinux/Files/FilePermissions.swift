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

    /// Whether users other than the owner and the group may read it (`S_IROTH`).
    public static func isReadableByOthers(_ path: String) throws(Errno) -> Bool {
        try mode(of: path) & 0o004 != 0
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
