import FencepostJSON
import Testing

/// Hand-written corpus: texts that must parse (with their value) and texts that must not (with
/// the message and byte offset a human gets).
@Suite struct JSONCorpusTests {
    // MARK: Valid

    static let valid: [(String, JSONValue)] = [
        ("null", .null),
        ("true", true),
        ("false", false),
        ("0", .integer(0)),
        ("-0", .number(-0.0)),
        ("42", 42),
        ("-42", -42),
        ("9223372036854775807", .integer(.max)),
        ("-9223372036854775808", .integer(.min)),
        ("9223372036854775808", .number(9223372036854775808.0)),
        ("1.5", 1.5),
        ("-0.25", -0.25),
        ("1e3", .number(1000)),
        ("1E+3", .number(1000)),
        ("1e-3", 0.001),
        ("0.1e1", .number(1)),
        ("1e-400", .number(0)),
        ("123456789012345678901234567890", .number(1.2345678901234568e29)),
        ("\"\"", ""),
        ("\"abc\"", "abc"),
        (#""\" \\ \/ \b \f \n \r \t""#, "\" \\ / \u{08} \u{0C} \n \r \t"),
        (#""\u0041\u00e9\u20AC""#, "Aé€"),
        (#""\uD83D\uDE00""#, "😀"),
        (#""\ud834\udd1e x""#, "𝄞 x"),
        ("\"héllo 😀 ü\"", "héllo 😀 ü"),
        (#""\u0000""#, "\u{0}"),
        ("\"\u{7F}\"", "\u{7F}"),
        ("[]", []),
        ("[ ]", []),
        ("{}", [:]),
        ("{ }", [:]),
        ("[1,2,3]", [1, 2, 3]),
        (" \t\r\n[ 1 , \"a\" , null ] \n", [1, "a", .null]),
        (#"{"a":1,"b":[true,{"c":null}]}"#, ["a": 1, "b": [true, ["c": .null]]]),
        (#"{"b":1,"a":2}"#, ["b": 1, "a": 2]),
        (#"{"":0}"#, ["": 0]),
        (#"{"a\u0000b":1}"#, ["a\u{0}b": 1]),
        (#"[[[[[[[[[[]]]]]]]]]]"#, [[[[[[[[[[]]]]]]]]]]),
    ]

    @Test func validCorpusParses() throws {
        for (text, expected) in Self.valid {
            let value = try JSONValue.parse(text)
            #expect(value == expected, "\(text)")
        }
    }

    @Test func integersStayExact() throws {
        #expect(try JSONValue.parse("9007199254740993") == .integer(9_007_199_254_740_993))
        if case .integer(let i) = try JSONValue.parse("9007199254740993") {
            #expect(i == 9_007_199_254_740_993)
        } else {
            Issue.record("expected .integer")
        }
        if case .number = try JSONValue.parse("2.0") {} else { Issue.record("2.0 must be a double") }
        if case .number(let d) = try JSONValue.parse("-0") { #expect(d.sign == .minus) } else { Issue.record("-0") }
    }

    @Test func numericEquality() {
        #expect(JSONValue.integer(1) == .number(1.0))
        #expect(JSONValue.integer(1).hashValue == JSONValue.number(1.0).hashValue)
        #expect(JSONValue.integer(1) != .number(1.5))
        #expect(JSONValue.integer(9_007_199_254_740_993) != .number(9_007_199_254_740_992))
        #expect(JSONValue.string("1") != .integer(1))
        #expect(JSONValue(dictionaryLiteral: ("a", 1), ("b", 2)) != ["b": 2, "a": 1], "objects compare in order")
    }

    @Test func inputKinds() throws {
        let text = #"{"k":[1,"é"]}"#
        let expected: JSONValue = ["k": [1, "é"]]
        #expect(try JSONValue.parse(text) == expected)
        #expect(try JSONValue.parse(Array(text.utf8)) == expected)
        #expect(try JSONValue.parse(Array(text.utf8)[...]) == expected)
        #expect(try JSONValue.parse(text.utf8) == expected)
        #expect(try Array(text.utf8).withUnsafeBytes { (raw) throws(JSONError) in try JSONValue.parse(raw) } == expected)
        // A collection without contiguous storage is copied.
        #expect(try JSONValue.parse(text.utf8.lazy.map { $0 }) == expected)
        // Substring of a String (non-zero start).
        let line = "xx" + text
        #expect(try JSONValue.parse(String(line.dropFirst(2))) == expected)
    }

    // MARK: Invalid

    /// (text, message, offset)
    static let invalid: [(String, String, Int)] = [
        ("", "unexpected end of input, expected a value", 0),
        ("   ", "unexpected end of input, expected a value", 3),
        ("nul", "invalid literal, expected 'null'", 0),
        ("tru", "invalid literal, expected 'true'", 0),
        ("trUe", "invalid literal, expected 'true'", 0),
        ("falsey", "trailing characters", 5),
        ("NaN", "unexpected 'N', expected a value", 0),
        ("Infinity", "unexpected 'I', expected a value", 0),
        ("-Infinity", "expected a digit after '-'", 1),
        ("+1", "unexpected '+', expected a value", 0),
        ("01", "leading zero in number", 0),
        ("-01", "leading zero in number", 1),
        ("1.", "expected a digit after '.' in number", 2),
        (".5", "unexpected '.', expected a value", 0),
        ("1.e5", "expected a digit after '.' in number", 2),
        ("1e", "expected a digit in exponent of number", 2),
        ("1e+", "expected a digit in exponent of number", 3),
        ("-", "expected a digit after '-'", 1),
        ("1e400", "number out of range", 0),
        ("[-1e309]", "number out of range", 1),
        ("0x10", "trailing characters", 1),
        ("1 2", "trailing characters", 2),
        ("{} {}", "trailing characters", 3),
        ("\"abc", "unterminated string", 0),
        ("[\"abc", "unterminated string", 1),
        ("\"ab\\", "unterminated string", 3),
        ("\"a\nb\"", "unescaped control character U+000A in string (write it as an escape)", 2),
        ("\"a\tb\"", "unescaped control character U+0009 in string (write it as an escape)", 2),
        ("\"a\\x\"", "invalid escape '\\x' in string", 2),
        ("\"\\u12\"", "invalid \\u escape", 1),
        ("\"\\u12G4\"", "invalid \\u escape", 1),
        ("\"\\uD800\"", "invalid \\u escape: unpaired surrogate", 1),
        ("\"\\uD800\\u0041\"", "invalid \\u escape: unpaired surrogate", 1),
        ("\"\\uDC00\"", "invalid \\u escape: unpaired surrogate", 1),
        ("\"\\uD800x\"", "invalid \\u escape: unpaired surrogate", 1),
        ("[1,]", "unexpected ']', expected a value", 3),
        ("[1 2]", "expected ',' or ']' after array element, found '2'", 3),
        ("[1", "unexpected end of input, expected ',' or ']' after array element", 2),
        ("[", "unexpected end of input, expected a value", 1),
        ("{", "unexpected end of input, expected a string key", 1),
        ("{\"a\"}", "expected ':' after object key", 4),
        (#"{"after": 1, "tz" "x"}"#, "expected ':' after object key", 18),
        ("{\"a\":}", "unexpected '}', expected a value", 5),
        ("{\"a\":1,}", "expected a string key, found '}'", 7),
        ("{a:1}", "expected a string key, found 'a'", 1),
        ("{'a':1}", "expected a string key, found '''", 1),
        ("{\"a\":1 \"b\":2}", "expected ',' or '}' after object member, found '\"'", 7),
        ("{\"a\":1", "unexpected end of input, expected ',' or '}' after object member", 6),
        (#"{"a":1,"a":2}"#, "duplicate key \"a\"", 7),
        ("\u{FEFF}1", "unexpected byte 0xEF, expected a value", 0),
        ("[1]\u{0}", "trailing characters", 3),
        ("/* c */ 1", "unexpected '/', expected a value", 0),
    ]

    @Test func invalidCorpusFailsWithMessageAndOffset() {
        for (text, message, offset) in Self.invalid {
            #expect(throws: JSONError(offset: offset, message: message), "\(text)") {
                try JSONValue.parse(text)
            }
        }
    }

    @Test func errorDescriptionReadsWell() {
        do {
            _ = try JSONValue.parse(#"{"after": 1, "tz" "x"}"#)
            Issue.record("must fail")
        } catch {
            #expect(error.description == "expected ':' after object key at byte 18")
        }
    }

    @Test func invalidUTF8IsRejected() throws {
        let cases: [[UInt8]] = [
            [0x22, 0xC0, 0x80, 0x22],              // overlong NUL
            [0x22, 0xC3, 0x22],                    // truncated 2-byte
            [0x22, 0xE0, 0x80, 0x80, 0x22],        // overlong 3-byte
            [0x22, 0xED, 0xA0, 0x80, 0x22],        // encoded surrogate
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
            [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22],
            [0x22, 0x80, 0x22],                    // stray continuation
            [0x22, 0xE2, 0x82],                    // cut at end of input
            [0x22, 0x5C, 0x6E, 0xFF, 0x22],        // after an escape (slow path)
        ]
        for bytes in cases {
            #expect(throws: JSONError.self, "\(bytes)") { try JSONValue.parse(bytes) }
        }
        #expect(try JSONValue.parse([0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22]) == "😀")
    }

    @Test func nestingLimit() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONValue.parse(ok) }
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONError(offset: 64, message: "nesting deeper than 64")) { try JSONValue.parse(deep) }
        let objects = String(repeating: #"{"a":"#, count: 65) + "1" + String(repeating: "}", count: 65)
        #expect(throws: JSONError(offset: 5 * 64, message: "nesting deeper than 64")) { try JSONValue.parse(objects) }
        // Hostile depth fails fast instead of overflowing the stack.
        #expect(throws: JSONError.self) { try JSONValue.parse(String(repeating: "[", count: 1_000_000)) }
    }

    @Test func duplicateKeysInLargeObjects() {
        var text = "{"
        for k in 0..<100 { text += "\"k\(k)\":\(k)," }
        text += "\"k57\":0}"
        #expect(throws: JSONError.self) { try JSONValue.parse(text) }
    }

    // MARK: Lookup

    @Test func lookupHelpers() throws {
        let v = try JSONValue.parse(#"{"a":1,"b":2.5,"c":"x","d":[true,null],"e":3.0,"f":1e300}"#)
        #expect(v["a"]?.int == 1)
        #expect(v["a"]?.double == 1.0)
        #expect(v["b"]?.int == nil)
        #expect(v["b"]?.double == 2.5)
        #expect(v["c"]?.string == "x")
        #expect(v["c"]?.int == nil)
        #expect(v["d"]?[0]?.bool == true)
        #expect(v["d"]?[1]?.isNull == true)
        #expect(v["d"]?[2] == nil)
        #expect(v["e"]?.int == 3)
        #expect(v["f"]?.int == nil)
        #expect(v["zz"] == nil)
        #expect(v["a"]?["a"] == nil)
        #expect(v.object?.map(\.key) == ["a", "b", "c", "d", "e", "f"])
        #expect(v["d"]?.array?.count == 2)
        #expect(v.kindDescription == "an object")
    }

    // MARK: Serializer

    @Test func serializerIsCompactAndEscapes() {
        let v: JSONValue = [
            "s": "q\" b\\ n\n r\r t\t b\u{08} f\u{0C} nul\u{0} us\u{1F} del\u{7F} é 😀 /",
            "n": [1, -2, 1.5, .number(-0.0), .number(1e300), .number(.infinity), .null, true, false],
            "o": [:], "a": [],
        ]
        #expect(v.serialized() == #"{"s":"q\" b\\ n\n r\r t\t b\b f\f nul\u0000 us\u001F del"#
            + "\u{7F} é 😀 /\",\"n\":[1,-2,1.5,-0.0,1e+300,null,null,true,false],\"o\":{},\"a\":[]}")
    }

    @Test func corpusRoundTrips() throws {
        for (text, _) in Self.valid {
            let v = try JSONValue.parse(text)
            let again = try JSONValue.parse(v.serialized())
            #expect(again == v, "\(text)")
            #expect(again.serialized() == v.serialized(), "\(text)")
        }
    }
}

/// `parse(_:keepingTextOf:)`: the bytes of one top-level member's value as written.
@Suite struct JSONMemberTextTests {
    static func text(_ json: String, _ key: String) throws -> String? {
        var json = json
        return try json.withUTF8 { bytes in
            try JSONValue.parse(bytes, keepingTextOf: key).memberText.map { String(decoding: $0, as: UTF8.self) }
        }
    }

    @Test func theTopLevelMemberOnlyAsWritten() throws {
        #expect(try Self.text(#"{"a":{"id":2},"id":  1e3 , "b":[{"id":3}]}"#, "id") == "1e3")
        #expect(try Self.text(#"{"id":12345678901234567890}"#, "id") == "12345678901234567890")
        #expect(try Self.text(#"{"id":"caf\u00e9"}"#, "id") == #""caf\u00e9""#)
        #expect(try Self.text(#" {"\u0069d" : -0.0e+00 } "#, "id") == "-0.0e+00")
        #expect(try Self.text(#"{"id":{"x":[1, 2]}}"#, "id") == #"{"x":[1, 2]}"#)
        #expect(try Self.text(#"{"a":{"id":2}}"#, "id") == nil)
        #expect(try Self.text(#"[{"id":2}]"#, "id") == nil)
        #expect(try Self.text(#""id""#, "id") == nil)
        // The value is the same as parse(_:) gives.
        var line = #"{"jsonrpc":"2.0","id":7,"method":"x"}"#
        let both = try line.withUTF8 { try JSONValue.parse($0, keepingTextOf: "id") }
        #expect(both.value == (try JSONValue.parse(line)))
        // Errors stay errors.
        var bad = #"{"id":1,"id":2}"#
        #expect(throws: JSONError.self) { try bad.withUTF8 { try JSONValue.parse($0, keepingTextOf: "id") } }
    }
}
