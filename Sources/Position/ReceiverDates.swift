// Dates as GNSS receivers report them, read against the date this source was built: two-digit
// years (NMEA RMC) and the GPS week rollover. As in gpsd (timebase.h: BUILD_CENTURY, BUILD_WEEK),
// the build's date is a constant in the source, moved forward at each release: a receiver on a
// board running this build can never truly report a date before it.
import CivilTime

/// Two-digit years and GPS week rollover, decided against the build's date.
public enum ReceiverDates {
    /// The build's date, 2026-11-26, as days since 1970-01-01. Move it forward at each release
    /// (a test checks that it is not in the future and tells when it is over a year old).
    public static let buildDay: Int64 = 20_783
    /// The build's year.
    public static let buildYear = 2026

    /// How far back from the build year a two-digit year may lie: a window of 100 years from
    /// `buildYear − 30` (1996 … 2095 for a 2026 build), so recorded logs of the late 1990s keep
    /// their century and 2080 is 2080, not 1980.
    public static let twoDigitYearsBack = 30

    /// The four-digit year of the two-digit `yy` (0 … 99): the one in
    /// `buildYear − twoDigitYearsBack ..< buildYear − twoDigitYearsBack + 100`.
    public static func year(twoDigit yy: Int) -> Int {
        let low = buildYear - twoDigitYearsBack
        let century = low - low % 100
        let candidate = century + yy
        return candidate < low ? candidate + 100 : candidate
    }

    /// 1024 weeks: the period of GPS's 10-bit week number.
    public static let rolloverSeconds: Int64 = 1024 * 7 * 86_400

    /// A receiver with the week-rollover bug reports a date 1024·k weeks in the past (old u-blox 6
    /// and SiRF firmware since April 2019). As gpsd does: a time before the build's date is moved
    /// forward by 1024 weeks until it is not. Returns the corrected time and how many periods were
    /// added (0: the time was left as it was). Times before the GPS epoch (1980-01-06, a receiver's
    /// default before its first fix) are left alone: they are no week-rollover date.
    /// - Complexity: O(1).
    public static func correctingWeekRollover(_ t: WallInstant) -> (time: WallInstant, periods: Int) {
        let build = buildDay * 86_400
        let s = t.secondsSinceEpoch
        guard s >= gpsEpoch, s < build else { return (t, 0) }
        let periods = (build - s + rolloverSeconds - 1) / rolloverSeconds
        return (WallInstant(secondsSinceEpoch: s + periods * rolloverSeconds), Int(periods))
    }

    /// 1980-01-06T00:00:00Z, the start of GPS week 0.
    public static let gpsEpoch: Int64 = 315_964_800
}
