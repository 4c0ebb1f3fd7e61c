// The timerfd calls both timers share: create, arm at an absolute time, disarm, read expirations.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux

/// A timerfd, nonblocking and close-on-exec. Internal: the public faces are ``MonotonicTimer``
/// and ``WallClockTimer``, which fix the clock and the flags.
struct Timerfd {
    let descriptor: FileDescriptor

    /// The corresponding C function is `timerfd_create(clock, TFD_NONBLOCK | TFD_CLOEXEC)`.
    static func _create(clock: clockid_t) -> Result<Timerfd, Errno> {
        let flags = Int32(TFD_NONBLOCK) | Int32(TFD_CLOEXEC)
        return valueOrErrno(system_timerfd_create(clock, flags)).map { Timerfd(descriptor: FileDescriptor(rawValue: $0)) }
    }

    /// One-shot at the absolute time `seconds`.`nanoseconds` of the timer's clock. An all-zero
    /// time would disarm, so it becomes 1 ns (in the past: fires at once).
    ///
    /// Saturating: `time_t` is 32 bits on Debian 12 armhf, and a deadline past what it holds
    /// (2038-01-19T03:14:07Z on the wall clock, 68 years of boot time) is armed at the last second
    /// it holds instead of trapping in the conversion. The timer then fires there, and the caller,
    /// finding nothing due, arms again; on such a system the clock itself cannot be read past that
    /// second, so a 2040 calendar request simply waits.
    /// The corresponding C function is `timerfd_settime` with `TFD_TIMER_ABSTIME | extraFlags`.
    func _arm(seconds: Int64, nanoseconds: Int32, extraFlags: Int32) -> Result<Void, Errno> {
        var spec = itimerspec()
        spec.it_value.tv_sec = time_t(clamping: seconds)
        spec.it_value.tv_nsec = Int(nanoseconds)
        if seconds == 0 && nanoseconds == 0 { spec.it_value.tv_nsec = 1 }
        return nothingOrErrno(system_timerfd_settime(descriptor.rawValue, Int32(TFD_TIMER_ABSTIME) | extraFlags, &spec))
    }

    /// Disarms, and clears any expirations not yet read.
    /// The corresponding C function is `timerfd_settime` with a zero time.
    func _disarm() -> Result<Void, Errno> {
        var spec = itimerspec()
        return nothingOrErrno(system_timerfd_settime(descriptor.rawValue, 0, &spec))
    }

    /// The number of expirations since the last read; 0 when none (`EAGAIN`).
    /// The corresponding C function is `read` of 8 bytes.
    func _readExpirations() -> Result<UInt64, Errno> {
        var count: UInt64 = 0
        let result = withUnsafeMutableBytes(of: &count) { descriptor._read(into: $0) }
        switch result {
        case .success(let n):
            precondition(n == 8, "timerfd read returned \(n) bytes")
            return .success(count)
        case .failure(.wouldBlock): return .success(0)
        case .failure(let e): return .failure(e)
        }
    }
}
