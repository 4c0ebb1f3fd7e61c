// The structure of a TOML document: lines of `key = value`, `[table]` and `[[array.of.tables]]`,
// and the rule that every table and key is defined once (TOML 1.0 §Table, §Array of Tables):
//
// - `[a.b]` defines `a.b`; it also creates `a` implicitly, which a later `[a]` may still define
//   once. Defining `[a.b]` a second time is an error.
// - `a.b.c = 1` creates `a` and `a.b` as tables "defined by dotted keys": later dotted keys of the
//   same section may add to them, and a header may add sub-tables below them (`[a.b.d]`), but no
//   header may define them (`[a.b]` is an error), and dotted keys may not add to tables defined or
//   created by headers.
// - Inline tables `{ … }` and static arrays `[ … ]` are complete when written: neither headers
//   nor dotted keys may add to them.
// - `[[a]]` appends a table to the array of tables `a`; later headers below `a` refer to its last
//   element.

extension TOML {
    /// Parses a TOML document.
    ///
    /// - Throws: ``TOMLError`` naming the line and column of the first problem and what was
    ///   expected.
    /// - Complexity: O(n) in the length of the text, plus O(k) per key for the duplicate check
    ///   in a table of k keys.
    public static func parse(_ text: String) throws(TOMLError) -> TOMLTable {
        try parse(bytes: Array(text.utf8))
    }

    /// Parses a TOML document from UTF-8 bytes (invalid UTF-8 is replaced with U+FFFD).
    public static func parse(bytes: [UInt8]) throws(TOMLError) -> TOMLTable {
        var parser = TOMLParser(bytes)
        return try parser.parseDocument()
    }
}

/// The namespace of the TOML reader.
public enum TOML {
    /// Arrays, inline tables and dotted key paths may nest this deep; deeper is an error.
    public static let maximumDepth = 64
}

/// A table while the document is read; ``build()`` turns it into a ``TOMLTable``.
final class TableBuilder {
    enum Origin {
        /// Created as the prefix of a header (`a` in `[a.b]`): a later `[a]` may define it.
        case implicit
        /// Defined by a header (or the root, or an element of an array of tables).
        case header
        /// Created by a dotted key (`a` in `a.b = 1`).
        case dotted
    }

    enum Entry {
        case value(TOMLValue)
        case table(TableBuilder)
        case tables(TableArrayBuilder)
    }

    var origin: Origin
    var line: Int
    var column: Int
    private(set) var order: [String] = []
    private var entries: [String: Entry] = [:]

    init(origin: Origin, line: Int, column: Int) {
        self.origin = origin
        self.line = line
        self.column = column
    }

    subscript(key: String) -> Entry? { entries[key] }

    func add(_ key: String, _ entry: Entry) {
        precondition(entries[key] == nil, "key added twice")
        order.append(key)
        entries[key] = entry
    }

    func build() -> TOMLTable {
        TOMLTable(order.map { key in
            switch entries[key]! {
            case .value(let v): return (key: key, value: v)
            case .table(let t): return (key: key, value: TOMLValue(.table(t.build()), line: t.line, column: t.column))
            case .tables(let a):
                let elements = a.elements.map { TOMLValue(.table($0.build()), line: $0.line, column: $0.column) }
                return (key: key, value: TOMLValue(.array(elements), line: a.line, column: a.column))
            }
        })
    }
}

/// An array of tables while the document is read.
final class TableArrayBuilder {
    var elements: [TableBuilder] = []
    let line: Int
    let column: Int
    init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }
}

/// One part of a dotted key, with where it was written.
struct KeyPart {
    var name: String
    var mark: TOMLParser.Mark
}

extension TOMLParser {
    mutating func parseDocument() throws(TOMLError) -> TOMLTable {
        // A UTF-8 byte order mark is allowed at the very start.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3; lineStart = 3 }
        let root = TableBuilder(origin: .header, line: 1, column: 1)
        var current = root
        while true {
            skipWhitespace()
            guard let c = peek() else { break }
            switch c {
            case UInt8(ascii: "#"):
                try skipComment()
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                try consumeNewline()
            case UInt8(ascii: "["):
                current = try parseHeader(root: root)
                try expectLineEnd(after: "the table header")
            default:
                try parseKeyValue(into: current)
                try expectLineEnd(after: "the value")
            }
        }
        return root.build()
    }

    /// `key = value` on one line (the value may span lines: arrays, multi-line strings); `depth` is
    /// the nesting of the inline table it stands in (0 at a table's top level).
    mutating func parseKeyValue(into table: TableBuilder, depth: Int = 0) throws(TOMLError) {
        let keys = try parseKeyPath()
        skipWhitespace()
        guard peek() == UInt8(ascii: "=") else {
            throw error("expected `=` after key `\(Self.keyText(keys))`, found \(describeHere())")
        }
        index += 1
        skipWhitespace()
        let value = try parseValue(depth: depth)
        try insert(keys, value, into: table)
    }

