// Parsing JSON text into a JSONValue: the entry points over bytes, strings and buffers (the
// parser itself and its rules: JSONParser.swift).

extension JSONValue {
    /// Arrays and objects may nest this deep; one more level is an error ("nesting deeper than 64").
    public static let maximumDepth = 64

    /// Parses one JSON text (a value with optional surrounding whitespace) from UTF-8 bytes.
    ///
    /// - Throws: `JSONError` with the byte offset of the first problem.
    /// - Complexity: O(n) in the length of the input (duplicate-key checks are O(m) per member
    ///   for small objects and expected O(1) per member for large ones).
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONError) -> JSONValue {
        try parse(bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// Parses one JSON text from UTF-8 bytes. See ``parse(_:)-(UnsafeRawBufferPointer)``.
    ///
    /// - Complexity: O(n); a collection without contiguous storage is copied first.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONError) -> JSONValue {
        let result: Result<JSONValue, JSONError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONError) in try parse(buffer) }
        }
        if let result { return try result.get() }
        return try Array(bytes).withUnsafeBufferPointer { buffer in
            Result { () throws(JSONError) in try parse(buffer) }
        }.get()
    }

    /// Parses one JSON text from a string (its UTF-8 form).
    ///
    /// - Complexity: O(n); a bridged or non-native string is copied to contiguous UTF-8 first.
    public static func parse(_ text: String) throws(JSONError) -> JSONValue {
        var text = text
        return try text.withUTF8 { buffer in
            Result { () throws(JSONError) in try parse(buffer) }
        }.get()
    }

    /// Parses one JSON text from UTF-8 bytes.
    ///
    /// - Complexity: O(n) in the length of the input.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONError) -> JSONValue {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index < parser.bytes.count { throw parser.error("trailing characters") }
        return value
    }
}

extension JSONValue {
    /// Parses one JSON text and gives, besides the value, the exact bytes of one member of the
    /// top-level object as they were written (without the whitespace around them): nil when the
    /// text is not an object or has no such member.
    ///
    /// For a value that must go back as it came: JSON-RPC 2.0 answers with "the same value as"
    /// the request's id, and a number parsed and written again would be other text (`1e3` becomes
    /// `1000.0`, `12345678901234567890` is rounded to a `Double`).
    ///
    /// - Complexity: O(n), as ``parse(_:)-(UnsafeBufferPointer<UInt8>)``.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>, keepingTextOf key: String) throws(JSONError) -> (value: JSONValue, memberText: ArraySlice<UInt8>?) {
        var parser = JSONParser(bytes)
        parser.keptKey = key
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index < parser.bytes.count { throw parser.error("trailing characters") }
        return (value, parser.keptRange.map { ArraySlice(bytes[$0]) })
    }
}
