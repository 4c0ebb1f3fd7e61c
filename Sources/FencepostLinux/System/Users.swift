// Users and groups: the control socket's owner and group.
#if canImport(Glibc)
import Glibc
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

    /// Every group of user `uid` in the group database: its primary group and the supplementary
    /// ones (`adduser pi fencepost` adds a supplementary group). Throws `ENOENT` when there is no
    /// such user.
    /// The corresponding C functions are `getpwuid_r` and `getgrouplist`.
    public static func groupIDs(ofUser uid: UInt32) throws(Errno) -> [UInt32] {
        var user = passwd()
        var result: UnsafeMutablePointer<passwd>? = nil
        var buffer = [CChar](repeating: 0, count: 16_384)
        let rc = getpwuid_r(uid, &user, &buffer, buffer.count, &result)
        guard rc == 0 else { throw Errno(rawValue: rc) }
        guard result != nil, let name = user.pw_name else { throw Errno.noEntry }
        var count: Int32 = 32
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            let found = getgrouplist(name, user.pw_gid, &groups, &count)
            if found >= 0 { return Array(groups.prefix(Int(found))) }
            // -1: the array was too small and `count` now holds the size needed.
            guard count > Int32(groups.count), count <= 65_536 else { throw Errno.invalidArgument }
        }
    }

    /// Gives `path` to group `gid` (owner unchanged). The corresponding C function is `chown`.
    public static func setGroup(of path: String, to gid: UInt32) throws(Errno) {
        try retryOnInterrupt { chown(path, UInt32.max, gid) == 0 ? .success(()) : .failure(Errno.current) }.get()
    }
}
