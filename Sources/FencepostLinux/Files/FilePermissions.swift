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
