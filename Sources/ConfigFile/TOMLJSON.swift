import FencepostJSON

// TOML → JSON, so that a request written in the config file decodes through the same JSON
// decoder as a request sent over the control socket.
//
// Strings, booleans and arrays map one to one; integers stay exact (`.integer`); floats are
// `.number` (inf and nan have no JSON form: they become `.number(±inf/nan)`, which the JSON
// serializer writes as `null`); date-times become their text; tables become objects with their
// keys in document order.

extension TOMLValue {
    /// This value as JSON.
    ///
    /// - Complexity: O(n) in the size of the value.
    public var json: JSONValue {
        switch kind {
        case .string(let s): .string(s)
        case .integer(let i): .integer(i)
        case .float(let d): .number(d)
        case .boolean(let b): .bool(b)
        case .dateTime(let s): .string(s)
        case .array(let a): .array(a.map { $0.json })
        case .table(let t): t.json
        }
    }
}

extension TOMLTable {
    /// This table as a JSON object, keys in document order.
    ///
    /// - Complexity: O(n) in the size of the table.
    public var json: JSONValue { .object(entries.map { (key: $0.key, value: $0.value.json) }) }
}
