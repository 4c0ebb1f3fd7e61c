// Numbers and date-times: unquoted tokens checked against the grammar of TOML 1.0.

/// Integers and floats.
///
/// - Integers: `+99`, `-17`, `1_000` (each `_` between two digits), no leading zeros; `0xDEAD_BEEF`,
///   `0o755`, `0b1101` (no sign); all within `Int64`.
/// - Floats: an integer part, then a fraction, an exponent or both (`3.14`, `-2e-3`, `6.626e-34`,
///   `1_000.5`); `inf`, `nan` with an optional sign.
enum TOMLNumber {
    enum Parsed {
        case success(TOMLValue.Kind)
        case failure(String)
    }

    static func parse(_ token: String) -> Parsed {
        let b = Array(token.utf8)
        var k = 0
        var negative = false
        var signed = false
        if k < b.count, b[k] == UInt8(ascii: "+") || b[k] == UInt8(ascii: "-") {
            negative = b[k] == UInt8(ascii: "-")
            signed = true
            k += 1
        }
        let rest = Array(b[k...])
        if rest == Array("inf".utf8) { return .success(.float(negative ? -.infinity : .infinity)) }
        if rest == Array("nan".utf8) { return .success(.float(negative ? -.nan : .nan)) }

        let prefixRadix: UInt64? = if rest.count >= 2 && rest[0] == UInt8(ascii: "0") {
            switch rest[1] {
            case UInt8(ascii: "x"): 16
            case UInt8(ascii: "o"): 8
            case UInt8(ascii: "b"): 2
            default: nil
            }
        } else { nil }
        if let radix = prefixRadix {
            if signed { return .failure("invalid number `\(token)`: a sign is not allowed on hexadecimal, octal or binary integers") }
            guard let digits = digitsWithUnderscores(Array(rest[2...]), radix: radix) else {
                return .failure("invalid number `\(token)`: expected base-\(radix) digits, with `_` only between digits")
            }
            var value: UInt64 = 0
            for d in digits {
                let (m, o1) = value.multipliedReportingOverflow(by: radix)
                let (s, o2) = m.addingReportingOverflow(UInt64(d))
                if o1 || o2 { return .failure("integer `\(token)` is out of range for a 64-bit integer") }
                value = s
            }
            guard value <= UInt64(Int64.max) else { return .failure("integer `\(token)` is out of range for a 64-bit integer") }
            return .success(.integer(Int64(value)))
        }

        // Decimal: split into integer part, fraction, exponent.
        var i = 0
        func take(_ allowed: (UInt8) -> Bool) -> [UInt8] {
            let s = i
            while i < rest.count && allowed(rest[i]) { i += 1 }
            return Array(rest[s..<i])
        }
        let isDigitOrUnderscore: (UInt8) -> Bool = { ($0 >= 48 && $0 <= 57) || $0 == UInt8(ascii: "_") }
        let intPart = take(isDigitOrUnderscore)
        guard let intDigits = digitsWithUnderscores(intPart, radix: 10) else {
            return .failure(intPart.isEmpty ? "\(TOMLParser.expectedValue), found `\(token)`"
                : "invalid number `\(token)`: `_` must be between two digits")
        }
        if intDigits.count > 1 && intDigits[0] == 0 {
            return .failure("invalid number `\(token)`: leading zeros are not allowed")
        }
        var isFloat = false
        var text = negative ? "-" : ""
        text += String(decoding: intPart.filter { $0 != UInt8(ascii: "_") }, as: UTF8.self)
        if i < rest.count && rest[i] == UInt8(ascii: ".") {
            i += 1
            let frac = take(isDigitOrUnderscore)
            guard digitsWithUnderscores(frac, radix: 10) != nil else {
                return .failure("invalid number `\(token)`: expected digits after the decimal point")
            }
            text += "." + String(decoding: frac.filter { $0 != UInt8(ascii: "_") }, as: UTF8.self)
            isFloat = true
        }
        if i < rest.count && (rest[i] == UInt8(ascii: "e") || rest[i] == UInt8(ascii: "E")) {
            i += 1
            var expText = "e"
            if i < rest.count && (rest[i] == UInt8(ascii: "+") || rest[i] == UInt8(ascii: "-")) {
                expText += String(UnicodeScalar(rest[i]))
                i += 1
            }
            let exp = take(isDigitOrUnderscore)
            guard digitsWithUnderscores(exp, radix: 10) != nil else {
                return .failure("invalid number `\(token)`: expected digits in the exponent")
            }
            text += expText + String(decoding: exp.filter { $0 != UInt8(ascii: "_") }, as: UTF8.self)
            isFloat = true
        }
        guard i == rest.count else {
            return .failure("invalid number `\(token)`")
        }
        if isFloat {
            guard let d = Double(text), d.isFinite else { return .failure("float `\(token)` is out of range") }
            return .success(.float(d))
        }
        guard let v = Int64(text) else { return .failure("integer `\(token)` is out of range for a 64-bit integer") }
        return .success(.integer(v))
    }

