import FencepostJSON
import Testing

/// Outside text is UTF-8 or refused at its line and column.
struct StrictUTF8Tests {
    @Test func validTextPasses() throws {
        #expect(try StrictUTF8.decode(Array("Straße 🚗\nok".utf8)) == "Straße 🚗\nok")
    }

    @Test func invalidBytesAreNamedByLineAndColumn() {
        let cases: [([UInt8], Int, Int)] = [
            (Array("ab\ncd".utf8) + [0xE9] + Array("x".utf8), 2, 3),   // Latin-1 é
            ([0xC0, 0xAF], 1, 1),                                          // overlong '/'
            ([0xED, 0xA0, 0x80], 1, 1),                                    // a surrogate
            (Array("ü".utf8) + [0xF4, 0x90, 0x80, 0x80], 1, 2),            // past U+10FFFF
            (Array("x".utf8) + [0xE2, 0x82], 1, 2),                        // cut short
            ([0x80], 1, 1),                                                // a lone continuation
        ]
        for (bytes, line, column) in cases {
            let e = StrictUTF8.firstError(in: bytes)
            #expect(e?.line == line && e?.column == column, "\(bytes): \(String(describing: e))")
        }
    }
}
