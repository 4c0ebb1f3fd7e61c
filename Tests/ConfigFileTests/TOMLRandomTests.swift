import ConfigFile
import SeededRandom
import Testing

/// Seeded random documents: a random tree is written as TOML in randomly chosen styles (headers,
/// dotted keys or inline tables; `[[ ]]` or inline arrays of tables; basic, literal and multi-line
/// strings with random escapes; decimal with `_`, hex, octal and binary integers; one-line and
/// multi-line arrays with comments; LF or CRLF), parsed back, and compared with the tree.
@Suite struct TOMLRandomTests {
    /// The reference tree (no positions).
    indirect enum Node {
        case string(String)
        case integer(Int64)
        case float(Double)
        case boolean(Bool)
        case dateTime(String)
        case array([Node])
        case table([(key: String, value: Node)])

        init(_ v: TOMLValue) {
            switch v.kind {
            case .string(let s): self = .string(s)
            case .integer(let i): self = .integer(i)
            case .float(let d): self = .float(d)
            case .boolean(let b): self = .boolean(b)
            case .dateTime(let s): self = .dateTime(s)
            case .array(let a): self = .array(a.map(Node.init))
            case .table(let t): self = .table(t.entries.map { (key: $0.key, value: Node($0.value)) })
            }
        }

        /// Equal content; table keys compared as sets (the writer moves sub-tables after plain keys);
        /// NaN equals NaN.
        func same(_ other: Node) -> Bool {
            switch (self, other) {
            case let (.string(a), .string(b)): return a == b
            case let (.integer(a), .integer(b)): return a == b
            case let (.float(a), .float(b)): return a == b || (a.isNaN && b.isNaN)
            case let (.boolean(a), .boolean(b)): return a == b
            case let (.dateTime(a), .dateTime(b)): return a == b
            case let (.array(a), .array(b)): return a.count == b.count && zip(a, b).allSatisfy { $0.same($1) }
            case let (.table(a), .table(b)):
                guard a.count == b.count else { return false }
                for (k, v) in a {
                    guard let w = b.first(where: { $0.key == k })?.value, v.same(w) else { return false }
                }
                return true
            default: return false
            }
        }

        var isTable: Bool { if case .table = self { true } else { false } }
        var entries: [(key: String, value: Node)] { if case .table(let e) = self { e } else { [] } }
        /// A non-empty array of tables: may be written as `[[…]]`.
        var isArrayOfTables: Bool {
            if case .array(let a) = self { return !a.isEmpty && a.allSatisfy(\.isTable) }
            return false
        }
    }

    // MARK: Generating trees

    struct Generator {
        var rng: SplitMix64

        static let keyPool = ["a", "b", "c", "key", "bare_key", "bare-key", "1234", "x1", "", " ", "a.b", "ü", "\"q\"",
                              "#", "with space", "'", "tab\there", "line\nbreak", "🚐", "=", "[x]"]
        static let charPool: [String] = ["a", "b", "Z", "0", " ", "\"", "'", "\\", "#", "=", "[", "]", "{", "}", ",", ".",
                                         "\n", "\t", "\r", "\u{0}", "\u{1F}", "\u{7F}", "\u{8}", "\u{C}", "é", "🚐", "ʎ",
                                         "\u{FEFF}", "\u{2028}", "€"]

        mutating func key() -> String {
            rng.chance(0.6) ? rng.pick(Array(Self.keyPool.prefix(7))) + (rng.chance(0.3) ? String(rng.int(0...9)) : "")
                : rng.pick(Self.keyPool)
        }

        mutating func string() -> String {
            (0..<rng.int(0...12)).map { _ in rng.pick(Self.charPool) }.joined()
        }

        mutating func integer() -> Int64 {
            switch rng.int(0...3) {
            case 0: return rng.pick([0, 1, -1, .max, .min, 1000, -17, 0x7FFF_FFFF])
            case 1: return Int64(rng.int(-100_000...100_000))
            default: return Int64(bitPattern: rng.next())
            }
        }