    /// Adds `value` at the dotted path `keys` below `table`, creating dotted tables on the way.
    mutating func insert(_ keys: [KeyPart], _ value: TOMLValue, into table: TableBuilder) throws(TOMLError) {
        var t = table
        for (k, part) in keys.dropLast().enumerated() {
            let prefix = Self.keyText(keys[...k])
            if let entry = t[part.name] {
                switch entry {
                case .table(let sub) where sub.origin == .dotted:
                    t = sub
                case .table(let sub):
                    throw error("cannot add `\(Self.keyText(keys))` with a dotted key: table `\(prefix)` was "
                        + (sub.origin == .implicit ? "created" : "defined") + " by a [header] on line \(sub.line)",
                        at: part.mark)
                case .tables(let a):
                    throw error("cannot add `\(Self.keyText(keys))` with a dotted key: `\(prefix)` is an array "
                        + "of tables (line \(a.line))", at: part.mark)
                case .value(let v):
                    throw notATable(prefix, v, at: part.mark)
                }
            } else {
                let sub = TableBuilder(origin: .dotted, line: part.mark.line, column: part.mark.column)
                t.add(part.name, .table(sub))
                t = sub
            }
        }
        let last = keys[keys.count - 1]
        if let entry = t[last.name] {
            throw error("duplicate key `\(Self.keyText(keys))` (first defined on line \(Self.line(of: entry)))", at: last.mark)
        }
        t.add(last.name, .value(value))
    }

    /// `[a.b]` or `[[a.b]]`; returns the table that following keys go into.
    mutating func parseHeader(root: TableBuilder) throws(TOMLError) -> TableBuilder {
        let start = mark()
        index += 1
        let isArray = peek() == UInt8(ascii: "[")
        if isArray { index += 1 }
        skipWhitespace()
        let keys = try parseKeyPath()
        skipWhitespace()
        let close = isArray ? "]]" : "]"
        if isArray && peek() == UInt8(ascii: "]") && peek(1) != UInt8(ascii: "]") { index += 1 }
        guard peek() == UInt8(ascii: "]"), !isArray || peek(1) == UInt8(ascii: "]") else {
            throw error("expected `\(close)` to close the table header, found \(describeHere())")
        }
        index += isArray ? 2 : 1
        let name = Self.keyText(keys)

        var t = root
        for (k, part) in keys.dropLast().enumerated() {
            if let entry = t[part.name] {
                switch entry {
                case .table(let sub): t = sub
                case .tables(let a): t = a.elements[a.elements.count - 1]
                case .value(let v): throw notATable(Self.keyText(keys[...k]), v, at: part.mark)
                }
            } else {
                let sub = TableBuilder(origin: .implicit, line: start.line, column: start.column)
                t.add(part.name, .table(sub))
                t = sub
            }
        }
        let last = keys[keys.count - 1]
        let existing = t[last.name]
        if isArray {
            switch existing {
            case nil:
                let array = TableArrayBuilder(line: start.line, column: start.column)
                t.add(last.name, .tables(array))
                return append(to: array, at: start)
            case .tables(let array)?:
                return append(to: array, at: start)
            case .table(let sub)?:
                throw error("cannot define [[\(name)]]: `\(name)` is already a table (line \(sub.line))", at: start)
            case .value(let v)?:
                if case .array = v.kind {
                    throw error("cannot append to `\(name)` with [[\(name)]]: it is an array written as a value "
                        + "on line \(v.line)", at: start)
                }
                throw notATable(name, v, at: start)
            }
        }
        switch existing {
        case nil:
            let table = TableBuilder(origin: .header, line: start.line, column: start.column)
            t.add(last.name, .table(table))
            return table
        case .table(let sub)? where sub.origin == .implicit:
            sub.origin = .header
            sub.line = start.line
            sub.column = start.column
            return sub
        case .table(let sub)? where sub.origin == .dotted:
            throw error("table [\(name)] is defined twice: dotted keys already defined it on line \(sub.line)", at: start)
        case .table(let sub)?:
            throw error("table [\(name)] is defined twice (first on line \(sub.line))", at: start)
        case .tables(let a)?:
            throw error("`\(name)` is an array of tables (line \(a.line)): write [[\(name)]] to add an element", at: start)
        case .value(let v)?:
            throw notATable(name, v, at: start)
        }
    }

    private func append(to array: TableArrayBuilder, at start: Mark) -> TableBuilder {
        let element = TableBuilder(origin: .header, line: start.line, column: start.column)
        array.elements.append(element)
        return element
    }

    private func notATable(_ name: String, _ value: TOMLValue, at mark: Mark) -> TOMLError {
        if case .table = value.kind {
            return error("`\(name)` is an inline table (line \(value.line)) and cannot be extended", at: mark)
        }
        return error("`\(name)` is already defined as \(value.kindDescription) on line \(value.line), not a table", at: mark)
    }

    static func line(of entry: TableBuilder.Entry) -> Int {
        switch entry {
        case .value(let v): v.line
        case .table(let t): t.line
        case .tables(let a): a.line
        }
    }

    /// A dotted key as it could be written: `gpio.buzzer`, `"my key".x`.
    static func keyText(_ keys: some Collection<KeyPart>) -> String {
        keys.map { TOMLParser.quotedKey($0.name) }.joined(separator: ".")
    }

    /// `name` as a bare key when it can be one, else as a basic string.
    static func quotedKey(_ name: String) -> String {
        let bare = !name.isEmpty && name.utf8.allSatisfy(isBareKeyByte)
        if bare { return name }
        var out = "\""
        for s in name.unicodeScalars {
            switch s {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if s.value < 0x20 || s.value == 0x7F {
                    let hex = String(s.value, radix: 16, uppercase: true)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(s)
                }
            }
        }
        return out + "\""
    }
}
