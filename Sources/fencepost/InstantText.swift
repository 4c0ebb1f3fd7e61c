// Instants as text: RFC 3339 timestamps in, UTC timestamps and durations out.
import CivilTime

enum InstantText {
    /// Parses an RFC 3339 timestamp: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`.
    ///
    /// `T`/`t` and `Z`/`z` are accepted in either case. A fraction is dropped (floor): calendar
    /// fires are whole seconds, and "strictly after 06:59:00.5" and "strictly after 06:59:00" have
    /// the same next whole second. Second 60 (a leap second) is read as the first second of the
    /// next minute, as POSIX time does.
    ///
    /// - Returns: the instant, or why the text is not such a timestamp.
    /// - Complexity: O(n).
    static func parse(_ text: some Collection<UInt8>) -> Result<WallInstant, InstantTextError> {
        let b = Array(text)
        var i = 0
        func digits(_ count: Int) -> Int? {
            guard b.count - i >= count else { return nil }
            var v = 0
            for _ in 0..<count {
                let d = b[i] &- UInt8(ascii: "0")
                guard d < 10 else { return nil }
                v = v * 10 + Int(d)
                i += 1
            }
            return v
        }
        func expect(_ c: UInt8...) -> Bool {
            guard i < b.count, c.contains(b[i]) else { return false }
            i += 1
            return true
        }
        let shape = InstantTextError.shape
        guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2), expect(UInt8(ascii: "-")),
              let day = digits(2), expect(UInt8(ascii: "T"), UInt8(ascii: "t")),
              let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2), expect(UInt8(ascii: ":")),
              let second = digits(2)
        else { return .failure(shape) }
        if expect(UInt8(ascii: ".")) {
            guard digits(1) != nil else { return .failure(shape) }
            while i < b.count, b[i] &- UInt8(ascii: "0") < 10 { i += 1 }
        }
        var offset = 0
        if expect(UInt8(ascii: "Z"), UInt8(ascii: "z")) {
        } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let oh = digits(2), expect(UInt8(ascii: ":")), let om = digits(2) else { return .failure(shape) }
            guard oh <= 23, om <= 59 else { return .failure(.range("offset")) }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return .failure(shape)
        }
        guard i == b.count else { return .failure(shape) }
        guard (1...12).contains(month) else { return .failure(.range("month")) }
        guard (1...CivilDays.daysInMonth(year: Int64(year), month: month)).contains(day) else {
            return .failure(.range("day"))
        }
        guard hour <= 23 else { return .failure(.range("hour")) }
        guard minute <= 59 else { return .failure(.range("minute")) }
        guard second <= 60 else { return .failure(.range("second")) }
        let local = CivilDateTime(year: Int64(year), month: month, day: day, hour: hour, minute: minute, second: second)
        return .success(WallInstant(secondsSinceEpoch: local.localSeconds - Int64(offset)))
    }

    /// Appends `YYYY-MM-DDTHH:MM:SSZ` (UTC) to `out` without building a String for years 0…9999.
    ///
    /// - Complexity: O(1).
    static func appendUTC(_ instant: WallInstant, to out: inout [UInt8]) {
        let c = CivilDateTime(localSeconds: instant.secondsSinceEpoch)
        guard (0...9999).contains(c.year) else {
            out.append(contentsOf: instant.description.utf8)
            return
        }
        @inline(__always) func two(_ v: Int) {
            out.append(UInt8(ascii: "0") + UInt8(v / 10)); out.append(UInt8(ascii: "0") + UInt8(v % 10))
        }
        let y = Int(c.year)
        two(y / 100); two(y % 100)
        out.append(UInt8(ascii: "-")); two(c.month)
        out.append(UInt8(ascii: "-")); two(c.day)
        out.append(UInt8(ascii: "T")); two(c.hour)
        out.append(UInt8(ascii: ":")); two(c.minute)
        out.append(UInt8(ascii: ":")); two(c.second)
        out.append(UInt8(ascii: "Z"))
    }

    /// A UTC offset as `+HH:MM` (or `+HH:MM:SS` when it has seconds, as some historical LMT
    /// offsets do).
    static func offset(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let a = abs(seconds)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let s = "\(sign)\(two(a / 3600)):\(two(a / 60 % 60))"
        return a % 60 == 0 ? s : s + ":\(two(a % 60))"
    }

    /// A duration the way a person reads it: `45s`, `3h 12min`, `2d 4h`, `1d 0h 0min 1s` is
    /// written `1d 1s` (zero units are left out). Negative or zero durations read `now`.
    static func duration(_ seconds: Int64) -> String {
        guard seconds > 0 else { return "now" }
        let parts: [(Int64, String)] = [
            (seconds / 86400, "d"), (seconds / 3600 % 24, "h"), (seconds / 60 % 60, "min"), (seconds % 60, "s"),
        ]
        return parts.filter { $0.0 != 0 }.map { "\($0.0)\($0.1)" }.joined(separator: " ")
    }

    static let weekdayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
}

/// Why a timestamp did not parse.
enum InstantTextError: Error, Equatable, CustomStringConvertible {
    /// Not of the form YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM).
    case shape
    /// A field out of range.
    case range(String)

    var description: String {
        switch self {
        case .shape: "expected a timestamp like 2026-03-08T06:59:00Z or 2026-03-08T01:59:00-05:00"
        case .range(let field): "\(field) out of range in timestamp"
        }
    }
}
