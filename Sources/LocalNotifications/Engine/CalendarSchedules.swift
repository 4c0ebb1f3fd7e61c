// Calendar triggers' timers. Their next fires are computed from each request's match
// (NotificationEngine+Time.swift); this holds where they wait.
import TimingWheel

/// The calendar triggers' timing wheel, on wall seconds: held while the wall clock is untrusted,
/// rebuilt when it is stepped back, trust returns or the device zone changes.
struct CalendarSchedules {
    /// Slot numbers by their next fire, wall seconds since the epoch.
    var wheel = TimingWheel<Int32>()
}
