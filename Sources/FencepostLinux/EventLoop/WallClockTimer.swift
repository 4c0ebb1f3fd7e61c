// The calendar timer of the agent: fires at a wall-clock instant and says when the clock was set.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux
import CivilTime

/// What a read of a ``WallClockTimer`` found.
public enum WallClockTimerEvent: Hashable, Sendable {
    /// The deadline passed (`count` expirations; 1 for a one-shot).
    case expired(UInt64)
    /// The wall clock was set (NTP step, GNSS time, `date -s`): every calendar deadline must be
    /// recomputed and the timer armed again (`ECANCELED` from `TFD_TIMER_CANCEL_ON_SET`).
    case clockWasSet
}

/// A one-shot timer on `CLOCK_REALTIME` armed at an absolute wall instant with
/// `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET` (design §1), so that a step of the wall clock
/// wakes the loop instead of leaving a calendar trigger early or late. Register ``descriptor``
/// for `.readable`; when ready, ``read()`` and arm again.
///
/// As with ``MonotonicTimer`` the deadline is cached and re-armed only when it changes; after
/// `.clockWasSet` or an expiry the cache is cleared, so the next ``arm(at:)`` always reaches the
/// kernel.
public final class WallClockTimer {
    private let timer: Timerfd
    /// The deadline the kernel holds, or nil when disarmed, spent, or cancelled by a clock set.
    public private(set) var deadline: RealtimeInstant?
    /// Whether the kernel may hold a deadline: after `.clockWasSet` it still does (``deadline`` is
    /// forgotten, the timer is not spent).
    private var kernelArmed = false

    /// The timerfd, to register with the event loop. Closed with the timer.
    public var descriptor: FileDescriptor { timer.descriptor }

    /// The corresponding C function is `timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC)`.
    public init() throws(Errno) {
        timer = try retryOnInterrupt { Timerfd._create(clock: CLOCK_REALTIME) }.get()
    }

    deinit { _ = timer.descriptor._close() }

    /// Fires at `deadline` (at once if it has passed), or reports `.clockWasSet` first if the
    /// clock is set meanwhile. Does nothing when that deadline is armed already.
    /// The corresponding C function is `timerfd_settime` with
    /// `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET`.
    public func arm(at deadline: RealtimeInstant) throws(Errno) {
        if self.deadline == deadline { return }
        try retryOnInterrupt {
            timer._arm(seconds: deadline.seconds, nanoseconds: deadline.nanoseconds, extraFlags: Int32(TFD_TIMER_CANCEL_ON_SET))
        }.get()
        self.deadline = deadline
        kernelArmed = true
    }

    /// Fires at the start of the wall second `instant`.
    public func arm(at instant: WallInstant) throws(Errno) {
        try arm(at: RealtimeInstant(seconds: instant.secondsSinceEpoch, nanoseconds: 0))
    }

    /// Stops the timer and forgets expirations not yet read; no system call when nothing is armed,
    /// so the loop may call it after every event.
    /// The corresponding C function is `timerfd_settime` with a zero time.
    public func disarm() throws(Errno) {
        guard kernelArmed else { return }
        try retryOnInterrupt { timer._disarm() }.get()
        deadline = nil
        kernelArmed = false
    }

    /// What happened since the last read: nil when nothing (not yet expired).
    /// The corresponding C function is `read` on the timerfd (`ECANCELED` = clock was set).
    public func read() throws(Errno) -> WallClockTimerEvent? {
        switch retryOnInterrupt({ timer._readExpirations() }) {
        case .success(0): return nil
        case .success(let count):
            deadline = nil
            kernelArmed = false
            return .expired(count)
        case .failure(.canceled):
            deadline = nil
            return .clockWasSet
        case .failure(let e): throw e
        }
    }
}
