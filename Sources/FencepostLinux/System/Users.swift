// Users and groups: the control socket's owner and group.
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// Lookups of users and groups, and ownership of files.
public enum SystemUsers {
    /// This process's real user id. The corresponding C function is `getuid`.
    public static var currentUserID: UInt32 { getuid() }

    /// The id of group `name`, nil when there is no such group. The corresponding C function is `getgrnam_r`.
    public static func groupID(named name: String) -> UInt32? {
        var group = group()
        var result: UnsafeMutablePointer<group>? = nil
        var buffer = [CChar](repeating: 0, count: 16_384)
        let rc = getgrnam_r(name, &group, &buffer, buffer.count, &result)
        guard rc == 0, result != nil else { return nil }
        return group.gr_gid
    }

    /// Gives `path` to group `gid` (owner unchanged). The corresponding C function is `chown`.
    public static func setGroup(of path: String, to gid: UInt32) throws(Errno) {
        try retryOnInterrupt { chown(path, UInt32.max, gid) == 0 ? .success(()) : .failure(Errno.current) }.get()
    }
}
