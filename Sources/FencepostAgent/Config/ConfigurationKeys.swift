// Every key of the config file, once, with what a SIGHUP does with it. The parser accepts exactly
// these keys (its checkKeys lists come from here), the SIGHUP log and `check-config` name the
// restart keys from here, and docs/configuration.md has one row per key (a test holds the three
// equal).
//
//   applied at SIGHUP   the running agent changes now (requests, zones, caps, time zone, …)
//   needs a restart     claimed or opened once at start, with what they configure: the state
//                       file, the control socket's path and permissions, the GPS source (and the
//                       UERE baked into its fixes), the GPIO chip and lines
//
// Paths are dotted from the top of the file; `patterns.<name>` stands for any pattern name;
// `request` and `category` are the [[request]] and [[category]] arrays of tables.
import ConfigFile
import FencepostLinux

/// One key of the config file.
public struct ConfigurationKey: Sendable {
    /// What a SIGHUP does with a changed value.
    public enum Reload: Sendable, Equatable {
        case applied
        case needsRestart
    }

    /// Dotted path, e.g. `socket.max_connections`.
    public let path: String
    public let reload: Reload

    init(_ path: String, _ reload: Reload) { self.path = path; self.reload = reload }
}

/// The keys of the config file.
public enum ConfigurationKeys {
    /// Every key, in the order of docs/configuration.md.
    public static let all: [ConfigurationKey] = [
        ConfigurationKey("state", .needsRestart),
        ConfigurationKey("time_zone", .applied),
        ConfigurationKey("clock_trust", .applied),
        ConfigurationKey("zones", .applied),
        ConfigurationKey("zones_id_property", .applied),
        ConfigurationKey("socket.path", .needsRestart),
        ConfigurationKey("socket.mode", .needsRestart),
        ConfigurationKey("socket.group", .needsRestart),
        ConfigurationKey("socket.max_message_bytes", .applied),
        ConfigurationKey("socket.max_connections", .applied),
        ConfigurationKey("socket.request_timeout", .applied),
        ConfigurationKey("socket.write_timeout", .applied),
        ConfigurationKey("socket.idle_timeout", .applied),
        ConfigurationKey("engine.pending_cap", .applied),
        ConfigurationKey("engine.location_cap", .applied),
        ConfigurationKey("engine.delivered_cap", .applied),
        ConfigurationKey("engine.max_radius", .applied),
        ConfigurationKey("alerts.buzzer", .applied),
        ConfigurationKey("alerts.led", .applied),
        ConfigurationKey("alerts.badge", .applied),
        ConfigurationKey("alerts.quiet_hours", .applied),
        ConfigurationKey("gps.source", .needsRestart),
        ConfigurationKey("gps.device", .needsRestart),
        ConfigurationKey("gps.baud", .needsRestart),
        ConfigurationKey("gps.url", .needsRestart),
        ConfigurationKey("gps.file", .needsRestart),
        ConfigurationKey("gps.speed", .needsRestart),
        ConfigurationKey("gps.exit_at_end", .needsRestart),
        ConfigurationKey("gps.uere", .needsRestart),
        ConfigurationKey("gpio.backend", .needsRestart),
        ConfigurationKey("gpio.chip", .needsRestart),
        ConfigurationKey("gpio.long_press_ms", .applied),
        ConfigurationKey("gpio.debounce_ms", .applied),
        ConfigurationKey("gpio.buzzer.pin", .needsRestart),
        ConfigurationKey("gpio.buzzer.active_low", .needsRestart),
        ConfigurationKey("gpio.buzzer.bias", .needsRestart),
        ConfigurationKey("gpio.buzzer.enabled", .needsRestart),
        ConfigurationKey("gpio.led.pin", .needsRestart),
        ConfigurationKey("gpio.led.active_low", .needsRestart),
        ConfigurationKey("gpio.led.bias", .needsRestart),
        ConfigurationKey("gpio.led.enabled", .needsRestart),
        ConfigurationKey("gpio.badge.pin", .needsRestart),
        ConfigurationKey("gpio.badge.active_low", .needsRestart),
        ConfigurationKey("gpio.badge.bias", .needsRestart),
        ConfigurationKey("gpio.badge.enabled", .needsRestart),
        ConfigurationKey("gpio.button.pin", .needsRestart),
        ConfigurationKey("gpio.button.active_low", .needsRestart),
        ConfigurationKey("gpio.button.bias", .needsRestart),
        ConfigurationKey("gpio.button.enabled", .needsRestart),
        ConfigurationKey("patterns.<name>", .applied),
        ConfigurationKey("log.level", .applied),
        ConfigurationKey("hook.command", .applied),
        ConfigurationKey("hook.timeout", .applied),
        ConfigurationKey("fleet.broker", .needsRestart),
        ConfigurationKey("fleet.device", .needsRestart),
        ConfigurationKey("fleet.ca", .needsRestart),
        ConfigurationKey("fleet.cert", .needsRestart),
        ConfigurationKey("fleet.key", .needsRestart),
        ConfigurationKey("fleet.username", .needsRestart),
        ConfigurationKey("fleet.password_file", .needsRestart),
        ConfigurationKey("fleet.keepalive", .needsRestart),
        ConfigurationKey("fleet.outbox_rows", .needsRestart),
        ConfigurationKey("fleet.outbox_bytes", .needsRestart),
        ConfigurationKey("fleet.health_interval", .needsRestart),
        ConfigurationKey("fleet.ha", .needsRestart),
        ConfigurationKey("request", .applied),
        ConfigurationKey("category", .applied),
    ]

