// The process's limit on open descriptors (RLIMIT_NOFILE): the agent sizes its connection cap
// below it, so that accepting a client never takes the last descriptors a commit or a hook needs.
#if canImport(Glibc)
import Glibc
#endif

/// The open-descriptor limit.
public enum DescriptorLimit {
    /// The soft limit on open descriptors, nil when it cannot be read or is unlimited.
    /// The corresponding C function is `getrlimit(RLIMIT_NOFILE)`.
    public static var soft: Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// The number of descriptors this process has open now (entries of `/proc/self/fd`, less the
    /// one used to list them); nil without /proc.
    /// The corresponding C functions are `opendir`, `readdir` and `closedir`.
    public static var openCount: Int? {
        guard let dir = opendir("/proc/self/fd") else { return nil }
        defer { closedir(dir) }
        var n = 0
        while let entry = readdir(dir) {
            let first = withUnsafeBytes(of: entry.pointee.d_name) { $0[0] }
            if first != UInt8(ascii: ".") { n += 1 }
        }
        return n - 1
    }
}
