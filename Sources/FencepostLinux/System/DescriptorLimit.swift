// The process's limit on open descriptors (RLIMIT_NOFILE): the agent sizes its connection cap
// below it, so that accepting a client never takes the last descriptors a commit or a hook needs.
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
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
}
