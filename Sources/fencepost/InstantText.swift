// Instants as text: RFC 3339 timestamps in, UTC timestamps and durations out.
import CivilTime

enum InstantText {
    /// Parses an RFC 3339 timestamp with a zone designator (``RFC3339/parse(_:lenient:)``).
    /// A fraction is dropped (floor): calendar fires are whole seconds, and "strictly after
    /// 06:59:00.5" and "strictly after 06:59:00" have the same next whole second.
    static func parse(_ text: some Collection<UInt8>) -> Result<WallInstant, RFC3339.ParseError> {
        RFC3339.parse(text).map(\.instant)
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
