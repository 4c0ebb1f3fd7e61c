// [[category]], [[request]] and `zones`: requests in the config decode through the control socket's
// JSON decoder (a request reads the same in TOML as in JSON), then pass the same rules.
import Annunciator
import ConfigFile
import FencepostLinux
import FencepostJSON
import Geofencing
import LocalNotifications
import TrackFormats
import Position

extension AgentConfigurationParser {
    // MARK: [[category]]

    func readCategories(_ top: ConfigSection, lines: inout [Int]) throws(ConfigError) -> [NotificationCategory] {
        var categories: [NotificationCategory] = []
        var firstLine: [String: Int] = [:]   // id → its line: O(1) per duplicate check
        for (k, t) in (try top.sections("category") ?? []).enumerated() {
            let category: NotificationCategory
            do { category = try NotificationCategory(json: t.table.json) } catch {
                throw ConfigError(line: t.line, path: "category[\(k)]", message: Self.trimCategoryPrefix(error.message))
            }
            if let first = firstLine[category.identifier] {
                throw ConfigError(line: t.line, path: "category[\(k)] (id \(Self.quoted(category.identifier)))",
                                  message: "duplicate id (first at line \(first))")
            }
            categories.append(category)
            lines.append(t.line)
            firstLine[category.identifier] = t.line
        }
        return categories
    }

