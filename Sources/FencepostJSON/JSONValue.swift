// FencepostJSON — a small, fast JSON (RFC 8259) reader and writer, written by hand.
//
// Why by hand: the daemon must not link Foundation (design §1, §7: Foundation costs 5–11 MB of
// RSS and its `TimeZone` is unusable with a static stdlib), and no Foundation-free JSON library is
// available to this project. This target is pure: no Foundation, no I/O, no global state.
//
// Shape:
//   JSONValue.swift       the value type, equality, lookup helpers, literals
//   JSONParser.swift      bytes → JSONValue (strict RFC 8259, typed errors with byte offsets)
//   JSONSerializer.swift  JSONValue → compact UTF-8 text
//   JSONError.swift       the error: a byte offset and a sentence a human understands
//
// Numbers keep an exact integer path: a literal without fraction or exponent that fits `Int64`
// parses as `.integer`, so identifiers and counters survive a round trip bit for bit; every other
// number is a `Double` (`.number`). Objects keep their members in document order; duplicate keys
// are an error rather than a silent "last one wins".

/// A JSON value (RFC 8259).
///
/// Objects are an ordered list of members, not a `Dictionary`: document order is kept and a
/// key occurs at most once (the parser rejects duplicates).
///
/// Equality is structural, with one exception: numbers compare by numeric value, so
/// `.integer(1) == .number(1.0)`. Objects compare member by member in order.
public enum JSONValue: Sendable {
    case null
    case bool(Bool)
    /// An integral literal that fits `Int64` (`42`, `-7`). `-0` parses as `.number(-0.0)`.
    case integer(Int64)
    /// Any other number (`1.5`, `1e3`, integers beyond `Int64`). Always finite when parsed.
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// Members in document order; keys are unique.
    case object([(key: String, value: JSONValue)])
}

// MARK: - Equality and hashing

extension JSONValue: Hashable {
    /// `d` as an `Int64` when it is integral and in range, else nil.
    @inlinable
    static func exactInteger(_ d: Double) -> Int64? { Int64(exactly: d) }

    /// - Complexity: O(n) in the size of the smaller value.
    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.integer(x), .integer(y)): return x == y
        case let (.number(x), .number(y)): return x == y
        case let (.integer(x), .number(y)), let (.number(y), .integer(x)): return exactInteger(y) == x
        case let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)):
            guard x.count == y.count else { return false }
            for (m, n) in zip(x, y) where m.key != n.key || m.value != n.value { return false }
            return true
        default: return false
        }
    }

    /// - Complexity: O(n) in the size of the value.
    public func hash(into h: inout Hasher) {
        switch self {
        case .null: h.combine(0 as UInt8)
        case .bool(let b): h.combine(1 as UInt8); h.combine(b)
        case .integer(let i): h.combine(2 as UInt8); h.combine(i)
        case .number(let d):
            // Consistent with ==: an integral double hashes like the equal integer.
            if let i = Self.exactInteger(d) { h.combine(2 as UInt8); h.combine(i) }
            else { h.combine(3 as UInt8); h.combine(d) }
        case .string(let s): h.combine(4 as UInt8); h.combine(s)
        case .array(let a): h.combine(5 as UInt8); h.combine(a)
        case .object(let o):
            h.combine(6 as UInt8); h.combine(o.count)
            for m in o { h.combine(m.key); h.combine(m.value) }
        }
    }
}

// MARK: - Lookup

extension JSONValue {
    /// The value of member `key` when `self` is an object that has it, else nil.
    ///
    /// - Complexity: O(m), m the number of members (objects in this project are small; a linear
    ///   scan beats hashing below a few dozen members).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for m in members where m.key == key { return m.value }
        return nil
    }

    /// Element `index` when `self` is an array and the index is in range, else nil.
    ///
    /// - Complexity: O(1).
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The number as an `Int64` when it is integral and in range (`3` and `3.0`, not `3.5`).
    public var int64: Int64? {
        switch self {
        case .integer(let i): return i
        case .number(let d): return Self.exactInteger(d)
        default: return nil
        }
    }

    /// The number as an `Int` when it is integral and in range (`3` and `3.0`, not `3.5`).
    public var int: Int? { int64.flatMap { Int(exactly: $0) } }

    /// The number as a `Double` (integers beyond 2⁵³ are rounded).
    public var double: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .number(let d): return d
        default: return nil
        }
    }

    public var string: String? { if case .string(let s) = self { s } else { nil } }
    public var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var array: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    public var object: [(key: String, value: JSONValue)]? { if case .object(let o) = self { o } else { nil } }
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// A short name of the kind of value, for messages: "null", "a boolean", "a number",
    /// "a string", "an array", "an object".
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// Members in the order written. Duplicate keys in a literal are a programming error.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(elements.map { (key: $0.0, value: $0.1) })
    }
}
