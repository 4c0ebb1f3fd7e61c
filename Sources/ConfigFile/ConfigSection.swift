// Reading a parsed config with errors a person can act on:
//
//   line 12: gpio.buzzer.pin: expected an integer, found a string
//   line 12: gpio.buzzer.pin: 99 is not a BCM pin            (the caller's own check, via error(_:_:))
//   line 7: gpio: unknown key `buzer` (did you mean `buzzer`?)
//
// A ``ConfigSection`` is one table with its key path; typed accessors return nil for an absent key
// and throw for a value of the wrong type. Callers list the keys a table allows, so a typo is an
// error rather than a silently ignored setting.

/// A problem in a config file, at a line, under a key path.
public struct ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    /// 1-based line.
    public var line: Int
    /// Column of a syntax error; nil for semantic errors (they concern a whole value).
    public var column: Int?
    /// Dotted key path ("gpio.buzzer.pin", "requests[2].trigger"); empty for the top level.
    public var path: String
    public var message: String

    public init(line: Int, column: Int? = nil, path: String, message: String) {
        self.line = line
        self.column = column
        self.path = path
        self.message = message
    }

    /// A syntax error from the TOML reader.
    public init(_ error: TOMLError) {
        self.init(line: error.line, column: error.column, path: "", message: error.message)
    }

    public var description: String {
        var s = "line \(line)"
        if let column { s += ", column \(column)" }
        s += ": "
        if !path.isEmpty { s += path + ": " }
        return s + message
    }
}

/// One table of a config file with its place in the document.
public struct ConfigSection: Sendable {
    public let table: TOMLTable
    /// Keys (and `[index]` parts for elements of arrays of tables) from the top of the document.
    public let path: [String]
    /// Line where the table starts (its header), 1 for the top level.
    public let line: Int

    public init(_ table: TOMLTable, path: [String] = [], line: Int = 1) {
        self.table = table
        self.path = path
        self.line = line
    }

    /// Parses a whole config file; a syntax error becomes a ``ConfigError`` with a column.
    public static func parse(_ text: String) throws(ConfigError) -> ConfigSection {
        do { return ConfigSection(try TOML.parse(text)) } catch { throw ConfigError(error) }
    }

    /// The dotted path of this table ("gpio.buzzer"), empty at the top level.
    public var pathText: String { Self.join(path) }

    /// The dotted path of `key` in this table.
    public func pathText(_ key: String) -> String { Self.join(path + [TOMLParser.quotedKey(key)]) }

    static func join(_ parts: [String]) -> String {
        var s = ""
        for p in parts {
            if p.hasPrefix("[") { s += p } else { s += s.isEmpty ? p : "." + p }
        }
        return s
    }

    // MARK: Keys

    /// The raw value of `key`, nil when absent.
    public func value(_ key: String) -> TOMLValue? { table[key] }

    /// Fails on the first key (in document order) not in `allowed`, suggesting the closest
    /// allowed key within an edit distance of 2 ("did you mean `buzzer`?").
    ///
    /// - Complexity: O(k · a · l²) for k keys, a allowed keys of length l.
    public func checkKeys(allowed: [String]) throws(ConfigError) {
        for (key, value) in table.entries where !allowed.contains(key) {
            var message = "unknown key `\(key)`"
            if let suggestion = Self.closest(to: key, among: allowed) {
                message += " (did you mean `\(suggestion)`?)"
            } else if !allowed.isEmpty {
                message += " (allowed: " + allowed.map { "`\($0)`" }.joined(separator: ", ") + ")"
            }
            throw ConfigError(line: value.line, path: pathText, message: message)
        }
    }

    /// The allowed key nearest to `key` when it is at most 2 edits away (the first one on a tie).
    public static func closest(to key: String, among allowed: [String]) -> String? {
        var best: (key: String, distance: Int)?
        for candidate in allowed {
            let d = editDistance(key, candidate)
            if d <= 2 && d < (best?.distance ?? Int.max) { best = (candidate, d) }
        }
        return best?.key
    }

