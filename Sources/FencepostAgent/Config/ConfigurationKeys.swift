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

    /// The keys that need a restart, in the order of `all`.
    public static let restartKeys: [ConfigurationKey] = all.filter { $0.reload == .needsRestart }

    /// The keys needing a restart whose value differs between the file the running configuration
    /// came from and the file `next` came from, compared as written (a SIGHUP leaves them as they
    /// run, and says so). A key is in one place, `all`: marking it `.needsRestart` is enough for it
    /// to be named here.
    /// - Complexity: O(restart keys).
    public static func restartKeysChanged(from running: AgentConfiguration, to next: AgentConfiguration) -> [String] {
        restartKeys.indices.filter { running.restartKeyValues[$0] != next.restartKeyValues[$0] }.map { restartKeys[$0].path }
    }

    /// The restart keys that `configuration`'s file sets (for `check-config`).
    public static func restartKeysSet(by configuration: AgentConfiguration) -> [String] {
        restartKeys.indices.filter { configuration.restartKeyValues[$0] != nil }.map { restartKeys[$0].path }
    }
}

/// What a config file writes at each key that needs a restart (`ConfigurationKeys.restartKeys`,
/// by index), as written: nil where the file does not set it. Kept with the configuration so that
/// a SIGHUP compares two files key by key without a comparison per field.
public struct RestartKeyValues: Sendable, Equatable {
    var values: [TOMLValue.Kind?]

    /// No key set (an empty file).
    public init() { values = Array(repeating: nil, count: ConfigurationKeys.restartKeys.count) }

    /// The values in the file whose top level is `root`.
    public init(_ root: ConfigSection) {
        values = ConfigurationKeys.restartKeys.map { key in
            root.table.value(at: key.path.split(separator: ".").map(String.init))?.kind
        }
    }

    /// The value at restart key `index`, or nil when the file does not set it.
    public subscript(index: Int) -> TOMLValue.Kind? { index < values.count ? values[index] : nil }
}

extension AgentConfiguration {
    /// `next`, read after a SIGHUP, as this running configuration becomes: every key that
    /// ConfigurationKeys marks `applied` takes `next`'s value, every key that needs a restart keeps
    /// its running value (and the file value it came from, so that a later SIGHUP names it again).
    /// ConfigurationReloadTests hold this to ConfigurationKeys for every key.
    public func reloaded(by next: AgentConfiguration) -> AgentConfiguration {
        var c = next
        c.statePath = statePath
        c.socketPath = socketPath
        c.socketMode = socketMode
        c.socketGroup = socketGroup
        c.gps = gps
        c.gpsUERE = gpsUERE
        c.gpio.backend = gpio.backend
        c.gpio.buzzer = gpio.buzzer
        c.gpio.led = gpio.led
        c.gpio.badge = gpio.badge
        c.gpio.button = gpio.button
        c.fleet = fleet
        c.restartKeyValues = restartKeyValues
        return c
    }
}
