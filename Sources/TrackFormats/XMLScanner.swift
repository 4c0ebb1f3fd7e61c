// XMLScanner — the small pull scanner GPX needs, and no more.
//
// What it is: a cursor over UTF-8 bytes that hands out one event at a time (start tag with its
// attributes, end tag, character data). No tree is built, so memory is the open-element stack and
// the current event, whatever the file size; a 50 MB track costs what its largest element costs.
//
// What it checks (enough to reject a truncated or mangled file with a useful position):
//   - tags nest and close by name; one root element; nothing but comments, PIs and whitespace
//     after it;
//   - attribute values are quoted; an attribute name occurs once per tag;
//   - comments `<!-- -->`, CDATA `<![CDATA[ ]]>`, processing instructions `<? ?>` (the XML
//     declaration is one) and a DOCTYPE (internal subset skipped, never expanded) are understood;
//   - the five predefined entities and character references `&#NN;` / `&#xHH;` are decoded; any
//     other entity is an error (GPX defines none).
// What it does not do: validation, namespace resolution (a prefix is kept in `name`; `localName`
// drops it, which is how GPX readers match `gpx:trkpt` and `trkpt` alike), encodings other than
// UTF-8/ASCII.
//
// Errors carry the byte offset; `XMLScanner.location(of:)` turns it into line and column (1-based,
// columns in bytes) only when an error is reported, so the hot path does not count newlines.

/// One thing the scanner found.
public enum XMLEvent: Equatable, Sendable {
    /// `<name a="v" ...>` or `<name ... />` (then an `.end` event follows at once).
    case start(name: String, attributes: [XMLAttribute], offset: Int)
    /// `</name>`, or the end of an empty-element tag.
    case end(name: String)
    /// Character data between tags, entities decoded, CDATA included; may be whitespace only.
    case text(String)
}

/// An attribute of a start tag, value decoded.
public struct XMLAttribute: Equatable, Sendable {
    public var name: String
    public var value: String
    public init(name: String, value: String) { self.name = name; self.value = value }
}

extension String {
    /// The name without its namespace prefix: `gpx:trkpt` → `trkpt`.
    @inlinable
    public var xmlLocalName: Substring {
        if let colon = lastIndex(of: ":") { return self[index(after: colon)...] }
        return self[...]
    }
}

/// Why a text is not the XML the scanner accepts, and where.
public struct XMLError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var column: Int
    public init(message: String, line: Int, column: Int) {
        self.message = message; self.line = line; self.column = column
    }
    public var description: String { "line \(line), column \(column): \(message)" }
}

