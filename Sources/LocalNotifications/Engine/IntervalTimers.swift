// Interval triggers' timers: monotonic, so wall-clock steps never move them.
import TimingWheel

/// The interval triggers' timing wheel, on monotonic milliseconds; a repeating interval fires at
/// anchor + k·interval (no drift).
struct IntervalTimers {
    /// Slot numbers by their next fire, monotonic milliseconds.
    var wheel = TimingWheel<Int32>()
}
