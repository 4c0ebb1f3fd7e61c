// The lexical rules of TOML 1.0 and the values: keys, strings, numbers, booleans, date-times,
// arrays and inline tables. A cursor over the UTF-8 bytes of the document that counts lines.
//
// Size: one lexer over one cursor: its sections are the productions of the TOML grammar and
// share the cursor's state; split, each would reach into the others' internals.

/// The parse state: the input, a cursor, and the current line. Lives for one `parse` call.
struct TOMLParser {
    /// A place in the document, 1-based.
    struct Mark {
        var line: Int
        var column: Int
    }

    let bytes: [UInt8]
    var index = 0
    /// 1-based number of the line `index` is on.
    var line = 1
    /// Offset of the first byte of the current line.
    var lineStart = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    // MARK: Cursor

    @inline(__always)
    func peek(_ ahead: Int = 0) -> UInt8? {
        index + ahead < bytes.count ? bytes[index + ahead] : nil
    }

    /// The current position. Columns count Unicode scalars (UTF-8 lead bytes).
    func mark() -> Mark {
        var column = 1
        var k = lineStart
        while k < index {
            if bytes[k] & 0xC0 != 0x80 { column += 1 }
            k += 1
        }
        return Mark(line: line, column: column)
    }

    func error(_ message: String, at mark: Mark? = nil) -> TOMLError {
        let m = mark ?? self.mark()
        return TOMLError(line: m.line, column: m.column, message: message)
    }

    /// The character at the cursor for a message: "`x`", "end of line", "end of file".
    func describeHere() -> String {
        guard let c = peek() else { return "end of file" }
        if c == UInt8(ascii: "\n") || c == UInt8(ascii: "\r") { return "end of line" }
        var end = index + 1
        while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
        let text = String(decoding: bytes[index..<end], as: UTF8.self)
        if c < 0x20 || c == 0x7F { return "control character U+" + Self.hex4(UInt32(c)) }
        return "`\(text)`"
    }

