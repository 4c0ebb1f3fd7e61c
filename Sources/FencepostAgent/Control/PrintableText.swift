// Text that came from outside — a title, an id, a file's contents, a peer's message — on its way
// to a person: a log line (the journal) or the CLI's tables and sentences. Written as it is, a
// newline in a title starts a new journal entry with a priority of the writer's choosing
// (`ok\n<0>fencepost: …` is an emergency), and ESC or NUL reach the terminal, which obeys them.
// Every log line and every human table or sentence goes through ``PrintableText/escaped(_:)``;
// JSON output needs nothing more (its serializer escapes every control character).

/// The one escaping of text for logs and terminals.
public enum PrintableText {
    /// `text` with each character that is not printable text written as a visible escape, so
    /// that one line stays one line and a terminal or the journal only shows it:
    ///
    ///   newline, CR, tab              `\n`, `\r`, `\t`
    ///   other C0 controls, DEL, C1    `\u{1B}`, `\u{7F}`, `\u{9B}` (C1's CSI drives some terminals)
    ///   U+2028, U+2029                `\u{2028}`: line and paragraph separators
    ///   bidi embeddings, overrides,   `\u{202E}` …: they reorder what follows on the line
    ///   isolates
    ///
    /// Everything else — backslashes included, so that an id shown can be copied back as it is —
    /// is kept. Text with nothing to escape is returned as it is, without a copy.
    ///
    /// - Complexity: O(n) in the UTF-8 length.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else { out.unicodeScalars.append(scalar); continue }
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            default: out += "\\u{" + hex(scalar.value) + "}"
            }
        }
        return out
    }

    /// Whether `scalar` is written as an escape by ``escaped(_:)``.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00 ..< 0x20, 0x7F ... 0x9F: true
        case 0x2028, 0x2029, 0x202A ... 0x202E, 0x2066 ... 0x2069: true
        default: false
        }
    }

    /// Upper-case hex, at least two digits.
    static func hex(_ v: UInt32) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        var v = v
        repeat { out.append(digits[Int(v & 0xF)]); v >>= 4 } while v != 0
        if out.count < 2 { out.append(UInt8(ascii: "0")) }
        return String(decoding: out.reversed(), as: UTF8.self)
    }
}
