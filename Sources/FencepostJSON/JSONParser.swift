// The parser: strict RFC 8259 by recursive descent over a contiguous byte buffer.
//
// - Whitespace is space, tab, LF, CR only; a byte order mark is not accepted.
// - Strings: all escapes of §7 including surrogate pairs written as two `\u` escapes; an unpaired
//   surrogate, an unescaped control character (< 0x20) or invalid UTF-8 is an error.
// - Numbers: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`; no leading zeros, no `+`,
//   no NaN/Infinity, no result beyond ±Double.greatestFiniteMagnitude.
// - Nesting is limited to `JSONValue.maximumDepth` arrays/objects, so the recursion is bounded and
//   hostile input cannot overflow the stack.
// - Duplicate object keys are an error.

/// The parse state: the input and a cursor. Lives only for one `parse` call.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    /// A member of the top-level object whose value's byte range is kept in `keptRange`.
    var keptKey: String?
    var keptRange: Range<Int>?

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func error(_ message: String, at offset: Int? = nil) -> JSONError {
        JSONError(offset: offset ?? index, message: message)
    }

    @inline(__always)
    var atEnd: Bool { index >= bytes.count }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// A readable name of the byte at `index` for messages: `'x'` or `byte 0xC3`.
    func describeCurrentByte() -> String {
        let b = bytes[index]
        if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        return "byte 0x" + hex2(b)
    }

    mutating func parseValue(depth: Int) throws(JSONError) -> JSONValue {
        guard !atEnd else { throw error("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        default: throw error("unexpected \(describeCurrentByte()), expected a value")
        }
    }

    mutating func expectLiteral(_ word: StaticString) throws(JSONError) {
        let start = index
        let n = word.utf8CodeUnitCount
        let w = word.utf8Start
        guard bytes.count - index >= n else { throw error("invalid literal, expected '\(word)'", at: start) }
        for k in 0..<n where bytes[index + k] != w[k] {
            throw error("invalid literal, expected '\(word)'", at: start)
        }
        index += n
    }

    // MARK: Containers

    mutating func parseArray(depth: Int) throws(JSONError) -> JSONValue {
        if depth > JSONValue.maximumDepth { throw error("nesting deeper than \(JSONValue.maximumDepth)") }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if !atEnd && bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard !atEnd else { throw error("unexpected end of input, expected ',' or ']' after array element") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(elements)
            default: throw error("expected ',' or ']' after array element, found \(describeCurrentByte())")
            }
        }
    }

    mutating func parseObject(depth: Int) throws(JSONError) -> JSONValue {
        if depth > JSONValue.maximumDepth { throw error("nesting deeper than \(JSONValue.maximumDepth)") }
        index += 1  // {
        var members: [(key: String, value: JSONValue)] = []
        // Duplicate detection: a linear scan while small, a set once the object grows.
        var seen: Set<String>? = nil
        skipWhitespace()
        if !atEnd && bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard !atEnd else { throw error("unexpected end of input, expected a string key") }
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a string key, found \(describeCurrentByte())")
            }
            let keyOffset = index
            let key = try parseString()
            if seen == nil && members.count >= 16 { seen = Set(members.lazy.map { $0.key }) }
            let duplicate: Bool
            if seen != nil { duplicate = !seen!.insert(key).inserted } else { duplicate = members.contains { $0.key == key } }
            if duplicate { throw error("duplicate key \"\(key)\"", at: keyOffset) }
            skipWhitespace()
            guard !atEnd, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after object key")
            }
            index += 1
            skipWhitespace()
            let valueStart = index
            members.append((key: key, value: try parseValue(depth: depth)))
            if depth == 1, let keptKey, key == keptKey { keptRange = valueStart..<index }
            skipWhitespace()
            guard !atEnd else { throw error("unexpected end of input, expected ',' or '}' after object member") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            default: throw error("expected ',' or '}' after object member, found \(describeCurrentByte())")
            }
        }
    }

    // MARK: Strings

    /// Parses a string starting at its opening quote.
    ///
    /// Fast path: no escapes, one `String(decoding:)` of the validated bytes. Escapes switch to a
    /// byte buffer.
    mutating func parseString() throws(JSONError) -> String {
        let open = index
        index += 1
        let start = index
        while index < bytes.count {
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return s
            }
            if b == UInt8(ascii: "\\") { return try parseStringSlow(open: open, start: start) }
            if b < 0x20 { throw controlCharacterError(b) }
            if b < 0x80 { index += 1 } else { index += try validateUTF8Sequence() }
        }
        throw error("unterminated string", at: open)
    }

    /// Continues a string that has escapes; `index` is at the first backslash.
    mutating func parseStringSlow(open: Int, start: Int) throws(JSONError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(index - start + 16)
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: out, as: UTF8.self)
            }
            if b == UInt8(ascii: "\\") {
                try parseEscape(into: &out)
            } else if b < 0x20 {
                throw controlCharacterError(b)
            } else if b < 0x80 {
                out.append(b); index += 1
            } else {
                let n = try validateUTF8Sequence()
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<index + n]))
                index += n
            }
        }
        throw error("unterminated string", at: open)
    }

    func controlCharacterError(_ b: UInt8) -> JSONError {
        error("unescaped control character U+00\(hex2(b)) in string (write it as an escape)")
    }

    /// One escape at `index` (a backslash), appended to `out` as UTF-8.
    mutating func parseEscape(into out: inout [UInt8]) throws(JSONError) {
        let escapeStart = index
        index += 1
        guard !atEnd else { throw error("unterminated string", at: escapeStart) }
        let c = bytes[index]
        index += 1
        switch c {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "/"): out.append(0x2F)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4(escapeStart: escapeStart)
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by an escaped low surrogate.
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw error("invalid \\u escape: unpaired surrogate", at: escapeStart) }
                let lowStart = index
                index += 2
                let low = try hex4(escapeStart: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw error("invalid \\u escape: unpaired surrogate", at: escapeStart)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error("invalid \\u escape: unpaired surrogate", at: escapeStart)
            }
            appendUTF8(scalar, to: &out)
        default:
            throw error("invalid escape '\\\(Character(Unicode.Scalar(c)))' in string", at: escapeStart)
        }
    }

    /// Four hex digits at `index` (just after `\u`).
    mutating func hex4(escapeStart: Int) throws(JSONError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw error("invalid \\u escape", at: escapeStart) }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
            default: throw error("invalid \\u escape", at: escapeStart)
            }
            v = v << 4 | UInt32(d)
            index += 1
        }
        return v
    }

    /// Validates the multi-byte UTF-8 sequence at `index` (Unicode Table 3-7: no overlong forms,
    /// no surrogates, nothing above U+10FFFF) and returns its length. Does not move `index`.
    func validateUTF8Sequence() throws(JSONError) -> Int {
        let b0 = bytes[index]
        let length: Int
        var lo: UInt8 = 0x80, hi: UInt8 = 0xBF  // range of the second byte
        switch b0 {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; hi = 0x9F
        case 0xF0: length = 4; lo = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; hi = 0x8F
        default: throw error("invalid UTF-8 in string")
        }
        guard bytes.count - index >= length else { throw error("invalid UTF-8 in string") }
        let b1 = bytes[index + 1]
        guard b1 >= lo && b1 <= hi else { throw error("invalid UTF-8 in string") }
        for k in 2..<max(2, length) where bytes[index + k] & 0xC0 != 0x80 {
            throw error("invalid UTF-8 in string")
        }
        return length
    }

    // MARK: Numbers

    mutating func parseNumber() throws(JSONError) -> JSONValue {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard !atEnd, isDigit(bytes[index]) else { throw error("expected a digit after '-'") }
        // Integer part, accumulated as a magnitude; `fits` drops to false on overflow.
        var magnitude: UInt64 = 0
        var fits = true
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if !atEnd && isDigit(bytes[index]) { throw error("leading zero in number", at: index - 1) }
        } else {
            while !atEnd && isDigit(bytes[index]) {
                let d = UInt64(bytes[index] - UInt8(ascii: "0"))
                if fits {
                    let (m, o1) = magnitude.multipliedReportingOverflow(by: 10)
                    let (s, o2) = m.addingReportingOverflow(d)
                    if o1 || o2 { fits = false } else { magnitude = s }
                }
                index += 1
            }
        }
        var integral = true
        if !atEnd && bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard !atEnd, isDigit(bytes[index]) else { throw error("expected a digit after '.' in number") }
            while !atEnd && isDigit(bytes[index]) { index += 1 }
        }
        if !atEnd && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            integral = false
            index += 1
            if !atEnd && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) { index += 1 }
            guard !atEnd, isDigit(bytes[index]) else { throw error("expected a digit in exponent of number") }
            while !atEnd && isDigit(bytes[index]) { index += 1 }
        }
        if integral && fits {
            if negative {
                if magnitude == 0 { return .number(-0.0) }
                if magnitude <= UInt64(Int64.max) + 1 { return .integer(Int64(truncatingIfNeeded: 0 &- magnitude)) }
            } else if magnitude <= UInt64(Int64.max) {
                return .integer(Int64(magnitude))
            }
        }
        // The grammar above is a subset of what the standard library's decimal parser accepts
        // (`strtod` in the C locale), so this cannot fail; it can only overflow to infinity.
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let d = Double(text), d.isFinite else { throw error("number out of range", at: start) }
        return .number(d)
    }

    @inline(__always)
    func isDigit(_ b: UInt8) -> Bool { b &- UInt8(ascii: "0") < 10 }
}

/// Appends the UTF-8 form of a scalar value (≤ 0x10FFFF, not a surrogate).
@inline(__always)
func appendUTF8(_ v: UInt32, to out: inout [UInt8]) {
    switch v {
    case 0..<0x80:
        out.append(UInt8(v))
    case 0x80..<0x800:
        out.append(UInt8(0xC0 | v >> 6)); out.append(UInt8(0x80 | v & 0x3F))
    case 0x800..<0x10000:
        out.append(UInt8(0xE0 | v >> 12)); out.append(UInt8(0x80 | v >> 6 & 0x3F))
        out.append(UInt8(0x80 | v & 0x3F))
    default:
        out.append(UInt8(0xF0 | v >> 18)); out.append(UInt8(0x80 | v >> 12 & 0x3F))
        out.append(UInt8(0x80 | v >> 6 & 0x3F)); out.append(UInt8(0x80 | v & 0x3F))
    }
}

/// Two upper-case hex digits.
func hex2(_ b: UInt8) -> String {
    let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
    return String([digits[Int(b >> 4)], digits[Int(b & 0xF)]])
}
