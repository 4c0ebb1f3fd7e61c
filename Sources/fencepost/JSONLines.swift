// JSON lines as the CLI reads them (`simulate --requests`, `add`, `apply`): one value a line,
// CR LF accepted, blank lines and lines starting with `#` skipped.
import FencepostJSON

enum JSONLines {
    /// A line that is not JSON.
    struct Failure: Error {
        var line: Int
        var error: JSONError
    }

    /// The values with their 1-based line numbers, in order.
    /// - Complexity: O(bytes).
    static func parse(_ bytes: [UInt8]) throws(Failure) -> [(line: Int, value: JSONValue)] {
        var result: [(line: Int, value: JSONValue)] = []
        var number = 0
        for raw in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            number += 1
            let line = raw.last == 0x0D ? raw.dropLast() : raw
            let trimmed = line.drop { $0 == 0x20 || $0 == 0x09 }
            if trimmed.isEmpty || trimmed.first == UInt8(ascii: "#") { continue }
            do throws(JSONError) { result.append((number, try JSONValue.parse(Array(trimmed)))) } catch {
                throw Failure(line: number, error: error)
            }
        }
        return result
    }
}