        mutating func float() -> Double {
            switch rng.int(0...4) {
            case 0: return rng.pick([0.0, -0.0, 0.1, 1.0, -1.5, 1e300, -1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1e16,
                                     .infinity, -.infinity, .nan, 6.626e-34, 224_617.445_991_228])
            case 1: return rng.uniform(-1e6, 1e6)
            default:
                while true {
                    let d = Double(bitPattern: rng.next())
                    if d.isFinite { return d }
                }
            }
        }

        mutating func dateTime() -> String {
            func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
            let y = rng.int(0...9999), m = rng.int(1...12), d = rng.int(1...28)
            let year = String(repeating: "0", count: 4 - String(y).count) + String(y)
            let date = "\(year)-\(two(m))-\(two(d))"
            var time = "\(two(rng.int(0...23))):\(two(rng.int(0...59))):\(two(rng.int(0...59)))"
            if rng.chance(0.3) { time += "." + String(rng.int(0...999_999)) }
            switch rng.int(0...3) {
            case 0: return date
            case 1: return time
            case 2: return date + rng.pick(["T", "t", " "]) + time
            default:
                let offset = rng.pick(["Z", "z", "+05:30", "-07:00", "+00:00"])
                return date + rng.pick(["T", " "]) + time + offset
            }
        }

        mutating func value(depth: Int) -> Node {
            if depth < 4 && rng.chance(depth == 0 ? 0.5 : 0.3) {
                switch rng.int(0...3) {
                case 0: return .array((0..<rng.int(0...4)).map { _ in value(depth: depth + 1) })
                case 1: return .array((0..<rng.int(1...3)).map { _ in table(depth: depth + 1) })
                default: return table(depth: depth + 1)
                }
            }
            switch rng.int(0...5) {
            case 0, 1: return .string(string())
            case 2: return .integer(integer())
            case 3: return .float(float())
            case 4: return .boolean(rng.chance(0.5))
            default: return .dateTime(dateTime())
            }
        }

        mutating func table(depth: Int) -> Node {
            var seen = Set<String>()
            var entries: [(key: String, value: Node)] = []
            for _ in 0..<rng.int(0...(depth == 0 ? 10 : 5)) {
                let k = key()
                if seen.insert(k).inserted { entries.append((key: k, value: value(depth: depth))) }
            }
            return .table(entries)
        }
    }

    // MARK: Writing TOML in random styles

    struct Writer {
        var rng: SplitMix64
        var out = ""
        var line = 1
        /// Lines of the top-level plain keys, to check the parser's positions.
        var rootLines: [String: Int] = [:]

        mutating func emit(_ text: String) {
            out += text
            line += text.utf8.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
        }

        mutating func blank() {
            switch rng.int(0...5) {
            case 0: emit("\n")
            case 1: emit("# a comment with \"quotes\" and [brackets] = x\n")
            case 2: emit("   \t\n")
            default: break
            }
        }

        mutating func space() -> String { rng.pick(["", " ", "  ", "\t"]) }

