// The top level of the config file, [socket], [engine] and [alerts]; the other sections are read
// by the extensions in +Hardware.swift and +Requests.swift.
import ConfigFile
import FencepostLinux
import LocalNotifications

/// Reads one config file into an ``AgentConfiguration``; every error is a ``ConfigError`` with the
/// line of the value at fault.
struct AgentConfigurationParser {
    let path: String?

    func parse(_ text: String, zoneFileReader: (String) throws(InputFiles.Failure) -> [UInt8], checkZones: Bool = true) throws(ConfigError) -> AgentConfiguration {
        let top = try ConfigSection.parse(text)
        try top.checkKeys(allowed: ConfigurationKeys.names(in: ""))
        var config = AgentConfiguration(path: path)
        config.restartKeyValues = RestartKeyValues(top)
        if let s = try top.string("state") {
            guard !s.isEmpty else { throw top.error("state", "must not be empty") }
            config.statePath = resolve(s)
        }
        if let z = try top.string("time_zone") {
            guard !z.isEmpty, !z.contains(" ") else { throw top.error("time_zone", "\"\(z)\" is not a zone name (e.g. \"Europe/Berlin\")") }
            config.timeZone = z
            config.lines.timeZone = top.value("time_zone")?.line
        }
        if let t = try top.string("clock_trust") {
            guard let trust = ClockTrust(rawValue: t) else {
                throw top.error("clock_trust", "\"\(t)\" is not one of \"ntp\", \"always\", \"gnss\"")
            }
            config.clockTrust = trust
        }
        if let socket = try top.section("socket") { try readSocket(socket, into: &config) }
        if let engine = try top.section("engine") { try readEngine(engine, into: &config.engine) }
        if let alerts = try top.section("alerts") { try readAlerts(alerts, into: &config.engine.alertSettings) }
        if let gps = try top.section("gps") {
            config.gps = try readGPS(gps)
            config.gpsUERE = try readUERE(gps)
        }
        if let gpio = try top.section("gpio") { config.gpio = try readGPIO(gpio) }
        if let patterns = try top.section("patterns") { config.patterns = try readPatterns(patterns) }
        if let hook = try top.section("hook") { config.hook = try readHook(hook) }
        if let fleet = try top.section("fleet") { config.fleet = try readFleet(fleet) }
        if let log = try top.section("log") { config.logLevel = try readLog(log) }
        config.categories = try readCategories(top, lines: &config.lines.categories)
        config.requests = try readRequests(top, patterns: config.patterns, categories: config.categories,
                                           limits: config.engine.limits, notes: &config.calendarNotes, lines: &config.lines.requests)
        config.zonesIDProperty = try readZonesIDProperty(top)
        if let zones = try top.string("zones") {
            try addZones(zones, line: top.value("zones")?.line ?? 1, reader: zoneFileReader, check: checkZones, to: &config)
        }
        return config
    }

    // MARK: Paths

