// ConfigFile — the agent's human-edited configuration: a small TOML 1.0 reader written by hand,
// and a schema helper that turns a wrong value into "line 12: gpio.buzzer.pin: …".
//
// Why by hand: TOMLKit links full Foundation (design §7: an 18 MB RSS probe) and the daemon's goal
// is 12 MB. Pure: no Foundation, no I/O.
//
// Shape:
//   TOMLValue.swift      the tree: every value and table remembers its line and column
//   TOMLError.swift      a syntax error: line, column, what was expected
//   TOMLScanner.swift    bytes → keys, strings, numbers, date-times (lexical rules of TOML 1.0)
//   TOMLParser.swift     lines → tables: headers, dotted keys, arrays of tables, the
//                        "defined once" rules
//   TOMLJSON.swift       tree → FencepostJSON.JSONValue (requests in TOML decode like the socket's)
//   ConfigSection.swift  typed accessors with semantic errors, unknown keys with a suggestion
//
// Supported: comments; bare, quoted and dotted keys; [table] and [[array.of.tables]]; basic and
// literal strings, one-line and multi-line, all escapes (\uXXXX, \UXXXXXXXX); integers (decimal
// with `_`, 0x, 0o, 0b); floats (incl. inf, nan); booleans; arrays (multi-line, trailing comma,
// mixed types); inline tables; offset/local date-times, dates and times (kept as their text).

/// A TOML value with the place it starts in the document.
public struct TOMLValue: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case string(String)
        case integer(Int64)
        case float(Double)
        case boolean(Bool)
        /// An offset date-time, local date-time, local date or local time, as written
        /// ("1979-05-27T07:32:00Z", "07:32:00").
        case dateTime(String)
        case array([TOMLValue])
        case table(TOMLTable)
    }

    public var kind: Kind
    /// 1-based line where the value starts: for a table, its `[header]` line, the line of the
    /// first dotted key that created it, or its `{`.
    public var line: Int
    /// 1-based column (in Unicode scalars) where the value starts.
    public var column: Int

    public init(_ kind: Kind, line: Int, column: Int) {
        self.kind = kind
        self.line = line
        self.column = column
    }

    public var string: String? { if case .string(let s) = kind { s } else { nil } }
    public var integer: Int64? { if case .integer(let i) = kind { i } else { nil } }
    /// A float, or an integer read as a float.
    public var float: Double? {
        switch kind {
        case .float(let d): d
        case .integer(let i): Double(i)
        default: nil
        }
    }
    public var boolean: Bool? { if case .boolean(let b) = kind { b } else { nil } }
    public var dateTime: String? { if case .dateTime(let s) = kind { s } else { nil } }
    public var array: [TOMLValue]? { if case .array(let a) = kind { a } else { nil } }
    public var table: TOMLTable? { if case .table(let t) = kind { t } else { nil } }

    /// For messages: "a string", "an integer", "a float", "a boolean", "a date-time", "an array",
    /// "a table".
    public var kindDescription: String {
        switch kind {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a float"
        case .boolean: "a boolean"
        case .dateTime: "a date-time"
        case .array: "an array"
        case .table: "a table"
        }
    }
}

/// A TOML table: keys in document order, each at most once.
public struct TOMLTable: Sendable, Equatable {
    public var entries: [(key: String, value: TOMLValue)]

    public init(_ entries: [(key: String, value: TOMLValue)] = []) { self.entries = entries }

    /// The value of `key`, or nil.
    ///
    /// - Complexity: O(n) in the number of keys (config tables are small).
    public subscript(key: String) -> TOMLValue? {
        for entry in entries where entry.key == key { return entry.value }
        return nil
    }

    public var keys: [String] { entries.map { $0.key } }

    /// Follows a dotted path of keys through nested tables ("gpio", "buzzer", "pin").
    public func value(at path: [String]) -> TOMLValue? {
        guard let first = path.first, let value = self[first] else { return nil }
        if path.count == 1 { return value }
        return value.table?.value(at: Array(path.dropFirst()))
    }

    public static func == (a: TOMLTable, b: TOMLTable) -> Bool {
        a.entries.count == b.entries.count && zip(a.entries, b.entries).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}
