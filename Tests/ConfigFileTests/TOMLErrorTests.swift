import ConfigFile
import Testing

/// Each kind of syntax error, with the exact line and column reported and what was expected.
@Suite struct TOMLErrorTests {
    /// The error `text` must produce.
    static func failure(_ text: String) -> TOMLError? {
        do {
            _ = try TOML.parse(text)
            return nil
        } catch {
            return error
        }
    }

    static let cases: [(name: String, toml: String, line: Int, column: Int, message: String)] = [
        // Duplicate keys.
        ("duplicate key", "a = 1\nb = 2\na = 3", 3, 1, "duplicate key `a` (first defined on line 1)"),
        ("duplicate key in a table", "[t]\nx = 1\n\n  x = 2", 4, 3, "duplicate key `x` (first defined on line 2)"),
        ("duplicate quoted key", "\"a\" = 1\n'a' = 2", 2, 1, "duplicate key `a` (first defined on line 1)"),
        ("duplicate dotted key", "a.b = 1\na.b = 2", 2, 3, "duplicate key `a.b` (first defined on line 1)"),
        ("key over a table", "[a.b]\nx = 1\n[a]\nb = 2", 4, 1, "duplicate key `b` (first defined on line 1)"),
        ("duplicate key in an inline table", "p = { x = 1, x = 2 }", 1, 14, "duplicate key `x` (first defined on line 1)"),
        // Tables defined twice.
        ("table defined twice", "[a]\nx = 1\n[b]\n[a]", 4, 1, "table [a] is defined twice (first on line 1)"),
        ("sub-table defined twice", "[a.b]\n[a.b]", 2, 1, "table [a.b] is defined twice (first on line 1)"),
        ("implicit table defined twice", "[a.b]\n[a]\n[a]", 3, 1, "table [a] is defined twice (first on line 2)"),
        ("header over dotted keys", "[fruit]\napple.color = \"red\"\n\n[fruit.apple]", 4, 1,
         "table [fruit.apple] is defined twice: dotted keys already defined it on line 2"),
        ("dotted keys into a header table", "[a.b]\nz = 9\n[a]\nb.t = 1", 4, 1,
         "cannot add `b.t` with a dotted key: table `b` was defined by a [header] on line 1"),
        ("header over a value", "a = 1\n[a]", 2, 1, "`a` is already defined as an integer on line 1, not a table"),
        ("header through a value", "a = \"s\"\n[a.b]", 2, 2, "`a` is already defined as a string on line 1, not a table"),
        ("header over an inline table", "a = { x = 1 }\n[a]", 2, 1, "`a` is an inline table (line 1) and cannot be extended"),
        ("dotted key into an inline table", "a = { x = 1 }\na.y = 2", 2, 1, "`a` is an inline table (line 1) and cannot be extended"),
        ("table then array of tables", "[a]\n[[a]]", 2, 1, "cannot define [[a]]: `a` is already a table (line 1)"),
        ("array of tables then table", "[[a]]\n[a]", 2, 1, "`a` is an array of tables (line 1): write [[a]] to add an element"),
        ("append to a static array", "a = [1]\n[[a]]", 2, 1, "cannot append to `a` with [[a]]: it is an array written as a value on line 1"),
        // Strings.
        ("unterminated string", "a = 1\nname = \"abc\n", 2, 8, "unterminated string (expected `\"` before the end of the line)"),
        ("unterminated string at end of file", "name = \"abc", 1, 8, "unterminated string (expected `\"` before the end of the line)"),
        ("unterminated literal string", "name = 'abc\nb = 1", 1, 8, "unterminated string (expected `'` before the end of the line)"),
        ("unterminated multi-line string", "a = 1\ns = \"\"\"abc\n\ndef\n", 2, 5,
         "unterminated multi-line string (expected `\"\"\"` to close the string opened here)"),
        ("unterminated multi-line literal", "s = '''abc", 1, 5, "unterminated multi-line string (expected `'''` to close the string opened here)"),
        ("bad escape", "a = \"ok\"\ns = \"x\\qy\"", 2, 7,
         "invalid escape `\\q` (expected \\b, \\t, \\n, \\f, \\r, \\\", \\\\, \\uXXXX or \\UXXXXXXXX)"),
        ("bad escape in multi-line string", "s = \"\"\"\nab\\x\"\"\"", 2, 3,
         "invalid escape `\\x` (expected \\b, \\t, \\n, \\f, \\r, \\\", \\\\, \\uXXXX or \\UXXXXXXXX)"),
        ("short unicode escape", "s = \"\\u12\"", 1, 6, "invalid escape: `\\u` needs 4 hexadecimal digits"),
        ("surrogate escape", "s = \"\\uD800\"", 1, 6, "invalid escape: U+D800 is not a Unicode scalar value"),
        ("scalar beyond U+10FFFF", "s = \"\\U00110000\"", 1, 6, "invalid escape: U+110000 is not a Unicode scalar value"),
        ("control character in a string", "s = \"a\u{1}b\"", 1, 7, "control character U+0001 must be escaped in a string"),
        ("multi-line key", "\"\"\"k\"\"\" = 1", 1, 1, "a multi-line string cannot be a key"),
        // Missing `=`.
        ("missing equals", "[gpio]\npin 5", 2, 5, "expected `=` after key `pin`, found `5`"),
        ("missing equals at end of line", "pin\n= 5", 1, 4, "expected `=` after key `pin`, found end of line"),
        ("missing equals after dotted key", "gpio.\"pin x\" : 5", 1, 14, "expected `=` after key `gpio.\"pin x\"`, found `:`"),
        ("missing value", "a =\n", 1, 4, "expected a value (a string, number, boolean, date-time, array or inline table), found end of line"),
        ("missing value at end of file", "a = ", 1, 5, "expected a value (a string, number, boolean, date-time, array or inline table), found end of file"),
        ("bad key", "= 1", 1, 1, "expected a key, found `=`"),
        ("bad key character", "a$b = 1", 1, 2, "expected `=` after key `a`, found `$`"),
        // Trailing garbage.
        ("garbage after a value", "a = 1 x", 1, 7, "expected the end of the line after the value, found `x`"),
        ("two values on one line", "a = 1 b = 2", 1, 7, "expected the end of the line after the value, found `b`"),
        ("garbage after a string", "a = \"x\"y", 1, 8, "expected the end of the line after the value, found `y`"),
        ("garbage after a header", "[t] x = 1", 1, 5, "expected the end of the line after the table header, found `x`"),
        ("unclosed header", "[t\nx = 1", 1, 3, "expected `]` to close the table header, found end of line"),
        ("unclosed array-of-tables header", "[[t]\nx = 1", 1, 5, "expected `]]` to close the table header, found end of line"),
        // Numbers and other values.
        ("leading zero", "a = 0123", 1, 5, "invalid number `0123`: leading zeros are not allowed"),
        ("double underscore", "a = 1__0", 1, 5, "invalid number `1__0`: `_` must be between two digits"),
        ("trailing underscore", "a = 10_", 1, 5, "invalid number `10_`: `_` must be between two digits"),
        ("integer out of range", "a = 9223372036854775808", 1, 5, "integer `9223372036854775808` is out of range for a 64-bit integer"),
        ("hex out of range", "a = 0x8000000000000000", 1, 5, "integer `0x8000000000000000` is out of range for a 64-bit integer"),
        ("signed hex", "a = -0x10", 1, 5, "invalid number `-0x10`: a sign is not allowed on hexadecimal, octal or binary integers"),
        ("bad hex digit", "a = 0xG1", 1, 5, "invalid number `0xG1`: expected base-16 digits, with `_` only between digits"),
        ("fraction without digits", "a = 1.", 1, 5, "invalid number `1.`: expected digits after the decimal point"),
        ("exponent without digits", "a = 1e", 1, 5, "invalid number `1e`: expected digits in the exponent"),
        ("float out of range", "a = 1e400", 1, 5, "float `1e400` is out of range"),
        ("bare word", "a = yes", 1, 5, "expected a value (a string, number, boolean, date-time, array or inline table), found `yes`"),
        ("capitalized boolean", "a = True", 1, 5,
         "expected a value (a string, number, boolean, date-time, array or inline table), found `True`"),
        ("invalid date", "d = 2023-02-29", 1, 5, "invalid date-time `2023-02-29`"),
        ("invalid time", "t = 24:00:00", 1, 5, "invalid date-time `24:00:00`"),
        ("time without seconds", "t = 07:32", 1, 5, "invalid date-time `07:32`"),
        // Arrays and inline tables.
        ("array without comma", "a = [1 2]", 1, 8, "expected `,` or `]` in the array, found `2`"),
        ("unterminated array", "a = [1,\n2,\n", 3, 1, "unterminated array (expected `]` to close the array opened on line 1)"),
        ("array with an empty slot", "a = [1,,2]", 1, 8,
         "expected a value (a string, number, boolean, date-time, array or inline table), found `,`"),
        ("inline table over lines", "a = { x = 1,\n y = 2 }", 1, 13, "expected a key, found end of line (an inline table must be on one line)"),
        ("inline table trailing comma", "a = { x = 1, }", 1, 14, "a trailing comma is not allowed in an inline table"),
        ("inline table without comma", "a = { x = 1 y = 2 }", 1, 13, "expected `,` or `}` in the inline table, found `y`"),
        ("unterminated inline table", "a = { x = 1", 1, 12, "expected `,` or `}` in the inline table, found end of file (an inline table must be on one line)"),
        // Lines and columns.
        ("columns count characters, not bytes", "\"ü\" = \"x", 1, 7, "unterminated string (expected `\"` before the end of the line)"),
        ("CRLF lines are counted", "a = 1\r\nb = 2\r\nc = \r\n", 3, 5,
         "expected a value (a string, number, boolean, date-time, array or inline table), found end of line"),
        ("bare carriage return", "a = 1\rb = 2", 1, 6, "expected a line feed after a carriage return"),
        ("lines inside multi-line strings are counted", "s = \"\"\"\n1\n2\n\"\"\"\nt = x", 5, 5, "expected a value (a string, number, boolean, date-time, array or inline table), found `x`"),
        ("lines inside arrays are counted", "a = [\n  1,\n  # c\n  2,\n]\nb = 1\nb = 2", 7, 1, "duplicate key `b` (first defined on line 6)"),
        ("control character in a comment", "# a\u{7F}b", 1, 4, "control character U+007F is not allowed in a comment"),
    ]

    @Test(arguments: 0..<cases.count)
    func reportsLineColumnAndExpectation(index: Int) {
        let c = Self.cases[index]
        guard let e = Self.failure(c.toml) else {
            Issue.record("\(c.name): parsed without error")
            return
        }
        #expect(e.line == c.line, "\(c.name): \(e)")
        #expect(e.column == c.column, "\(c.name): \(e)")
        #expect(e.message == c.message, "\(c.name): \(e)")
        #expect(e.description == "line \(c.line), column \(c.column): \(c.message)")
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = "a = " + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(Self.failure(deep)?.message == "arrays and inline tables nested deeper than 64")
        let deepInline = "a = " + String(repeating: "{b=", count: 100) + "1" + String(repeating: "}", count: 100)
        #expect(Self.failure(deepInline)?.message == "arrays and inline tables nested deeper than 64")
        let longKey = (0..<100).map { "k\($0)" }.joined(separator: ".") + " = 1"
        #expect(Self.failure(longKey)?.message == "key nested deeper than 64 levels")
        let ok = "a = " + String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(Self.failure(ok) == nil)
    }
}
