// Reading a JSON object field by field, with errors that name the field's path.
import FencepostJSON

/// A JSON object being read: each accessor checks the type and names the path on error; unknown
/// keys are rejected up front, with the list of known ones.
struct ObjectReader {
    let path: String
    let members: [(key: String, value: JSONValue)]

    /// - Throws: `.malformed` when `value` is not an object or has a key outside `allowed`.
    init(_ value: JSONValue, path: String, allowed: [String]) throws(RequestError) {
        guard case .object(let m) = value else {
            throw RequestError(.malformed, "\(path.isEmpty ? "the request" : path) must be an object, got \(value.kindDescription)")
        }
        for (key, _) in m where !allowed.contains(key) {
            throw RequestError(.malformed, "unknown key \"\(Self.join(path, key))\" (known: \(allowed.joined(separator: ", ")))")
        }
        self.path = path
        self.members = m
    }

    static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

    func field(_ key: String) -> String { Self.join(path, key) }

    /// The member `key`, nil when absent or JSON null.
    func value(_ key: String) -> JSONValue? {
        for (k, v) in members where k == key { return v.isNull ? nil : v }
        return nil
    }

    func has(_ key: String) -> Bool { value(key) != nil }

    func require(_ key: String) throws(RequestError) -> JSONValue {
        guard let v = value(key) else { throw RequestError(.malformed, "missing key \"\(field(key))\"") }
        return v
    }

    func typeError(_ key: String, _ expected: String, _ got: JSONValue) -> RequestError {
        RequestError(.malformed, "\"\(field(key))\" must be \(expected), got \(got.kindDescription)")
    }

    func string(_ key: String) throws(RequestError) -> String? {
        guard let v = value(key) else { return nil }
        guard case .string(let s) = v else { throw typeError(key, "a string", v) }
        return s
    }

    func bool(_ key: String) throws(RequestError) -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v else { throw typeError(key, "true or false", v) }
        return b
    }

    func int(_ key: String) throws(RequestError) -> Int? {
        guard let v = value(key) else { return nil }
        guard let i = v.int else { throw typeError(key, "an integer", v) }
        return i
    }

    func double(_ key: String) throws(RequestError) -> Double? {
        guard let v = value(key) else { return nil }
        guard let d = v.double, d.isFinite else { throw typeError(key, "a number", v) }
        return d
    }

    func object(_ key: String, allowed: [String]) throws(RequestError) -> ObjectReader? {
        guard let v = value(key) else { return nil }
        return try ObjectReader(v, path: field(key), allowed: allowed)
    }
}
