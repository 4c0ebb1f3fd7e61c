// Input files of the client commands: requests as one JSON value or JSON lines (`add`), a
// config as JSON lines or TOML (`apply`), categories (`categories --set`). Each item keeps its
// line, so that an error — found here or by the agent — names file and line.
import FencepostAgent
import FencepostJSON
import FencepostLinux
import LocalNotifications

/// A JSON value read from a file, with its first line.
struct NumberedJSON {
    var line: Int
    var value: JSONValue
}

enum ClientInput {
    /// The bytes of `path` (`-`: standard input).
    static func read(_ path: String) throws(ClientFailure) -> [UInt8] {
        do { return try readWholeFile(path == "-" ? "/dev/stdin" : path, what: "file") } catch {
            throw ClientFailure(error.code, error.message)
        }
    }

    static func name(_ path: String) -> String { path == "-" ? "<stdin>" : path }

    /// One JSON value (it may span lines), or JSON lines (blank lines and `#` comments skipped).
    static func jsonValues(_ bytes: [UInt8], path: String) throws(ClientFailure) -> [NumberedJSON] {
        if let whole = try? JSONValue.parse(bytes) {
            let first = (bytes.firstIndex { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }).map { i in
                1 + bytes[..<i].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            } ?? 1
            if case .array(let items) = whole { return items.map { NumberedJSON(line: first, value: $0) } }
            return [NumberedJSON(line: first, value: whole)]
        }
        do throws(JSONLines.Failure) {
            return try JSONLines.parse(bytes).map { NumberedJSON(line: $0.line, value: $0.value) }
        } catch {
            throw ClientFailure(ClientFailure.dataError, "\(name(path)):\(error.line): not JSON: \(error.error)")
        }
    }

    /// The limits a request is checked against here: the agent's defaults, but any radius (the
    /// agent's `max_radius` is its own).
    static var requestLimits: RequestLimits {
        var limits = RequestLimits()
        limits.maximumRadius = .greatestFiniteMagnitude
        return limits
    }

    /// Checks that each item is a request and keeps every rule that needs none of the agent's
    /// state (id, title and body sizes, intervals, calendar fields, durations): a broken rule is
    /// named with its line here, before anything is sent, and a 100 kB title is the title's rule,
    /// not a message too long for the socket. The agent checks again, with its categories, zones
    /// and limits.
    static func checkRequests(_ items: [NumberedJSON], path: String) throws(ClientFailure) {
        let limits = requestLimits
        for item in items {
            do throws(RequestError) { try NotificationRequest(json: item.value).validate(limits: limits) } catch {
                throw ClientFailure(ClientFailure.dataError, "\(name(path)):\(item.line): \(error.message) [rule: \(error.rule.rawValue)]")
            }
        }
    }

    /// An agent error about `requests[i]` (or `categories[i]`, `set[i]`) told at the file's line.
    static func locate(_ failure: ClientFailure, _ lists: [String: [Int]], path: String) -> ClientFailure {
        guard let (list, i, rest) = ConfigurationLines.listElement(failure.message),
              let lines = lists[list], lines.indices.contains(i) else { return failure }
        return ClientFailure(failure.code, "\(name(path)):\(lines[i]): \(rest)")
    }

    /// What `apply` sends: the requests and (when the file has any) the categories.
    struct Config {
        var requests: [NumberedJSON] = []
        var categories: [NumberedJSON]?
    }

    /// A config for `apply`: a TOML file (its `[[request]]` and `[[category]]` tables, read as the
    /// agent reads them; the other keys are the daemon's settings and not sent) or
    /// JSON lines (request lines and `{"categories":[…]}` lines, as `fencepost simulate --requests`
    /// reads them). The file is read once (standard input cannot be read twice).
    static func config(_ path: String) throws(ClientFailure) -> Config {
        let bytes = try read(path)
        let jsonl = path.hasSuffix(".jsonl") || path.hasSuffix(".json") || path.hasSuffix(".ndjson")
            || (!path.hasSuffix(".toml") && bytes.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) == UInt8(ascii: "{"))
        if jsonl { return try jsonlConfig(bytes, path: path) }
        // Invalid UTF-8 is refused naming the place, as the agent refuses it (decoding it with
        // U+FFFD in place sent a title other than the one in the file, and said nothing).
        let text: String
        do { text = try StrictUTF8.decode(bytes) } catch {
            throw ClientFailure(ClientFailure.dataError, "\(name(path)):\(error.line): \(error)")
        }
        return try tomlConfig(text, path: path)
    }

    static func jsonlConfig(_ bytes: [UInt8], path: String) throws(ClientFailure) -> Config {
        let lines: [SimulationInput]
        do { lines = try SimulationInput.parse(bytes, name: name(path)) } catch {
            throw ClientFailure(error.code, error.message)
        }
        var config = Config()
        for line in lines {
            switch line.item {
            case .request(let r): config.requests.append(NumberedJSON(line: line.number, value: r.json))
            case .categories(let list):
                config.categories = (config.categories ?? []) + list.map { NumberedJSON(line: line.number, value: $0.json) }
            }
        }
        return config
    }

    /// A TOML config read by the agent's own reader (``AgentConfiguration/parse``), so that `apply`
    /// sends exactly what the agent applies from the same file at a start or a SIGHUP: the
    /// `[[request]]` tables and the `[[category]]` tables (all of them: none clears the agent's
    /// categories, as its SIGHUP does). The `zones` file is the agent's zone set, which it builds
    /// itself; its zones are not requests and are not sent.
    static func tomlConfig(_ text: String, path: String) throws(ClientFailure) -> Config {
        let configuration: AgentConfiguration
        do throws(AgentConfigurationError) {
            configuration = try AgentConfiguration.parse(text, path: path == "-" ? nil : path,
                                                         zoneFileReader: InputFiles.readZones, checkZones: false)
        } catch {
            throw ClientFailure(ClientFailure.dataError, "\(name(path)):" + (error.line.map { "\($0): " } ?? " ") + error.message)
        }
        // The lines the parse kept, for the agent's errors about `requests[i]` and `categories[i]`.
        let lines = configuration.lines
        var config = Config()
        config.requests = configuration.requests.enumerated().map { NumberedJSON(line: lines.request($0.offset)?.line ?? 1, value: $0.element.json) }
        config.categories = configuration.categories.enumerated().map { NumberedJSON(line: lines.category($0.offset) ?? 1, value: $0.element.json) }
        for note in configuration.calendarNotes { writeStandardError("fencepost apply: \(name(path)): \(note)\n") }
        if let zones = configuration.zonesFile {
            writeStandardError("fencepost apply: zones = \(zones) is the agent's zone set, not requests: the agent builds it at start and at SIGHUP (systemctl reload fencepost)\n")
        }
        return config
    }
}
