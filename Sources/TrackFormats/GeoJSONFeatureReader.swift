// Zones from a GeoJSON FeatureCollection one feature at a time, for files too large to hold as
// one JSON tree (a million zones: ~150 MB of text, ~1 GB as a tree). The format and every
// message are those of `GeoJSONZones.parse` (GeoJSONZones.swift): each feature is parsed on its
// own with the same code; only the top level is scanned without building a tree.
//
// Scanning: the top-level object's members are skipped over (strings with their escapes, nested
// brackets) to find "type", "crs" and "features"; then the elements of "features" are cut out one
// by one, each parsed by the strict JSON parser. Anything unexpected at the top level (not an
// object, a syntax error between members or elements, a repeated key, a wrong type, a `crs` other
// than WGS 84 longitude/latitude) is reported by running `GeoJSONZones.parse` on the whole file —
// the one place where the message must come from the tree, and only on the way to a refusal.
//
// A bad feature does not end the reading: the reader moves past it, so that a caller reports
// every bad feature at once, as `parse` does. A difference in what is reported: a file with bad
// features *and* a JSON syntax error in a later feature reports the bad features before the
// syntax error (the whole-file parse names the syntax error alone).
// Repeated ids are the caller's to replace (``ZoneSetBuilder`` does, as `parse` does).
import FencepostJSON

/// Reads the features of a GeoJSON FeatureCollection one at a time.
public struct GeoJSONFeatureReader {
    let bytes: UnsafeBufferPointer<UInt8>
    /// The property that names a zone, if the caller names one (`GeoJSONZones.parse`).
    let idProperty: String?
    /// Next byte to look at inside "features".
    private var cursor: Int
    private var finished = false
    /// Index of the next feature.
    public private(set) var index = 0

    /// Checks the top level of `bytes` (which must stay valid while the reader is used).
    /// - Throws: ``ZoneFileError`` as `GeoJSONZones.parse` would for a file that is not a
    ///   FeatureCollection with a "features" array.
    /// - Complexity: O(n) (one scan of the top level).
    public init(_ bytes: UnsafeBufferPointer<UInt8>, idProperty: String? = nil) throws(ZoneFileError) {
        self.bytes = bytes
        self.idProperty = idProperty
        guard let features = Self.topLevel(bytes) else { throw ZoneFileError(Self.refusal(bytes)) }
        cursor = features + 1
        let first = Self.skipSpace(bytes, cursor)
        if first < bytes.count, bytes[first] == UInt8(ascii: "]") { finished = true }
    }

    /// How far the reader has got, bytes (progress, and what the caller may let go of).
    public var offset: Int { cursor }

    /// The next zone, or nil after the last.
    /// - Throws: ``ZoneFileProblem`` as `GeoJSONZones.parse` words it. For a bad feature (its
    ///   `featureIndex` is set) the reader has moved past it: call `next()` again for the rest.
    ///   For a problem with the file (a syntax error) the reader is finished.
    /// - Complexity: O(size of the feature).
    public mutating func next() throws(ZoneFileProblem) -> ZoneDefinition? {
        guard !finished else { return nil }
        let start = Self.skipSpace(bytes, cursor)
        guard let end = Self.skipValue(bytes, start) else { finished = true; throw Self.refusal(bytes) }
        let value: JSONValue
        do {
            value = try JSONValue.parse(UnsafeBufferPointer(rebasing: bytes[start ..< end]))
        } catch {
            finished = true
            let (l, c) = GeoJSONZones.lineColumn(Array(bytes), start + error.offset)
            throw ZoneFileProblem(line: l, column: c, message: "not JSON: \(error.message)")
        }
        let after = Self.skipSpace(bytes, end)
        guard after < bytes.count else { finished = true; throw Self.refusal(bytes) }
        switch bytes[after] {
        case UInt8(ascii: ","): cursor = after + 1
        case UInt8(ascii: "]"): cursor = after + 1; finished = true
        default: finished = true; throw Self.refusal(bytes)
        }
        let k = index
        index += 1
        return try GeoJSONZones.parseFeature(value, index: k, idProperty: idProperty)
    }