/// A pull scanner over a complete UTF-8 document. See the file comment for what it accepts.
public struct XMLScanner {
    let bytes: [UInt8]
    var index = 0
    /// Names of the open elements, outermost first.
    public private(set) var openElements: [String] = []
    var sawRoot = false
    /// An empty-element tag was just reported: its `.end` is due next.
    var pendingEnd: String?

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        // A UTF-8 byte order mark is allowed before the declaration.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
    }

    /// Line and column (1-based) of a byte offset.
    /// - Complexity: O(offset).
    public func location(of offset: Int) -> (line: Int, column: Int) {
        var line = 1, lineStart = 0
        var i = 0
        let end = min(offset, bytes.count)
        while i < end {
            if bytes[i] == 0x0A { line += 1; lineStart = i + 1 }
            i += 1
        }
        return (line, end - lineStart + 1)
    }

    func error(_ message: String, at offset: Int? = nil) -> XMLError {
        let (l, c) = location(of: offset ?? index)
        return XMLError(message: message, line: l, column: c)
    }

    /// The next event, or nil at the end of a well-formed document.
    ///
    /// - Throws: `XMLError` at the first problem.
    /// - Complexity: O(length of the event and any comments/PIs skipped before it).
    public mutating func next() throws(XMLError) -> XMLEvent? {
        if let name = pendingEnd {
            pendingEnd = nil
            openElements.removeLast()
            return .end(name: name)
        }
        while true {
            guard index < bytes.count else {
                if let open = openElements.last { throw error("end of file inside <\(open)>: the document is truncated") }
                if !sawRoot { throw error("no root element: this is not an XML document") }
                return nil
            }
            if bytes[index] != UInt8(ascii: "<") {
                let start = index
                let text = try scanText()
                if openElements.isEmpty {
                    guard text.allSatisfy({ $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }) else {
                        throw error(sawRoot ? "text after the root element" : "text before the root element", at: start)
                    }
                    continue
                }
                return .text(text)
            }
            // '<'
            if starts(with: "<!--") {
                try skip(past: "-->", from: index + 4, what: "comment")
                continue
            }
            if starts(with: "<![CDATA[") {
                guard !openElements.isEmpty else { throw error("CDATA outside the root element") }
                let start = index + 9
                guard let end = find("]]>", from: start) else { throw error("unterminated CDATA section") }
                index = end + 3
                return .text(String(decoding: bytes[start..<end], as: UTF8.self))
            }
            if starts(with: "<?") {
                try skip(past: "?>", from: index + 2, what: "processing instruction")
                continue
            }
            if starts(with: "<!DOCTYPE") {
                guard !sawRoot else { throw error("DOCTYPE after the root element") }
                try skipDoctype()
                continue
            }
            if starts(with: "</") { return try scanEndTag() }
            return try scanStartTag()
        }
    }

    // MARK: Pieces

    func starts(with s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        guard bytes.count - index >= n else { return false }
        let p = s.utf8Start
        for k in 0..<n where bytes[index + k] != p[k] { return false }
        return true
    }

    func find(_ s: StaticString, from: Int) -> Int? {
        let n = s.utf8CodeUnitCount
        let p = s.utf8Start
        var i = from
        while i + n <= bytes.count {
            if bytes[i] == p[0] {
                var k = 1
                while k < n && bytes[i + k] == p[k] { k += 1 }
                if k == n { return i }
            }
            i += 1
        }
        return nil
    }

    mutating func skip(past terminator: StaticString, from: Int, what: String) throws(XMLError) {
        guard let end = find(terminator, from: from) else { throw error("unterminated \(what)") }
        index = end + terminator.utf8CodeUnitCount
    }

    mutating func skipDoctype() throws(XMLError) {
        let start = index
        var i = index + 9
        var inSubset = false
        var quote: UInt8? = nil
        while i < bytes.count {
            let b = bytes[i]
            if let q = quote {
                if b == q { quote = nil }
            } else if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                quote = b
            } else if b == UInt8(ascii: "[") {
                inSubset = true
            } else if b == UInt8(ascii: "]") {
                inSubset = false
            } else if b == UInt8(ascii: ">") && !inSubset {
                index = i + 1
                return
            }
            i += 1
        }
        throw error("unterminated DOCTYPE", at: start)
    }

    @inline(__always)
    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x09 || b == 0x0D }

    @inline(__always)
    static func isNameByte(_ b: UInt8) -> Bool {
        !(isSpace(b) || b == UInt8(ascii: "/") || b == UInt8(ascii: ">") || b == UInt8(ascii: "=")
            || b == UInt8(ascii: "<") || b == UInt8(ascii: "\"") || b == UInt8(ascii: "'")
            || b == UInt8(ascii: "&"))
    }

    mutating func skipSpace() {
        while index < bytes.count && Self.isSpace(bytes[index]) { index += 1 }
    }

    mutating func scanName(_ what: String) throws(XMLError) -> String {
        let start = index
        while index < bytes.count && Self.isNameByte(bytes[index]) { index += 1 }
        guard index > start else {
            if index >= bytes.count { throw error("end of file, expected \(what)") }
            throw error("expected \(what), found \(describe(bytes[index]))")
        }
        let first = bytes[start]
        if first == UInt8(ascii: "-") || first == UInt8(ascii: ".") || (first >= 0x30 && first <= 0x39) {
            throw error("\(what) may not begin with \(describe(first))", at: start)
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    func describe(_ b: UInt8) -> String {
        if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        if b == 0x0A { return "a line break" }
        if b == 0x20 { return "a space" }
        let hex = Array("0123456789ABCDEF")
        return "byte 0x\(hex[Int(b >> 4)])\(hex[Int(b & 15)])"
    }

    mutating func scanStartTag() throws(XMLError) -> XMLEvent {
        let tagStart = index
        index += 1
        if sawRoot && openElements.isEmpty { throw error("a second root element", at: tagStart) }
        let name = try scanName("an element name")
        var attributes: [XMLAttribute] = []
        while true {
            let hadSpace = index < bytes.count && Self.isSpace(bytes[index])
            skipSpace()
            guard index < bytes.count else { throw error("end of file inside the tag <\(name)>") }
            let b = bytes[index]
            if b == UInt8(ascii: ">") {
                index += 1
                sawRoot = true
                openElements.append(name)
                return .start(name: name, attributes: attributes, offset: tagStart)
            }
            if b == UInt8(ascii: "/") {
                guard index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: ">") else {
                    throw error("expected '>' after '/' in the tag <\(name)>", at: index + 1)
                }
                index += 2
                sawRoot = true
                openElements.append(name)
                pendingEnd = name
                return .start(name: name, attributes: attributes, offset: tagStart)
            }
            guard hadSpace else { throw error("expected a space, '>' or '/>' in the tag <\(name)>, found \(describe(b))") }
            let attributeStart = index
            let key = try scanName("an attribute name")
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                throw error("expected '=' after the attribute \(key) of <\(name)>")
            }
            index += 1
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw error("the value of the attribute \(key) of <\(name)> must be in quotes")
            }
            let quote = bytes[index]
            index += 1
            let value = try scanCharacters(until: quote, context: "the attribute \(key)")
            guard index < bytes.count else { throw error("unterminated value of the attribute \(key) of <\(name)>", at: attributeStart) }
            index += 1  // the closing quote
            if attributes.contains(where: { $0.name == key }) {
                throw error("the attribute \(key) occurs twice in <\(name)>", at: attributeStart)
            }
            attributes.append(XMLAttribute(name: key, value: value))
        }
    }

    mutating func scanEndTag() throws(XMLError) -> XMLEvent {
        let tagStart = index
        index += 2
        let name = try scanName("an element name after '</'")
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else { throw error("expected '>' to close </\(name)") }
        index += 1
        guard let open = openElements.last else { throw error("</\(name)> closes nothing", at: tagStart) }
        guard open == name else { throw error("expected </\(open)>, found </\(name)>", at: tagStart) }
        openElements.removeLast()
        return .end(name: name)
    }

    /// Character data up to the next '<'.
    mutating func scanText() throws(XMLError) -> String {
        try scanCharacters(until: UInt8(ascii: "<"), context: "text")
    }

    /// Bytes up to (not including) `terminator` or the end of input, entities decoded.
    mutating func scanCharacters(until terminator: UInt8, context: String) throws(XMLError) -> String {
        let start = index
        var hasEntity = false
        while index < bytes.count && bytes[index] != terminator {
            let b = bytes[index]
            if b == UInt8(ascii: "&") { hasEntity = true }
            if b == UInt8(ascii: "<") { throw error("'<' in \(context)") }
            index += 1
        }
        if !hasEntity { return String(decoding: bytes[start..<index], as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(index - start)
        var i = start
        while i < index {
            let b = bytes[i]
            guard b == UInt8(ascii: "&") else { out.append(b); i += 1; continue }
            var j = i + 1
            while j < index && bytes[j] != UInt8(ascii: ";") && j - i < 12 { j += 1 }
            guard j < index, bytes[j] == UInt8(ascii: ";") else { throw error("'&' without a ';' (write &amp; for a literal &)", at: i) }
            let entity = String(decoding: bytes[(i + 1)..<j], as: UTF8.self)
            switch entity {
            case "lt": out.append(UInt8(ascii: "<"))
            case "gt": out.append(UInt8(ascii: ">"))
            case "amp": out.append(UInt8(ascii: "&"))
            case "quot": out.append(UInt8(ascii: "\""))
            case "apos": out.append(UInt8(ascii: "'"))
            default:
                var scalar: Unicode.Scalar? = nil
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    scalar = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                } else if entity.hasPrefix("#") {
                    scalar = UInt32(entity.dropFirst(1), radix: 10).flatMap(Unicode.Scalar.init)
                } else {
                    throw error("unknown entity &\(entity);", at: i)
                }
                guard let s = scalar, s.value != 0 else { throw error("bad character reference &\(entity);", at: i) }
                out.append(contentsOf: String(Character(s)).utf8)
            }
            i = j + 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
