/// RFC 3339 timestamps (`2026-03-08T06:59:00Z`, `2026-03-08T01:59:00.25-05:00`): the one parser of
/// the CLI, the control socket and the GPX reader.
public enum RFC3339 {
    /// Why a timestamp did not parse.
    public enum ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// Not of the form `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`.
        case shape
        /// A field out of range (`month`, `day`, `hour`, `minute`, `second`, `offset`).
        case range(String)

        public var description: String {
            switch self {
            case .shape: "expected a timestamp like 2026-03-08T06:59:00Z or 2026-03-08T01:59:00-05:00"
            case .range(let field): "\(field) out of range in timestamp"
            }
        }
    }

    /// Parses `YYYY-MM-DD(T|t)HH:MM:SS[.fraction](Z|z|±HH:MM)`.
    ///
    /// Second 60 (a leap second) is read as the first second of the next minute, as POSIX time does.
    ///
    /// - Parameter lenient: also accept what GPX loggers write: a space for the `T`, an offset
    ///   without its colon (`+0100`), and no zone designator at all (read as UTC). Off for anything
    ///   a person types, where those are more likely mistakes.
    /// - Returns: the whole-second instant and the fraction in nanoseconds (truncated), or why not.
    /// - Complexity: O(n), no allocation beyond the input copy.
    public static func parse(_ text: some Collection<UInt8>, lenient: Bool = false)
        -> Result<(instant: WallInstant, nanoseconds: Int32), ParseError>
    {
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
        guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2), expect(UInt8(ascii: "-")),
              let day = digits(2), expect(UInt8(ascii: "T"), UInt8(ascii: "t")) || (lenient && expect(UInt8(ascii: " "))),
              let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2), expect(UInt8(ascii: ":")),
              let second = digits(2)
        else { return .failure(.shape) }
        var nanoseconds: Int32 = 0
        if expect(UInt8(ascii: ".")) {
            var scale: Int32 = 100_000_000
            var any = false
            while i < b.count, b[i] &- UInt8(ascii: "0") < 10 {
                nanoseconds += Int32(b[i] - UInt8(ascii: "0")) * scale
                scale /= 10
                i += 1
                any = true
            }
            guard any else { return .failure(.shape) }
        }
        var offset = 0
        if expect(UInt8(ascii: "Z"), UInt8(ascii: "z")) {
        } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let oh = digits(2) else { return .failure(.shape) }
            guard expect(UInt8(ascii: ":")) || lenient else { return .failure(.shape) }
            guard let om = digits(2) else { return .failure(.shape) }
            guard oh <= 23, om <= 59 else { return .failure(.range("offset")) }
            offset = sign * (oh * 3600 + om * 60)
        } else if !lenient {
            return .failure(.shape)
        }
        guard i == b.count else { return .failure(.shape) }
        guard (1...12).contains(month) else { return .failure(.range("month")) }
        guard (1...CivilDays.daysInMonth(year: Int64(year), month: month)).contains(day) else {
            return .failure(.range("day"))
        }
        guard hour <= 23 else { return .failure(.range("hour")) }
        guard minute <= 59 else { return .failure(.range("minute")) }
        guard second <= 60 else { return .failure(.range("second")) }
        let local = CivilDateTime(year: Int64(year), month: month, day: day, hour: hour, minute: minute, second: second)
        return .success((WallInstant(secondsSinceEpoch: local.localSeconds - Int64(offset)), nanoseconds))
    }
}