        mutating func key(_ k: String) -> String {
            let bare = !k.isEmpty && k.utf8.allSatisfy { c in
                (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 95 || c == 45
            }
            if bare && rng.chance(0.8) { return k }
            if literalAllowed(k, multiLine: false) && rng.chance(0.5) { return "'" + k + "'" }
            return basic(k)
        }

        /// Whether `s` can be written as a literal string: no control characters but tab (and
        /// newline when multi-line); no `'` on one line; no `'''` in a multi-line one (up to two
        /// quotes may end it).
        func literalAllowed(_ s: String, multiLine: Bool) -> Bool {
            if multiLine && s.contains("'''") { return false }
            return s.unicodeScalars.allSatisfy { c in
                (multiLine || c != "'") && c != "\r" && (c == "\t" || (multiLine && c == "\n") || (c.value >= 0x20 && c.value != 0x7F))
            }
        }

        mutating func escapeScalar(_ c: Unicode.Scalar) -> String {
            func hex(_ v: UInt32, _ width: Int) -> String {
                let h = String(v, radix: 16, uppercase: rng.chance(0.5))
                return String(repeating: "0", count: width - h.count) + h
            }
            switch c {
            case "\"": return "\\\""
            case "\\": return "\\\\"
            case "\n": return rng.chance(0.5) ? "\\n" : "\\u000A"
            case "\t": return rng.pick(["\\t", "\t", "\\u0009"])
            case "\u{8}": return "\\b"
            case "\u{C}": return "\\f"
            case "\r": return "\\r"
            default:
                if c.value < 0x20 || c.value == 0x7F { return "\\u" + hex(c.value, 4) }
                if c.value > 0x7F {
                    switch rng.int(0...2) {
                    case 0: return c.value <= 0xFFFF ? "\\u" + hex(c.value, 4) : "\\U" + hex(c.value, 8)
                    case 1: return "\\U" + hex(c.value, 8)
                    default: return String(c)
                    }
                }
                return String(c)
            }
        }

        mutating func basic(_ s: String) -> String {
            "\"" + s.unicodeScalars.map { escapeScalar($0) }.joined() + "\""
        }

        mutating func string(_ s: String) -> String {
            switch rng.int(0...3) {
            case 0 where literalAllowed(s, multiLine: false): return "'" + s + "'"
            case 1:
                // Multi-line basic: raw newlines, everything else escaped as needed; a line-ending
                // backslash somewhere adds nothing.
                var body = ""
                var rawQuotes = 0
                for c in s.unicodeScalars {
                    var piece = c == "\n" && rng.chance(0.7) ? "\n" : escapeScalar(c)
                    // Up to two quotes in a row may stay raw, also right before the closing `"""`.
                    if c == "\"" && rawQuotes < 2 && rng.chance(0.7) { piece = "\"" }
                    rawQuotes = piece == "\"" ? rawQuotes + 1 : 0
                    // A line-ending backslash also eats the whitespace after it: only before
                    // something that is not whitespace.
                    if rng.chance(0.05), let first = piece.first, first != " ", first != "\t", first != "\n" {
                        body += "\\\n    \n  "
                    }
                    body += piece
                }
                return "\"\"\"\n" + body + "\"\"\""
            case 2 where literalAllowed(s, multiLine: true): return "'''\n" + s + "'''"
            default: return basic(s)
            }
        }

        mutating func integer(_ v: Int64) -> String {
            func underscores(_ digits: String) -> String {
                var r = ""
                for (k, ch) in digits.enumerated() {
                    if k > 0 && rng.chance(0.15) { r += "_" }
                    r.append(ch)
                }
                return r
            }
            if v >= 0 && rng.chance(0.3) {
                let (prefix, radix) = rng.pick([("0x", 16), ("0o", 8), ("0b", 2)])
                return prefix + underscores(String(v, radix: radix, uppercase: rng.chance(0.5)))
            }
            let magnitude = String(v.magnitude)
            let sign = v < 0 ? "-" : (rng.chance(0.2) ? "+" : "")
            return sign + underscores(magnitude)
        }

        mutating func float(_ d: Double) -> String {
            if d.isNaN { return rng.pick(["nan", "+nan", "-nan"]) }
            if d.isInfinite { return d > 0 ? rng.pick(["inf", "+inf"]) : "-inf" }
            let text = d.description  // always has "." or "e": "1.0", "1e-05", "5e-324"
            return d > 0 && rng.chance(0.2) ? "+" + text : text
        }

        /// A value on the right of `=` or in an array (tables inline).
        mutating func inline(_ n: Node, indent: String = "") -> String {
            switch n {
            case .string(let s): return string(s)
            case .integer(let i): return integer(i)
            case .float(let d): return float(d)
            case .boolean(let b): return b ? "true" : "false"
            case .dateTime(let s): return s
            case .array(let a):
                if a.isEmpty { return rng.pick(["[]", "[ ]", "[\n]", "[ # empty\n]"]) }
                if rng.chance(0.5) {
                    return "[" + space() + a.map { inline($0) }.joined(separator: "," + space()) + space() + "]"
                }
                var s = "[\n"
                for (k, e) in a.enumerated() {
                    s += indent + "  " + inline(e, indent: indent + "  ")
                    if k < a.count - 1 || rng.chance(0.5) { s += "," }
                    if rng.chance(0.3) { s += " # element \(k)" }
                    s += "\n"
                    if rng.chance(0.2) { s += "\n" }
                }
                return s + indent + "]"
            case .table(let entries):
                if entries.isEmpty { return rng.pick(["{}", "{ }"]) }
                return "{" + space() + entries.map { key($0.key) + space() + "=" + space() + inline($0.value, indent: indent) }
                    .joined(separator: "," + space()) + space() + "}"
            }
        }

        /// `key = value` lines for the plain entries of a table at `prefix` (dotted keys), and
        /// returns the entries that go under headers.
        mutating func plainLines(_ entries: [(key: String, value: Node)], prefix: [String], atRoot: Bool)
            -> [(key: String, value: Node, arrayOfTables: Bool)]
        {
            var deferred: [(key: String, value: Node, arrayOfTables: Bool)] = []
            for (k, v) in entries {
                let style = rng.int(0...2)
                if v.isTable && !v.entries.isEmpty && style == 0 {
                    // Dotted keys: the sub-table's entries as `k.sub = …` here.
                    // (Below a prefix nothing is deferred: nested tables are dotted or inline.)
                    _ = plainLines(v.entries, prefix: prefix + [key(k)], atRoot: false)
                    continue
                }
                if v.isTable && style == 1 && prefix.isEmpty { deferred.append((k, v, false)); continue }
                if v.isArrayOfTables && style >= 1 && prefix.isEmpty { deferred.append((k, v, true)); continue }
                blank()
                if atRoot && prefix.isEmpty { rootLines[k] = line }
                emit((prefix + [key(k)]).joined(separator: rng.pick([".", " . "])) + space() + "=" + space() + inline(v) + space()
                     + (rng.chance(0.2) ? "# trailing comment" : "") + "\n")
            }
            return deferred
        }

        /// A table's body under the header path `path`: plain lines, then its header tables.
        mutating func section(_ entries: [(key: String, value: Node)], path: [String], atRoot: Bool = false) {
            let deferred = plainLines(entries, prefix: [], atRoot: atRoot)
            var order = Array(deferred.indices)
            order.shuffle(using: &rng)
            for i in order {
                let (k, v, isArray) = deferred[i]
                let p = path + [key(k)]
                let header = p.joined(separator: rng.pick([".", " . "]))
                if isArray {
                    guard case .array(let elements) = v else { continue }
                    for e in elements {
                        blank()
                        emit("[[" + space() + header + space() + "]]" + (rng.chance(0.3) ? " # element" : "") + "\n")
                        section(e.entries, path: p)
                    }
                } else {
                    // A table holding only header tables may be left implicit.
                    let allDeferred = !v.entries.isEmpty && v.entries.allSatisfy(\.value.isTable) && rng.chance(0.3)
                    if allDeferred {
                        for (sk, sv) in v.entries {
                            let sp = p + [key(sk)]
                            blank()
                            emit("[" + sp.joined(separator: ".") + "]\n")
                            section(sv.entries, path: sp)
                        }
                    } else {
                        blank()
                        emit("[" + space() + header + space() + "]\n")
                        section(v.entries, path: p)
                    }
                }
            }
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func roundTrip(seed: UInt64) throws {
        for round in 0..<60 {
            var generator = Generator(rng: SplitMix64.stream(seed: seed, index: UInt64(round)))
            let tree = generator.table(depth: 0)
            var writer = Writer(rng: generator.rng)
            writer.section(tree.entries, path: [], atRoot: true)
            var text = writer.out
            let crlf = writer.rng.chance(0.3)
            if crlf { text = text.replacing("\n", with: "\r\n") }
            let parsed: TOMLTable
            do { parsed = try TOML.parse(text) } catch {
                Issue.record("seed \(seed) round \(round): \(error)\n--- document ---\n\(text)")
                return
            }
            let back = Node(TOMLValue(.table(parsed), line: 1, column: 1))
            #expect(back.same(tree), "seed \(seed) round \(round): parsed tree differs\n--- document ---\n\(text)")
            for (k, l) in writer.rootLines {
                #expect(parsed[k]?.line == l, "seed \(seed) round \(round): key \(k) on line \(l)\n--- document ---\n\(text)")
            }
        }
    }
}
