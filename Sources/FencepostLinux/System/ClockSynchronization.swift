// Whether the kernel's wall clock is disciplined (NTP), for the engine's clock trust.
import CFencepostLinux

extension SystemClocks {
    /// Whether the kernel reports the wall clock as synchronised (an NTP daemon — chrony,
    /// systemd-timesyncd — has disciplined it and STA_UNSYNC is clear). False when it cannot tell.
    /// The corresponding C function is `ntp_adjtime` (read-only: no mode bits set).
    public static func isWallClockSynchronized() -> Bool { cfl_clock_synchronized() == 1 }
}
