// Whether calendar triggers may fire: the wall clock is trusted when the shell says it is synced
// or GNSS time agrees with it, and it is plausible (NotificationEngine+Time.swift, `observe`).

/// The last clock reading seen and the wall clock's trust.
struct ClockTrust {
    /// The reading of the previous call, to see the wall clock stepped back.
    var lastClock: EngineClock?
    /// Whether the wall clock is trusted now (the shell's word or GNSS agreement, and plausible).
    var wallTrusted = false
    /// Whether GNSS time agreed with the wall clock since the last step.
    var gnssAgreed = false
}
