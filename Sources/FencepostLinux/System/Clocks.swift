// Clock reads: the shell reads clocks, the core takes "now" as an argument (design §1).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CivilTime

/// An instant on the wall clock (`CLOCK_REALTIME`) to the nanosecond: a clock reading or a
/// ``WallClockTimer`` deadline.
public struct RealtimeInstant: Hashable, Sendable {
    /// Whole seconds since the Unix epoch.
    public var seconds: Int64
    /// Nanoseconds within the second, 0 ..< 1_000_000_000.
    public var nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The whole second (floor), the unit the core works in.
    public var instant: WallInstant { WallInstant(secondsSinceEpoch: seconds) }
}

/// The two clocks of the agent: `CLOCK_BOOTTIME` for intervals (counts suspend, never set) and
/// `CLOCK_REALTIME` for calendar triggers (can be set at any time).
public enum SystemClocks {
    /// Nanoseconds since boot, including time suspended.
    /// The corresponding C function is `clock_gettime(CLOCK_BOOTTIME)`.
    public static func boottimeNow() -> MonotonicInstant {
        let ts = read(CLOCK_BOOTTIME)
        return MonotonicInstant(nanosecondsSinceBoot: UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec))
    }

    /// CPU time this thread has run, nanoseconds: beside a wall-time span it tells the thread's
    /// own work from time off the CPU (preempted, or waiting in the kernel, e.g. an fsync).
    /// The corresponding C function is `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`.
    public static func threadCPUNow() -> UInt64 {
        let ts = read(CLOCK_THREAD_CPUTIME_ID)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// The wall clock to the nanosecond.
    /// The corresponding C function is `clock_gettime(CLOCK_REALTIME)`.
    public static func realtimeNow() -> RealtimeInstant {
        let ts = read(CLOCK_REALTIME)
        return RealtimeInstant(seconds: Int64(ts.tv_sec), nanoseconds: Int32(ts.tv_nsec))
    }

    /// The wall clock, sub-second part dropped (floor).
    /// The corresponding C function is `clock_gettime(CLOCK_REALTIME)`.
    public static func wallNow() -> WallInstant { realtimeNow().instant }

    /// `clock_gettime` cannot fail for these two clocks with a valid pointer; a failure is a
    /// broken system, not a condition to handle.
    private static func read(_ clock: clockid_t) -> timespec {
        var ts = timespec()
        let r = system_clock_gettime(clock, &ts)
        precondition(r == 0, "clock_gettime(\(clock)) failed: \(Errno.current)")
        return ts
    }
}