    /// The digit values of `bytes` when it is digits of `radix` with each `_` between two
    /// digits; nil otherwise (also when empty).
    static func digitsWithUnderscores(_ bytes: [UInt8], radix: UInt64) -> [UInt8]? {
        guard let first = bytes.first, let last = bytes.last,
              first != UInt8(ascii: "_"), last != UInt8(ascii: "_") else { return nil }
        var digits: [UInt8] = []
        var previousUnderscore = false
        for c in bytes {
            if c == UInt8(ascii: "_") {
                if previousUnderscore { return nil }
                previousUnderscore = true
                continue
            }
            previousUnderscore = false
            guard let d = TOMLParser.hexDigit(c), UInt64(d) < radix else { return nil }
            digits.append(d)
        }
        return digits
    }
}

/// Offset date-times, local date-times, local dates and local times (RFC 3339 with TOML's
/// relaxations: a space may replace `T`, seconds are required, fractions of any length).
enum TOMLDateTime {
    /// True when the token starts like a date (`dddd-`) or a time (`dd:`): it must then be a
    /// valid date-time, not a number.
    static func looksLikeDateTime(_ token: String) -> Bool {
        let b = Array(token.utf8)
        func digit(_ k: Int) -> Bool { k < b.count && b[k] >= 48 && b[k] <= 57 }
        if b.count >= 5 && (0..<4).allSatisfy(digit) && b[4] == UInt8(ascii: "-") { return true }
        if b.count >= 3 && digit(0) && digit(1) && b[2] == UInt8(ascii: ":") { return true }
        return false
    }

    static func isDate(_ token: String) -> Bool { date(Array(token.utf8)) == 10 }

    static func isValid(_ token: String) -> Bool {
        let b = Array(token.utf8)
        if let n = date(b) {
            if n == b.count { return true }
            guard b[n] == UInt8(ascii: "T") || b[n] == UInt8(ascii: "t") || b[n] == UInt8(ascii: " ") else { return false }
            let rest = Array(b[(n + 1)...])
            guard let t = time(rest) else { return false }
            if t == rest.count { return true }
            return offset(Array(rest[t...]))
        }
        if let t = time(b) { return t == b.count }
        return false
    }

    private static func number(_ b: [UInt8], _ from: Int, _ count: Int) -> Int? {
        guard from + count <= b.count else { return nil }
        var v = 0
        for k in from..<(from + count) {
            guard b[k] >= 48 && b[k] <= 57 else { return nil }
            v = v * 10 + Int(b[k] - 48)
        }
        return v
    }

    /// Length of a valid `YYYY-MM-DD` at the start, else nil.
    private static func date(_ b: [UInt8]) -> Int? {
        guard let y = number(b, 0, 4), b.count >= 10, b[4] == UInt8(ascii: "-"), let m = number(b, 5, 2),
              b[7] == UInt8(ascii: "-"), let d = number(b, 8, 2), (1...12).contains(m) else { return nil }
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
        return (1...days).contains(d) ? 10 : nil
    }

    /// Length of a valid `HH:MM:SS(.fraction)?` at the start, else nil.
    private static func time(_ b: [UInt8]) -> Int? {
        guard let h = number(b, 0, 2), b.count >= 8, b[2] == UInt8(ascii: ":"), let m = number(b, 3, 2),
              b[5] == UInt8(ascii: ":"), let s = number(b, 6, 2), h < 24, m < 60, s <= 60 else { return nil }
        var n = 8
        if n < b.count && b[n] == UInt8(ascii: ".") {
            n += 1
            let start = n
            while n < b.count && b[n] >= 48 && b[n] <= 57 { n += 1 }
            if n == start { return nil }
        }
        return n
    }

    /// `Z`, `z` or `±HH:MM`, exactly.
    private static func offset(_ b: [UInt8]) -> Bool {
        if b.count == 1 { return b[0] == UInt8(ascii: "Z") || b[0] == UInt8(ascii: "z") }
        guard b.count == 6, b[0] == UInt8(ascii: "+") || b[0] == UInt8(ascii: "-"), let h = number(b, 1, 2),
              b[3] == UInt8(ascii: ":"), let m = number(b, 4, 2) else { return false }
        return h < 24 && m < 60
    }
}