    /// The folder of the config file ("" when it has none, or no path was given).
    var folder: String {
        guard let path, let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `p` as written when absolute (or without a config path), else under the config file's folder.
    func resolve(_ p: String) -> String {
        if p.hasPrefix("/") || folder.isEmpty { return p }
        return folder.hasSuffix("/") ? folder + p : folder + "/" + p
    }

    // MARK: [socket]

    func readSocket(_ s: ConfigSection, into config: inout AgentConfiguration) throws(ConfigError) {
        try s.checkKeys(allowed: ConfigurationKeys.names(in: "socket"))
        if let p = try s.string("path") {
            guard !p.isEmpty else { throw s.error("path", "must not be empty") }
            config.socketPath = resolve(p)
        }
        if let m = try s.integer("mode") {
            guard (0...0o777).contains(m) else { throw s.error("mode", "\(m) is not a permission mode (write it in octal: 0o660)") }
            config.socketMode = UInt32(m)
        }
        if let g = try s.string("group") {
            guard !g.isEmpty else { throw s.error("group", "must not be empty (leave it out for no group)") }
            config.socketGroup = g
        }
        if let b = try s.integer("max_message_bytes", in: 1024...16 << 20) { config.maximumMessageBytes = Int(b) }
        if let n = try s.integer("max_connections", in: 1...4096) { config.controlLimits.maximumConnections = Int(n) }
        if let t = try s.integer("request_timeout", in: 1...3600) { config.controlLimits.requestTimeout = UInt64(t) * 1_000_000_000 }
        if let t = try s.integer("write_timeout", in: 1...3600) { config.controlLimits.writeTimeout = UInt64(t) * 1_000_000_000 }
        if let t = try s.integer("idle_timeout", in: 1...86_400) { config.controlLimits.idleTimeout = UInt64(t) * 1_000_000_000 }
    }

    // MARK: [engine]

    func readEngine(_ s: ConfigSection, into engine: inout EngineConfiguration) throws(ConfigError) {
        try s.checkKeys(allowed: ConfigurationKeys.names(in: "engine"))
        if let n = try s.integer("pending_cap", in: 1...100_000) { engine.pendingCap = Int(n) }
        if let n = try s.integer("location_cap", in: 1...10_000_000) { engine.locationCap = Int(n) }
        if let n = try s.integer("delivered_cap", in: 1...1_000_000) { engine.deliveredCap = Int(n) }
        if let r = try s.float("max_radius") {
            guard r > 0 && r <= 20_000_000 else { throw s.error("max_radius", "must be greater than 0 and at most 20000000 metres, got \(r)") }
            engine.limits.maximumRadius = r
        }
    }

    // MARK: [alerts]

    func readAlerts(_ s: ConfigSection, into settings: inout AlertSettings) throws(ConfigError) {
        try s.checkKeys(allowed: ConfigurationKeys.names(in: "alerts"))
        if let b = try s.boolean("buzzer") { settings.buzzer = b }
        if let b = try s.boolean("led") { settings.led = b }
        if let b = try s.boolean("badge") { settings.badge = b }
        if let q = try s.string("quiet_hours") {
            guard let hours = Self.quietHours(q) else {
                throw s.error("quiet_hours", "\"\(q)\" is not a span \"HH:MM-HH:MM\" (e.g. \"22:00-06:30\")")
            }
            settings.quietHours = hours
        }
    }

    // MARK: [log]

    func readLog(_ s: ConfigSection) throws(ConfigError) -> LogLevel {
        try s.checkKeys(allowed: ConfigurationKeys.names(in: "log"))
        guard let name = try s.string("level") else { return .info }
        guard let level = LogLevel(name: name) else {
            throw s.error("level", "\"\(name)\" is not one of \"error\", \"warning\", \"info\", \"debug\"")
        }
        return level
    }

    /// "22:00-06:30" → 1320…390 minutes; nil unless two 24-hour times `HH:MM` joined by `-`.
    static func quietHours(_ text: String) -> QuietHours? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = minutes(parts[0]), let end = minutes(parts[1]) else { return nil }
        return QuietHours(startMinute: start, endMinute: end)
    }

    /// "06:30" → 390 (hours 00…23, minutes 00…59, two digits each).
    static func minutes(_ text: Substring) -> Int? {
        let t = text.trimmingSpaces
        let u = Array(t.utf8)
        guard u.count == 5, u[2] == UInt8(ascii: ":") else { return nil }
        let digits = [u[0], u[1], u[3], u[4]]
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        let d = digits.map { Int($0 - UInt8(ascii: "0")) }
        let h = d[0] * 10 + d[1], m = d[2] * 10 + d[3]
        guard h < 24, m < 60 else { return nil }
        return h * 60 + m
    }
}

fileprivate extension Substring {
    /// Without leading and trailing spaces.
    var trimmingSpaces: Substring {
        var s = self
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return s
    }
}