    static func hex4(_ v: UInt32) -> String {
        let h = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - h.count)) + h
    }

    // MARK: Whitespace, comments, newlines

    mutating func skipWhitespace() {
        while let c = peek(), c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") { index += 1 }
    }

    /// From `#` to the end of the line (the newline is left).
    mutating func skipComment() throws(TOMLError) {
        index += 1
        while let c = peek(), c != UInt8(ascii: "\n") {
            if c == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n") { break }
            if (c < 0x20 && c != UInt8(ascii: "\t")) || c == 0x7F {
                throw error("\(describeHere()) is not allowed in a comment")
            }
            index += 1
        }
    }

    /// Consumes LF or CRLF and starts the next line.
    mutating func consumeNewline() throws(TOMLError) {
        if peek() == UInt8(ascii: "\r") {
            guard peek(1) == UInt8(ascii: "\n") else { throw error("expected a line feed after a carriage return") }
            index += 1
        }
        index += 1
        line += 1
        lineStart = index
    }

    var atNewline: Bool {
        peek() == UInt8(ascii: "\n") || (peek() == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n"))
    }

    /// Whitespace, an optional comment, then a newline or the end of the file.
    mutating func expectLineEnd(after what: String) throws(TOMLError) {
        skipWhitespace()
        if peek() == UInt8(ascii: "#") { try skipComment() }
        if peek() == nil { return }
        guard peek() == UInt8(ascii: "\n") || peek() == UInt8(ascii: "\r") else {
            throw error("expected the end of the line after \(what), found \(describeHere())")
        }
        try consumeNewline()
    }

    /// Whitespace, comments and newlines (inside arrays).
    mutating func skipBlank() throws(TOMLError) {
        while true {
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: "#")?: try skipComment()
            case UInt8(ascii: "\n")?, UInt8(ascii: "\r")?: try consumeNewline()
            default: return
            }
        }
    }

    // MARK: Keys

    static func isBareKeyByte(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }

    /// `a`, `"a b"`, `'c'`, `a . "b" . c`.
    mutating func parseKeyPath() throws(TOMLError) -> [KeyPart] {
        var parts = [try parseSimpleKey()]
        while true {
            let save = index
            skipWhitespace()
            guard peek() == UInt8(ascii: ".") else { index = save; break }
            index += 1
            skipWhitespace()
            parts.append(try parseSimpleKey())
            if parts.count > TOML.maximumDepth { throw error("key nested deeper than \(TOML.maximumDepth) levels") }
        }
        return parts
    }

    mutating func parseSimpleKey() throws(TOMLError) -> KeyPart {
        let m = mark()
        switch peek() {
        case UInt8(ascii: "\"")?:
            if peek(1) == UInt8(ascii: "\"") && peek(2) == UInt8(ascii: "\"") {
                throw error("a multi-line string cannot be a key")
            }
            return KeyPart(name: try parseBasicString(), mark: m)
        case UInt8(ascii: "'")?:
            if peek(1) == UInt8(ascii: "'") && peek(2) == UInt8(ascii: "'") {
                throw error("a multi-line string cannot be a key")
            }
            return KeyPart(name: try parseLiteralString(), mark: m)
        default:
            let start = index
            while let c = peek(), Self.isBareKeyByte(c) { index += 1 }
            guard index > start else { throw error("expected a key, found \(describeHere())") }
            return KeyPart(name: String(decoding: bytes[start..<index], as: UTF8.self), mark: m)
        }
    }

    // MARK: Values

    mutating func parseValue(depth: Int) throws(TOMLError) -> TOMLValue {
        let m = mark()
        guard let c = peek() else { throw error("\(Self.expectedValue), found end of file") }
        let kind: TOMLValue.Kind
        switch c {
        case UInt8(ascii: "\""):
            if peek(1) == UInt8(ascii: "\"") && peek(2) == UInt8(ascii: "\"") {
                kind = .string(try parseMultiLineString(literal: false))
            } else {
                kind = .string(try parseBasicString())
            }
        case UInt8(ascii: "'"):
            if peek(1) == UInt8(ascii: "'") && peek(2) == UInt8(ascii: "'") {
                kind = .string(try parseMultiLineString(literal: true))
            } else {
                kind = .string(try parseLiteralString())
            }
        case UInt8(ascii: "["):
            guard depth < TOML.maximumDepth else { throw error("arrays and inline tables nested deeper than \(TOML.maximumDepth)") }
            kind = .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "{"):
            guard depth < TOML.maximumDepth else { throw error("arrays and inline tables nested deeper than \(TOML.maximumDepth)") }
            kind = .table(try parseInlineTable(depth: depth + 1))
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "i"), UInt8(ascii: "n"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"):
            kind = try parseScalarToken()
        default:
            if Self.isBareKeyByte(c) {
                // A word: show all of it ("found `yes`").
                var end = index
                while end < bytes.count && !Self.isDelimiter(bytes[end]) { end += 1 }
                throw error("\(Self.expectedValue), found `\(String(decoding: bytes[index..<end], as: UTF8.self))`")
            }
            throw error("\(Self.expectedValue), found \(describeHere())")
        }
        return TOMLValue(kind, line: m.line, column: m.column)
    }

    static let expectedValue = "expected a value (a string, number, boolean, date-time, array or inline table)"

    /// Bytes that end an unquoted value.
    static func isDelimiter(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: ","),
             UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: "#"): true
        default: false
        }
    }

    /// `true`, `false`, numbers, `inf`, `nan`, date-times.
    mutating func parseScalarToken() throws(TOMLError) -> TOMLValue.Kind {
        let m = mark()
        let start = index
        while let c = peek(), !Self.isDelimiter(c) { index += 1 }
        var token = String(decoding: bytes[start..<index], as: UTF8.self)
        switch token {
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        default: break
        }
        if TOMLDateTime.looksLikeDateTime(token) {
            // A date and a time may be separated by one space: "1979-05-27 07:32:00Z".
            if TOMLDateTime.isDate(token), peek() == UInt8(ascii: " "),
               let d1 = peek(1), let d2 = peek(2), let colon = peek(3),
               (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(d1), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(d2),
               colon == UInt8(ascii: ":")
            {
                index += 1
                let timeStart = index
                while let c = peek(), !Self.isDelimiter(c) { index += 1 }
                token += " " + String(decoding: bytes[timeStart..<index], as: UTF8.self)
            }
            guard TOMLDateTime.isValid(token) else { throw error("invalid date-time `\(token)`", at: m) }
            return .dateTime(token)
        }
        switch TOMLNumber.parse(token) {
        case .success(let kind): return kind
        case .failure(let reason): throw error(reason, at: m)
        }
    }

    mutating func parseArray(depth: Int) throws(TOMLError) -> [TOMLValue] {
        let open = mark()
        index += 1
        var elements: [TOMLValue] = []
        while true {
            try skipBlank()
            if peek() == UInt8(ascii: "]") { index += 1; return elements }
            if peek() == nil { throw error("unterminated array (expected `]` to close the array opened on line \(open.line))") }
            elements.append(try parseValue(depth: depth))
            try skipBlank()
            switch peek() {
            case UInt8(ascii: ",")?: index += 1
            case UInt8(ascii: "]")?: index += 1; return elements
            case nil: throw error("unterminated array (expected `]` to close the array opened on line \(open.line))")
            default: throw error("expected `,` or `]` in the array, found \(describeHere())")
            }
        }
    }

    mutating func parseInlineTable(depth: Int) throws(TOMLError) -> TOMLTable {
        let open = mark()
        index += 1
        let table = TableBuilder(origin: .header, line: open.line, column: open.column)
        skipWhitespace()
        if peek() == UInt8(ascii: "}") { index += 1; return table.build() }
        while true {
            if atNewline || peek() == nil {
                throw error("expected a key, found \(describeHere()) (an inline table must be on one line)")
            }
            try parseKeyValue(into: table, depth: depth)
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ",")?:
                index += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "}") { throw error("a trailing comma is not allowed in an inline table") }
            case UInt8(ascii: "}")?:
                index += 1
                return table.build()
            default:
                let hint = atNewline || peek() == nil ? " (an inline table must be on one line)" : ""
                throw error("expected `,` or `}` in the inline table, found \(describeHere())\(hint)")
            }
        }
    }

    // MARK: Strings

    /// Rejects raw control characters other than tab (TOML: they must be escaped).
    func checkStringByte(_ c: UInt8) throws(TOMLError) {
        if (c < 0x20 && c != UInt8(ascii: "\t")) || c == 0x7F {
            throw error("\(describeHere()) must be escaped in a string")
        }
    }

    /// `"…"` with escapes, on one line.
    mutating func parseBasicString() throws(TOMLError) -> String {
        let open = mark()
        index += 1
        var out: [UInt8] = []
        while true {
            guard let c = peek(), c != UInt8(ascii: "\n"), c != UInt8(ascii: "\r") else {
                throw error("unterminated string (expected `\"` before the end of the line)", at: open)
            }
            switch c {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &out)
            default:
                try checkStringByte(c)
                out.append(c)
                index += 1
            }
        }
    }

    /// `'…'` without escapes, on one line.
    mutating func parseLiteralString() throws(TOMLError) -> String {
        let open = mark()
        index += 1
        let start = index
        while true {
            guard let c = peek(), c != UInt8(ascii: "\n"), c != UInt8(ascii: "\r") else {
                throw error("unterminated string (expected `'` before the end of the line)", at: open)
            }
            if c == UInt8(ascii: "'") {
                let text = String(decoding: bytes[start..<index], as: UTF8.self)
                index += 1
                return text
            }
            try checkStringByte(c)
            index += 1
        }
    }

    /// `"""…"""` (escapes, line-ending backslash) or `'''…'''` (raw). A newline right after the
    /// opening delimiter is dropped; CRLF reads as LF; up to two quotes may precede the closing
    /// delimiter.
    mutating func parseMultiLineString(literal: Bool) throws(TOMLError) -> String {
        let open = mark()
        let quote = literal ? UInt8(ascii: "'") : UInt8(ascii: "\"")
        let delimiter = literal ? "'''" : "\"\"\""
        index += 3
        if atNewline { try consumeNewline() }
        var out: [UInt8] = []
        while true {
            guard let c = peek() else {
                throw error("unterminated multi-line string (expected `\(delimiter)` to close the string opened here)", at: open)
            }
            if c == quote {
                var run = 0
                while peek(run) == quote { run += 1 }
                if run >= 3 {
                    if run > 5 { throw error("too many quotes at the end of a multi-line string") }
                    out.append(contentsOf: repeatElement(quote, count: run - 3))
                    index += run
                    return String(decoding: out, as: UTF8.self)
                }
                out.append(contentsOf: repeatElement(quote, count: run))
                index += run
                continue
            }
            if c == UInt8(ascii: "\n") || c == UInt8(ascii: "\r") {
                try consumeNewline()
                out.append(UInt8(ascii: "\n"))
                continue
            }
            if c == UInt8(ascii: "\\") && !literal {
                // A backslash at the end of a line trims the newline and following whitespace.
                var k = 1
                while peek(k) == UInt8(ascii: " ") || peek(k) == UInt8(ascii: "\t") { k += 1 }
                if peek(k) == UInt8(ascii: "\n") || (peek(k) == UInt8(ascii: "\r") && peek(k + 1) == UInt8(ascii: "\n")) {
                    index += k
                    while true {
                        skipWhitespace()
                        guard atNewline else { break }
                        try consumeNewline()
                    }
                    continue
                }
                try parseEscape(into: &out)
                continue
            }
            try checkStringByte(c)
            out.append(c)
            index += 1
        }
    }

    /// One escape sequence at the cursor (which is on the backslash).
    mutating func parseEscape(into out: inout [UInt8]) throws(TOMLError) {
        let at = mark()
        index += 1
        guard let e = peek() else { throw error("unterminated escape at the end of the file", at: at) }
        switch e {
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = e == UInt8(ascii: "u") ? 4 : 8
            var value: UInt32 = 0
            for k in 1...count {
                guard let h = peek(k), let d = Self.hexDigit(h) else {
                    throw error("invalid escape: `\\\(e == UInt8(ascii: "u") ? "u" : "U")` needs \(count) hexadecimal digits", at: at)
                }
                value = value << 4 | UInt32(d)
            }
            guard let scalar = Unicode.Scalar(value) else {
                throw error("invalid escape: U+\(Self.hex4(value)) is not a Unicode scalar value", at: at)
            }
            out.append(contentsOf: String(Character(scalar)).utf8)
            index += count
        default:
            let shown = e < 0x20 || e == 0x7F ? "a control character" : "`\\\(String(decoding: [e], as: UTF8.self))`"
            throw error("invalid escape \(shown) (expected \\b, \\t, \\n, \\f, \\r, \\\", \\\\, \\uXXXX or \\UXXXXXXXX)", at: at)
        }
        index += 1
    }

    static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