    /// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
    /// neighbouring characters each cost 1 ("buzer" → "buzzer" is 1, "buzezr" → "buzzer" is 1).
    ///
    /// - Complexity: O(m · n).
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a), y = Array(b)
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var before = [Int](repeating: 0, count: y.count + 1)
        var previous = Array(0...y.count)
        var current = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            current[0] = i
            for j in 1...y.count {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                var d = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1] { d = min(d, before[j - 2] + 1) }
                current[j] = d
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[y.count]
    }

    // MARK: Typed values (nil when absent, an error when of another type)

    public func string(_ key: String) throws(ConfigError) -> String? { try typed(key, "a string") { $0.string } }
    public func integer(_ key: String) throws(ConfigError) -> Int64? { try typed(key, "an integer") { $0.integer } }
    /// A float; an integer is accepted (`timeout = 5` for 5.0).
    public func float(_ key: String) throws(ConfigError) -> Double? { try typed(key, "a number") { $0.float } }
    public func boolean(_ key: String) throws(ConfigError) -> Bool? { try typed(key, "a boolean") { $0.boolean } }
    public func dateTime(_ key: String) throws(ConfigError) -> String? { try typed(key, "a date-time") { $0.dateTime } }
    public func array(_ key: String) throws(ConfigError) -> [TOMLValue]? { try typed(key, "an array") { $0.array } }

    /// An integer within `range`; outside it is "line N: path: 99 is out of range 0...27".
    public func integer(_ key: String, in range: ClosedRange<Int64>) throws(ConfigError) -> Int64? {
        guard let v = try integer(key) else { return nil }
        guard range.contains(v) else { throw error(key, "\(v) is out of range \(range.lowerBound)...\(range.upperBound)") }
        return v
    }

    /// The sub-table `key` (a `[header]` table, a dotted-key table or an inline table).
    public func section(_ key: String) throws(ConfigError) -> ConfigSection? {
        guard let v = table[key] else { return nil }
        guard let t = v.table else { throw mismatch(key, v, "a table") }
        return ConfigSection(t, path: path + [TOMLParser.quotedKey(key)], line: v.line)
    }

    /// The tables of an array of tables (`[[key]]`, or an array of inline tables).
    public func sections(_ key: String) throws(ConfigError) -> [ConfigSection]? {
        guard let v = table[key] else { return nil }
        guard let elements = v.array else { throw mismatch(key, v, "an array of tables") }
        var result: [ConfigSection] = []
        for (k, e) in elements.enumerated() {
            let elementPath = path + [TOMLParser.quotedKey(key), "[\(k)]"]
            guard let t = e.table else {
                throw ConfigError(line: e.line, path: Self.join(elementPath), message: "expected a table, found \(e.kindDescription)")
            }
            result.append(ConfigSection(t, path: elementPath, line: e.line))
        }
        return result
    }

    /// An array of integers; a wrong element is "line N: path[2]: expected an integer, found a string".
    public func integers(_ key: String) throws(ConfigError) -> [Int64]? { try elements(key, "an integer") { $0.integer } }
    /// An array of strings.
    public func strings(_ key: String) throws(ConfigError) -> [String]? { try elements(key, "a string") { $0.string } }

    /// `value` when present, else "line N: path.key: missing (expected …)" at this table's line.
    public func require<T>(_ value: T?, _ key: String, _ expected: String) throws(ConfigError) -> T {
        guard let value else {
            throw ConfigError(line: line, path: pathText(key), message: "missing (expected \(expected))")
        }
        return value
    }

    /// A semantic error about `key`, at the line of its value (or of this table when absent):
    /// `error("pin", "99 is not a BCM pin")` → "line 12: gpio.buzzer.pin: 99 is not a BCM pin".
    public func error(_ key: String, _ message: String) -> ConfigError {
        ConfigError(line: table[key]?.line ?? line, path: pathText(key), message: message)
    }

    // MARK: Helpers

    private func typed<T>(_ key: String, _ expected: String, _ get: (TOMLValue) -> T?) throws(ConfigError) -> T? {
        guard let v = table[key] else { return nil }
        guard let t = get(v) else { throw mismatch(key, v, expected) }
        return t
    }

    private func elements<T>(_ key: String, _ expected: String, _ get: (TOMLValue) -> T?) throws(ConfigError) -> [T]? {
        guard let v = table[key] else { return nil }
        guard let a = v.array else { throw mismatch(key, v, "an array of \(Self.plural(expected))") }
        var result: [T] = []
        for (k, e) in a.enumerated() {
            guard let t = get(e) else {
                throw ConfigError(line: e.line, path: pathText(key) + "[\(k)]", message: "expected \(expected), found \(e.kindDescription)")
            }
            result.append(t)
        }
        return result
    }

    private static func plural(_ kind: String) -> String {
        let noun = kind.hasPrefix("an ") ? String(kind.dropFirst(3)) : kind.hasPrefix("a ") ? String(kind.dropFirst(2)) : kind
        return noun + "s"
    }

    private func mismatch(_ key: String, _ v: TOMLValue, _ expected: String) -> ConfigError {
        ConfigError(line: v.line, path: pathText(key), message: "expected \(expected), found \(v.kindDescription)")
    }
}