    /// The next good zone, the problems of bad features before it added to `problems`; nil
    /// after the last feature, or after a problem with the file (added too).
    public mutating func next(collecting problems: inout ZoneFileError) -> ZoneDefinition? {
        while true {
            do { return try next() } catch { problems.append(error) }
        }
    }

    // MARK: Scanning

    /// The offset of the "features" array's `[` when the top level is an object whose "type" is
    /// "FeatureCollection", with no repeated key and nothing after it; nil otherwise.
    static func topLevel(_ b: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = skipSpace(b, GeoJSONZones.byteOrderMarkLength(b))
        guard i < b.count, b[i] == UInt8(ascii: "{") else { return nil }
        i = skipSpace(b, i + 1)
        var keys: [String] = []
        var features: Int? = nil
        var typeIsCollection = false
        if i < b.count, b[i] == UInt8(ascii: "}") { return nil }
        while true {
            guard i < b.count, b[i] == UInt8(ascii: "\""), let keyEnd = skipValue(b, i),
                  let key = (try? JSONValue.parse(UnsafeBufferPointer(rebasing: b[i ..< keyEnd])))?.string else { return nil }
            guard !keys.contains(key) else { return nil }
            keys.append(key)
            i = skipSpace(b, keyEnd)
            guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
            let valueStart = skipSpace(b, i + 1)
            guard let valueEnd = skipValue(b, valueStart) else { return nil }
            if key == "type" {
                typeIsCollection = (try? JSONValue.parse(UnsafeBufferPointer(rebasing: b[valueStart ..< valueEnd])))?.string == "FeatureCollection"
            } else if key == "crs" {
                guard let crs = try? JSONValue.parse(UnsafeBufferPointer(rebasing: b[valueStart ..< valueEnd])),
                      (try? GeoJSONZones.checkCRS(crs)) != nil else { return nil }
            } else if key == "features" {
                guard b[valueStart] == UInt8(ascii: "[") else { return nil }
                features = valueStart
            } else {
                // Other members must still be JSON (the whole-file parse would refuse them).
                guard (try? JSONValue.parse(UnsafeBufferPointer(rebasing: b[valueStart ..< valueEnd]))) != nil else { return nil }
            }
            i = skipSpace(b, valueEnd)
            guard i < b.count else { return nil }
            if b[i] == UInt8(ascii: "}") { break }
            guard b[i] == UInt8(ascii: ",") else { return nil }
            i = skipSpace(b, i + 1)
        }
        guard skipSpace(b, i + 1) == b.count, typeIsCollection else { return nil }
        return features
    }

    /// The first offset at or after `i` that is not JSON whitespace.
    @inline(__always)
    static func skipSpace(_ b: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int {
        var i = i
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
        return i
    }

    /// The offset just past the value starting at `i` (a string, an array or object with its
    /// nesting and strings, or a scalar up to the next delimiter), or nil when it does not end.
    /// Does not check the value's syntax: the parser does that.
    static func skipValue(_ b: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int? {
        guard i < b.count else { return nil }
        var i = i
        var depth = 0
        repeat {
            guard i < b.count else { return nil }
            switch b[i] {
            case UInt8(ascii: "\""):
                i += 1
                while i < b.count, b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
                guard i < b.count else { return nil }
                i += 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1; i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else { return nil }
                depth -= 1; i += 1
            default:
                if depth == 0 {
                    // A scalar: up to a delimiter.
                    let s = i
                    while i < b.count, !Self.isDelimiter(b[i]) { i += 1 }
                    return i > s ? i : nil
                }
                i += 1
            }
        } while depth > 0
        return i
    }

    static func isDelimiter(_ c: UInt8) -> Bool {
        c == UInt8(ascii: ",") || c == UInt8(ascii: "]") || c == UInt8(ascii: "}") || c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09
    }

    /// The refusal `GeoJSONZones.parse` gives for the whole file (its first problem: the file's
    /// structure is checked before any feature).
    static func refusal(_ b: UnsafeBufferPointer<UInt8>) -> ZoneFileProblem {
        do {
            _ = try GeoJSONZones.parse(Array(b))
        } catch {
            if let first = error.problems.first { return first }
        }
        return ZoneFileProblem(message: "not a GeoJSON FeatureCollection that can be read feature by feature")
    }
}