    /// The names directly under `section` ("" for the top level; "gpio" includes its four line
    /// tables): what the parser's `checkKeys` allows there.
    /// - Complexity: O(keys).
    static func names(in section: String) -> [String] {
        let prefix = section.isEmpty ? "" : section + "."
        var names: [String] = []
        for key in all where key.path.hasPrefix(prefix) {
            let rest = key.path.dropFirst(prefix.count)
            let name = String(rest.split(separator: ".", maxSplits: 1).first ?? rest)
            if !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// The keys that need a restart, as one text for messages ("state, socket.path, …").
    public static var restartKeysText: String {
        all.filter { $0.reload == .needsRestart }.map { $0.path }.joined(separator: ", ")
    }

    /// The keys needing a restart whose value differs between the running configuration and
    /// `next` (a SIGHUP leaves them as they run, and says so).
    public static func restartKeysChanged(from running: AgentConfiguration, to next: AgentConfiguration) -> [String] {
        var changed: [String] = []
        if running.statePath != next.statePath { changed.append("state") }
        if running.socketPath != next.socketPath { changed.append("socket.path") }
        if running.socketMode != next.socketMode { changed.append("socket.mode") }
        if running.socketGroup != next.socketGroup { changed.append("socket.group") }
        switch (running.gps, next.gps) {
        case (.none, .none): break
        case let (.serial(d0, b0), .serial(d1, b1)):
            if d0 != d1 { changed.append("gps.device") }
            if b0 != b1 { changed.append("gps.baud") }
        case let (.gpsd(h0, p0), .gpsd(h1, p1)):
            if h0 != h1 || p0 != p1 { changed.append("gps.url") }
        case let (.replay(f0, s0, e0), .replay(f1, s1, e1)):
            if f0 != f1 { changed.append("gps.file") }
            if s0 != s1 { changed.append("gps.speed") }
            if e0 != e1 { changed.append("gps.exit_at_end") }
        default: changed.append("gps.source")
        }
        if running.gpsUERE != next.gpsUERE { changed.append("gps.uere") }
        if running.fleet != next.fleet { changed.append("fleet") }
        let a = running.gpio, b = next.gpio
        if a.backend != b.backend {
            switch (a.backend, b.backend) {
            case (.libgpiod, .libgpiod): changed.append("gpio.chip")
            default: changed.append("gpio.backend")
            }
        }
        let lines: [(String, GPIOLineSpec?, GPIOLineSpec?)] = [("buzzer", a.buzzer, b.buzzer), ("led", a.led, b.led),
                                                              ("badge", a.badge, b.badge), ("button", a.button, b.button)]
        for (role, x, y) in lines {
            switch (x, y) {
            case (nil, nil): break
            case let (x?, y?):
                if x.offset != y.offset { changed.append("gpio.\(role).pin") }
                if x.activeLow != y.activeLow { changed.append("gpio.\(role).active_low") }
                if x.bias != y.bias { changed.append("gpio.\(role).bias") }
            default: changed.append("gpio.\(role).enabled")
            }
        }
        return changed
    }

    /// The restart keys that the config `root` sets (for `check-config`).
    public static func restartKeysSet(in root: ConfigSection) -> [String] {
        all.filter { key in
            key.reload == .needsRestart && root.table.value(at: key.path.split(separator: ".").map(String.init)) != nil
        }.map { $0.path }
    }
}