    /// The category decoder names its keys `category.…`; the path already says so.
    static func trimCategoryPrefix(_ m: String) -> String {
        // By hand: String.replacing is not in Embedded Swift's stdlib.
        let bytes = Array(m.utf8), prefix = Array("\"category.".utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if i + prefix.count <= bytes.count && bytes[i..<i + prefix.count].elementsEqual(prefix) {
                out.append(UInt8(ascii: "\""))
                i += prefix.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: [[request]]

    func readRequests(_ top: ConfigSection, patterns: [BuzzerPattern], categories: [NotificationCategory],
                      limits: RequestLimits, notes: inout [String], lines: inout [ConfigurationLines.Request]) throws(ConfigError) -> [NotificationRequest] {
        let soundNames = BuzzerPattern.builtIns.map { $0.name } + patterns.map { $0.name }
        let categoryIDs = Set(categories.map { $0.identifier })
        var requests: [NotificationRequest] = []
        // id → its line: O(1) per duplicate check, where a search of the requests read so far
        // was O(n²) (a SIGHUP reads the file inside one loop turn).
        var firstLine: [String: Int] = [:]
        for (k, t) in (try top.sections("request") ?? []).enumerated() {
            let label: String
            if let id = t.table["id"]?.string { label = "request[\(k)] (id \(Self.quoted(id)))" } else { label = "request[\(k)]" }
            // `ics` (one request per VEVENT) and `except_ics` (an exclusion calendar) resolved
            // by the one reader the CLI's `add --ics` uses.
            let expanded: ICalendarRequests
            do throws(ICalendarKeyError) {
                expanded = try ICalendar.resolve(t.table.json, read: readCalendarFile, after: SystemClocks.wallNow(), isZone: InputFiles.isZone)
            } catch {
                throw ConfigError(line: t.table.value(at: [error.key])?.line ?? t.line, path: label, message: error.description)
            }
            for note in expanded.notes { notes.append("line \(t.line): \(label): \(note)") }
            for json in expanded.requests {
            let request: NotificationRequest
            do {
                request = try NotificationRequest(json: json)
                try request.validate(limits: limits)
            } catch {
                let message = expanded.requests.count > 1 || t.table["ics"] != nil ? "\(json["id"]?.string ?? "?"): \(error.message)" : error.message
                throw ConfigError(line: Self.line(of: error.message, in: t), path: label, message: message)
            }
            if let sound = request.content.sound, !soundNames.contains(sound) {
                throw ConfigError(line: t.table.value(at: ["content", "sound"])?.line ?? t.line, path: label,
                                  message: "content.sound \(Self.quoted(sound)) is not a buzzer pattern ("
                                    + soundNames.joined(separator: ", ") + ")")
            }
            if let c = request.content.categoryIdentifier, !categoryIDs.contains(c) {
                throw ConfigError(line: t.table.value(at: ["content", "categoryIdentifier"])?.line ?? t.line, path: label,
                                  message: "content.categoryIdentifier \(Self.quoted(c)) is not a [[category]] of this file")
            }
            if let first = firstLine[request.identifier] {
                throw ConfigError(line: t.line, path: label, message: "duplicate id (first at line \(first))")
            }
            requests.append(request)
            lines.append(ConfigurationLines.Request(table: k, line: t.line, zoneLine: t.table.value(at: ["trigger", "calendar", "tz"])?.line))
            firstLine[request.identifier] = t.line
            }
        }
        return requests
    }

    /// A calendar file named by `ics` / `except_ics`, relative to the config's folder.
    func readCalendarFile(_ name: String) throws(ICalendarKeyError) -> String {
        try InputFiles.readCalendar(at: resolve(name))
    }


    /// The line of the key a request error names ("trigger.interval.seconds must be …",
    /// "missing key \"trigger\"" …): the deepest existing key of the first dotted path in the
    /// message, else the request's own line.
    static func line(of message: String, in t: ConfigSection) -> Int {
        for word in message.split(whereSeparator: { $0 == " " || $0 == "\"" || $0 == ":" || $0 == "," }) {
            let keys = word.split(separator: ".").map { String($0.split(separator: "[").first ?? "") }
            guard keys.count > 1 || ["id", "content", "trigger", "missed"].contains(keys.first ?? "") else { continue }
            var n = keys.count
            while n > 0 {
                if let v = t.table.value(at: Array(keys.prefix(n))) { return v.line }
                n -= 1
            }
        }
        return t.line
    }

    static func quoted(_ s: String) -> String { JSONValue.string(s).serialized() }

    // MARK: zones

    /// `zones_id_property`: a property name, or nil when absent.
    func readZonesIDProperty(_ top: ConfigSection) throws(ConfigError) -> String? {
        guard let name = try top.string("zones_id_property") else { return nil }
        guard !name.isEmpty else { throw top.error("zones_id_property", "must not be empty (leave it out for the feature's \"id\", else properties.id)") }
        return name
    }

    /// Records the GeoJSON file of the zone set; with `check`, reads it and checks every zone as
    /// the agent's build will (and that no zone has the id of a [[request]]), counting them.
    func addZones(_ file: String, line: Int, reader zoneFileReader: (String) throws(InputFiles.Failure) -> [UInt8], check: Bool,
                  to config: inout AgentConfiguration) throws(ConfigError) {
        guard !file.isEmpty else { throw ConfigError(line: line, path: "zones", message: "must not be empty") }
        let resolved = resolve(file)
        config.zonesFile = resolved
        config.lines.zones = line
        guard check else { return }
        let bytes: [UInt8]
        do { bytes = try zoneFileReader(resolved) } catch {
            throw ConfigError(line: line, path: "zones", message: "\(resolved): cannot read: \(error)")
        }
        var ids: Set<String> = []
        for r in config.requests { ids.insert(r.identifier) }
        let limits = config.engine.limits
        let result = bytes.withUnsafeBytes { b in
            Result { () throws(ZoneSetBuildError) -> Int in
                try ZoneSetCompiler.check(b, name: resolved, limits: limits, idProperty: config.zonesIDProperty, requestIDs: ids)
            }
        }
        switch result {
        case .success(let n): config.zoneCount = n
        case .failure(let error): throw ConfigError(line: line, path: "zones", message: error.message)
        }
    }

    /// A zone as a request: title = the zone id, sound "default", repeating; entry, exit, dwell and
    /// cooldown from the zone. Built directly — the same request, with the same messages, as
    /// decoding ``json(for:)`` gives (a test holds them equal), without a JSON tree per zone.
    static func request(for zone: ZoneDefinition) throws(RequestError) -> NotificationRequest {
        let shape: RegionShape
        switch zone.shape {
        case .circle(let c, let r):
            guard r > 0 else {
                throw RequestError(.radius, "trigger.location.region.circle.radius must be greater than 0, got \(r)")
            }
            do { shape = .circle(try CircularRegion(center: c, radius: r)) } catch {
                throw RequestError(.region, "trigger.location.region.circle: \(error)")
            }
        case .polygon(let parts):
            do { shape = .polygon(try PolygonRegion(parts: parts)) } catch {
                throw RequestError(.region, "trigger.location.region.polygon: \(error)")
            }
        }
        let trigger = LocationTrigger(shape: shape, notifyOnEntry: zone.notifyOnEntry, notifyOnExit: zone.notifyOnExit,
                                      repeats: true, dwell: zone.dwell, cooldown: zone.cooldown ?? 0)
        return NotificationRequest(identifier: zone.id, content: NotificationContent(title: zone.id, sound: "default"),
                                   trigger: .location(trigger))
    }

    /// The zone's request as JSON (the form the socket and the state file use).
    static func json(for zone: ZoneDefinition) -> JSONValue {
        let region: JSONValue
        switch zone.shape {
        case .circle(let c, let r):
            region = .object([("circle", .object([("lat", .number(c.latitude)), ("lon", .number(c.longitude)), ("radius", .number(r))]))])
        case .polygon(let parts):
            region = RequestJSON.polygonRegion(parts)
        }
        var location: [(key: String, value: JSONValue)] = [
            ("region", region), ("notifyOnEntry", .bool(zone.notifyOnEntry)), ("notifyOnExit", .bool(zone.notifyOnExit)),
            ("repeats", .bool(true)),
        ]
        if let d = zone.dwell { location.append(("dwell", .number(d))) }
        if let c = zone.cooldown { location.append(("cooldown", .number(c))) }
        return .object([
            ("id", .string(zone.id)),
            ("content", .object([("title", .string(zone.id)), ("sound", .string("default"))])),
            ("trigger", .object([("location", .object(location))])),
        ])
    }
}
