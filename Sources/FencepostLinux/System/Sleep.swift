// Sleeping (the pin test; the daemon never sleeps outside epoll_wait).
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

public enum Sleep {
    /// Sleeps `ms` milliseconds, resuming after signals. The corresponding C function is `nanosleep`.
    public static func milliseconds(_ ms: Int) throws(Errno) {
        var request = timespec(tv_sec: ms / 1000, tv_nsec: (ms % 1000) * 1_000_000)
        var remaining = timespec()
        try retryOnInterrupt { () -> Result<Void, Errno> in
            if nanosleep(&request, &remaining) == 0 { return .success(()) }
            request = remaining   // after EINTR, sleep what is left
            return .failure(Errno.current)
        }.get()
    }
}
