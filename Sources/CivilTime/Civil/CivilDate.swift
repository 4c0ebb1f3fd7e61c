/// Proleptic Gregorian civil-date arithmetic on day numbers (days since 1970-01-01).
///
/// The conversions are Howard Hinnant's `days_from_civil` / `civil_from_days`
/// (http://howardhinnant.github.io/date_algorithms.html), written here from the published
/// derivation: branch-free, exact for every `Int64` day in range, O(1). Days of years −32,800 …
/// about 2.9 million take Neri and Schneider's civil-from-days instead ("Euclidean affine
/// functions and their application to calendar algorithms", 2022): the same answers in 32-bit
/// unsigned multiplications and shifts, with no signed division (the hot path of every next fire).
public enum CivilDays {
    /// Day number (days since 1970-01-01) of a proleptic Gregorian date.
    /// `month` is 1...12, `day` 1...31 (not checked: day 0 or 32 yield the neighbouring days).
    @inlinable
    public static func dayNumber(year: Int64, month: Int, day: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400                                        // [0, 399]
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1  // [0, 365]
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy                  // [0, 146096]
        return era * 146097 + doe - 719468
    }

    /// The proleptic Gregorian date of a day number.
    @inlinable
    @inline(__always)
    public static func date(dayNumber z0: Int64) -> (year: Int64, month: Int, day: Int) {
        // Shifted by 82 eras (32,800 years) so that every day from −32800-03-01 on is an unsigned
        // count; 4·n + 3 must stay below 2^32.
        if _fastPath(z0 >= -12_699_422 && z0 < 1_000_000_000) {
            let n = UInt32(truncatingIfNeeded: z0 &+ 12_699_422)
            let n1 = 4 &* n &+ 3
            let century = n1 / 146_097
            let n2 = (n1 % 146_097) | 3                                  // 4 · (day of century) + 3
            let p2 = UInt64(2_939_745) &* UInt64(n2)
            let yearOfCentury = UInt32(truncatingIfNeeded: p2 &>> 32)
            let dayOfYear = UInt32(truncatingIfNeeded: p2) / 11_758_980  // from March 1st
            let n3 = 2141 &* dayOfYear &+ 197_913
            let month = Int(n3 &>> 16), day = Int((n3 & 0xFFFF) / 2141) + 1
            let january = dayOfYear >= 306
            let year = Int64(100 &* century &+ yearOfCentury) - 32_800 + (january ? 1 : 0)
            return (year, january ? month - 12 : month, day)
        }
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097                                      // [0, 146096]
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365 // [0, 399]
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)               // [0, 365]
        let mp = (5 * doy + 2) / 153                                    // [0, 11]
        let d = Int(doy - (153 * mp + 2) / 5 + 1)                       // [1, 31]
        let m = Int(mp < 10 ? mp + 3 : mp - 9)                          // [1, 12]
        return (m <= 2 ? y + 1 : y, m, d)
    }

    /// Weekday of a day number, 1 = Sunday … 7 = Saturday (Foundation's numbering).
    @inlinable
    public static func weekday(dayNumber: Int64) -> Int {
        // 1970-01-01 was a Thursday (5).
        let r = (dayNumber + 4) % 7
        return Int(r < 0 ? r + 7 : r) + 1
    }

    @inlinable
    public static func isLeapYear(_ y: Int64) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    /// Days in a month of a year (month 1...12).
    @inlinable
    public static func daysInMonth(year: Int64, month: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    @inlinable
    public static func daysInYear(_ y: Int64) -> Int { isLeapYear(y) ? 366 : 365 }
}

/// Floor division and modulo for `Int64` (the result of `mod` has the sign of the divisor).
@inlinable
func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}

@inlinable
func floorMod(_ a: Int64, _ b: Int64) -> Int64 {
    let r = a % b
    return r != 0 && (r < 0) != (b < 0) ? r + b : r
}

/// A civil (wall-clock) date and time with no zone: what a clock on the wall shows.
public struct CivilDateTime: Hashable, Comparable, Sendable {
    public var year: Int64
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    @inlinable
    public init(year: Int64, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.year = year; self.month = month; self.day = day
        self.hour = hour; self.minute = minute; self.second = second
    }

    /// The civil time `localSeconds` seconds after 1970-01-01T00:00:00 (local seconds are civil
    /// time counted as if the zone were UTC).
    @inlinable
    public init(localSeconds s: Int64) {
        let days = floorDiv(s, 86400)
        let sod = Int(s - days * 86400)
        let (y, m, d) = CivilDays.date(dayNumber: days)
        self.init(year: y, month: m, day: d, hour: sod / 3600, minute: (sod / 60) % 60, second: sod % 60)
    }

    /// Civil time as seconds after 1970-01-01T00:00:00 of the same (unnamed) zone.
    @inlinable
    public var localSeconds: Int64 {
        CivilDays.dayNumber(year: year, month: month, day: day) * 86400
            + Int64(hour * 3600 + minute * 60 + second)
    }

    @inlinable
    public static func < (a: CivilDateTime, b: CivilDateTime) -> Bool { a.localSeconds < b.localSeconds }

    /// `YYYY-MM-DDTHH:MM:SS` (years outside 0...9999 get a sign and more digits).
    public var iso8601: String {
        func pad(_ v: Int64, _ w: Int) -> String {
            let s = String(v < 0 ? -v : v)
            return (v < 0 ? "-" : "") + String(repeating: "0", count: max(0, w - s.count)) + s
        }
        return "\(pad(year, 4))-\(pad(Int64(month), 2))-\(pad(Int64(day), 2))T"
            + "\(pad(Int64(hour), 2)):\(pad(Int64(minute), 2)):\(pad(Int64(second), 2))"
    }
}
