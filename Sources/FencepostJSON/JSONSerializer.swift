// The serializer: compact JSON text (no whitespace), UTF-8, members in stored order.
//
// Strings escape `"` `\` and every control character below U+0020 (`\b \f \n \r \t` by name, the
// rest as `\u00XX`); everything else, including non-ASCII, is written as UTF-8. Numbers: integers
// in decimal; doubles in Swift's shortest round-tripping form (`0.1`, `1e+100`, `-0.0`), which is
// valid JSON and parses back to the same `Double`. NaN and infinities have no JSON form and are
// written as `null` (as JavaScript's `JSON.stringify` does); the parser never produces them.

extension JSONValue {
    /// Compact JSON text of this value.
    ///
    /// - Complexity: O(n) in the size of the output.
    public func serialized() -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        serialize(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the compact JSON text of this value to `out`.
    ///
    /// - Complexity: O(n) in the size of the output.
    public func serialize(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .integer(let i): out.append(contentsOf: String(i).utf8)
        case .number(let d):
            if d.isFinite { out.append(contentsOf: d.description.utf8) } else { out.append(contentsOf: "null".utf8) }
        case .string(let s): JSONValue.serializeString(s, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (k, e) in elements.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                e.serialize(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (k, m) in members.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.serializeString(m.key, into: &out)
                out.append(UInt8(ascii: ":"))
                m.value.serialize(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `s` as a quoted, escaped JSON string.
    ///
    /// - Complexity: O(n) in the UTF-8 length of `s`.
    public static func serializeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: one bulk copy (byte-by-byte appends were 8% of applying a
        // million zones, which serializes every request twice).
        var text = s
        let plain = text.withUTF8 { bytes in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if plain {
            out.append(UInt8(ascii: "\""))
            return
        }
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "\\"))
            case 0x0A: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
            case 0x08: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "f"))
            case 0..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(contentsOf: hex2(b).utf8)
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text (same as ``serialized()``).
    public var description: String { serialized() }
}
