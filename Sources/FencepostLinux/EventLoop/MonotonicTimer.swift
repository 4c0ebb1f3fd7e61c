// The interval timer of the agent: intervals, dwell, cooldown (design §1).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux
import CivilTime

/// A one-shot timer on `CLOCK_BOOTTIME` (counts time suspended, never set), armed at an absolute
/// deadline. Register ``descriptor`` with the ``EventLoop`` for `.readable`; when it is ready,
/// ``readExpirations()`` and arm the next deadline.
///
/// The deadline is cached: arming the deadline already armed makes no system call (swift-nio's
/// `SelectorEpoll` re-arms its timerfd only when the deadline moves), so the loop can call
/// ``arm(at:)`` with the timing wheel's next deadline after every event.
public final class MonotonicTimer {
    private let timer: Timerfd
    /// The deadline the kernel holds, or nil when disarmed or spent.
    public private(set) var deadline: MonotonicInstant?

    /// The timerfd, to register with the event loop. Closed with the timer.
    public var descriptor: FileDescriptor { timer.descriptor }

    /// The corresponding C function is `timerfd_create(CLOCK_BOOTTIME, TFD_NONBLOCK | TFD_CLOEXEC)`.
    public init() throws(Errno) {
        timer = try retryOnInterrupt { Timerfd._create(clock: CLOCK_BOOTTIME) }.get()
    }

    deinit { _ = timer.descriptor._close() }

    /// Fires at `deadline` (at once if it has passed). Does nothing when that deadline is armed
    /// already. Never fires early: the kernel expires an absolute timer at or after its time.
    /// The corresponding C function is `timerfd_settime` with `TFD_TIMER_ABSTIME`.
    public func arm(at deadline: MonotonicInstant) throws(Errno) {
        if self.deadline == deadline { return }
        let ns = deadline.nanosecondsSinceBoot
        try retryOnInterrupt {
            timer._arm(seconds: Int64(ns / 1_000_000_000), nanoseconds: Int32(ns % 1_000_000_000), extraFlags: 0)
        }.get()
        self.deadline = deadline
    }

    /// Stops the timer and forgets expirations not yet read; no system call when nothing is armed
    /// (disarmed, spent, or never armed), so the loop may call it after every event.
    /// The corresponding C function is `timerfd_settime` with a zero time.
    public func disarm() throws(Errno) {
        guard deadline != nil else { return }
        try retryOnInterrupt { timer._disarm() }.get()
        deadline = nil
    }

    /// How many times the timer expired since the last read: 0 (not yet) or 1 (one-shot).
    /// After an expiry the timer is spent: arm it again.
    /// The corresponding C function is `read` on the timerfd.
    public func readExpirations() throws(Errno) -> UInt64 {
        let count = try retryOnInterrupt { timer._readExpirations() }.get()
        if count > 0 { deadline = nil }
        return count
    }
}
