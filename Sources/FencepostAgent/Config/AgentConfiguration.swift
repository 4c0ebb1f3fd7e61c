// The agent's configuration: one human-edited TOML file (design §6), read into typed values with
// every mistake reported at its line. Its keys, with type, default, range and what a SIGHUP does
// with each, are in docs/configuration.md; ConfigurationKeys.swift is the list the parser accepts.
//
// An empty file is valid: no GPS, the console GPIO backend with the buzzer on BCM 18, the LED on 23,
// the badge LED on 24 and the button on 17.
//
// Files: this one (the values), AgentConfiguration+Parse.swift (the top level, socket, engine,
// alerts, log), +Hardware.swift (gps, gpio, patterns, hook), +Requests.swift (categories, requests,
// zones), AgentConfigurationError.swift.
import Annunciator
import ConfigFile
import FencepostLinux
import LocalNotifications
import Position

/// Everything the daemon reads from its config file.
/// Stored properties: one per top-level key or table of the file (docs/configuration.md), so
/// that the parser and `check-config`'s summary read it field by field; a value, no
/// behaviour.
public struct AgentConfiguration: Sendable {
    /// The file it came from (nil for text parsed without a file).
    public var path: String?
    /// The SQLite state file.
    public var statePath: String = "/var/lib/fencepost/state.sqlite"
    /// The control socket.
    public var socketPath: String = "/run/fencepost/control.sock"
    /// Permission bits of the control socket.
    public var socketMode: UInt32 = 0o660
    /// A group (by name) allowed on the socket besides root and the owner; nil for none.
    public var socketGroup: String?
    /// Bounds of the control socket's connections (ControlLimits.swift).
    public var controlLimits = ControlLimits()
    /// Longest control message (one line), bytes.
    public var maximumMessageBytes: Int = 65536
    /// The device zone (IANA name); nil for the system's (/etc/localtime).
    public var timeZone: String?
    /// When the wall clock is trusted.
    public var clockTrust: ClockTrust = .ntp
    /// Caps, limits and alert settings.
    public var engine = EngineConfiguration()
    public var gps: GPSConfiguration = .none
    /// User equivalent range error of the receiver, metres: a fix's error estimate is HDOP × UERE,
    /// for every source (`[gps] uere`).
    public var gpsUERE = Fix.typicalUERE
    public var gpio = GPIOConfiguration()
    /// Buzzer patterns from the file (they add to, or replace, the built-ins).
    public var patterns: [BuzzerPattern] = []
    /// What the `ics` files of [[request]] tables held that no request uses (properties, other
    /// components), one line each: said at start, by `check-config` and by `apply`.
    public var calendarNotes: [String] = []
    /// The least severe log line written (`[log] level`).
    public var logLevel: LogLevel = .info
    /// A command run for each delivery, or nil.
    public var hook: HookConfiguration?
    /// The link to the fleet's broker (`[fleet]`), or nil: no link.
    public var fleet: FleetSettings?
    /// `[[request]]` tables.
    public var requests: [NotificationRequest] = []
    /// The GeoJSON file of the zone set (resolved); its `zones` key's line is `lines.zones`.
    public var zonesFile: String?
    /// The GeoJSON property that names each zone (`zones_id_property`): a feature's id is this
    /// property when it has it, else its `id`, else `properties.id`.
    public var zonesIDProperty: String?
    /// Zones in `zonesFile`, when the parse checked it (distinct ids).
    public var zoneCount: Int?
    /// `[[category]]` tables.
    public var categories: [NotificationCategory] = []
    /// The file's values at the keys that need a restart, as written: what a SIGHUP compares.
    public var restartKeyValues = RestartKeyValues()
    /// Where the file wrote its time zone, zones, requests and categories: the checks after the parse
    /// (`check-config`'s time zone names, `apply`'s answers from the agent) name these lines
    /// without parsing the file again.
    public var lines = ConfigurationLines()

    /// The defaults (what an empty file gives).
    public init(path: String? = nil) { self.path = path }

    /// A message about `requests[i]` or `categories[i]` of this file (the socket's `apply`
    /// answer, which the agent's start and SIGHUP give too) as FILE:LINE: …; other messages as
    /// they are.
    public func locate(_ message: String) -> String {
        guard let (list, i, rest) = ConfigurationLines.listElement(message) else { return message }
        let line: Int? = switch list {
        case "requests": lines.request(i)?.line
        case "categories": lines.category(i)
        default: nil
        }
        guard let line else { return message }
        return "\(path ?? "config"):\(line): \(rest)"
    }

    /// Reads a config file's text.
    ///
    /// - Parameters:
    ///   - path: the file's path, for messages and to resolve relative paths against its folder.
    ///   - zoneFileReader: reads the GeoJSON file named by `zones` (given the resolved path).
    ///   - checkZones: read and check every zone now (`check-config`, tests). The agent passes
    ///     false: it checks them when it builds its zone set, and not at all when the set is current.
    /// - Throws: ``AgentConfigurationError`` naming the line and key path of the first problem.
    /// - Complexity: O(n) in the size of the file, plus O(r²) for r requests' duplicate checks
    ///   (linear scans; config files hold tens of requests).
    public static func parse(_ text: String, path: String?,
                             zoneFileReader: (String) throws(InputFiles.Failure) -> [UInt8], checkZones: Bool = true) throws(AgentConfigurationError) -> AgentConfiguration {
        do {
            return try AgentConfigurationParser(path: path).parse(text, zoneFileReader: zoneFileReader, checkZones: checkZones)
        } catch {
            throw AgentConfigurationError(path: path, error)
        }
    }
}

/// Lines of the config file, for errors found after the parse. `requests` and `categories` run
/// parallel to ``AgentConfiguration/requests`` and ``AgentConfiguration/categories``.
public struct ConfigurationLines: Sendable, Equatable {
    /// Where a request came from. An `ics` table gives one request per event, all at its line.
    public struct Request: Sendable, Equatable {
        /// Its `[[request]]` table's index among the file's `[[request]]` tables.
        public var table: Int
        /// That table's line.
        public var line: Int
        /// The line of the table's `trigger.calendar.tz`, nil when the table writes none.
        public var zoneLine: Int?

        public init(table: Int, line: Int, zoneLine: Int? = nil) {
            self.table = table; self.line = line; self.zoneLine = zoneLine
        }
    }

    /// `time_zone`'s line, nil when the file does not set it.
    public var timeZone: Int?
    /// `zones`' line, 0 when the file names no zone set.
    public var zones = 0
    /// One per request, in order.
    public var requests: [Request] = []
    /// One per category, in order: its `[[category]]` table's line.
    public var categories: [Int] = []

    public init() {}

    /// The origin of request `k`, nil when the configuration was not read from a file.
    public func request(_ k: Int) -> Request? { requests.indices.contains(k) ? requests[k] : nil }

    /// The line of category `k`, nil when the configuration was not read from a file.
    public func category(_ k: Int) -> Int? { categories.indices.contains(k) ? categories[k] : nil }

    /// A message about element `i` of a list (`requests[2]: trigger…`, the control methods' and
    /// the engine's form) split into the list's name, `i` and the rest (without its ": "); nil
    /// when it does not start so. The one reading of that form: `apply` and the agent's own
    /// start and SIGHUP locate such a message in the file by it.
    public static func listElement(_ message: String) -> (list: String, index: Int, rest: String)? {
        // Bytes, not Characters: Embedded Swift has no grapheme breaking by default.
        let u = Array(message.utf8)
        guard let open = u.firstIndex(of: UInt8(ascii: "[")), open > 0,
              u[..<open].allSatisfy({ ($0 | 0x20) >= UInt8(ascii: "a") && ($0 | 0x20) <= UInt8(ascii: "z") }),
              let close = u[open...].firstIndex(of: UInt8(ascii: "]")), close > open + 1, close - open <= 10 else { return nil }
        var index = 0
        for b in u[(open + 1)..<close] {
            guard b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") else { return nil }
            index = index * 10 + Int(b - UInt8(ascii: "0"))
        }
        var rest = close + 1
        if rest + 1 < u.count && u[rest] == UInt8(ascii: ":") && u[rest + 1] == UInt8(ascii: " ") { rest += 2 }
        return (String(decoding: u[..<open], as: UTF8.self), index, String(decoding: u[rest...], as: UTF8.self))
    }
}

/// When the daemon trusts the wall clock (before it, calendar triggers wait).
public enum ClockTrust: String, Sendable {
    /// When the kernel says NTP has synchronised it (`adjtimex`).
    case ntp
    /// Always (a board with a good RTC).
    case always
    /// When it agrees with GNSS time from the GPS.
    case gnss
}

/// Where positions come from.
public enum GPSConfiguration: Sendable, Equatable {
    /// No GPS: location requests never fire.
    case none
    /// NMEA from a serial port (termios).
    case serial(device: String, baud: Int)
    /// A gpsd daemon.
    case gpsd(host: String, port: String)
    /// A recorded log (NMEA or GPX) played back at `speed` times real time.
    case replay(path: String, speed: Double, exitAtEnd: Bool)
}

/// The GPIO lines of the buzzer, LEDs and button.
public struct GPIOConfiguration: Sendable {
    public enum Backend: Sendable, Equatable {
        /// libgpiod v1 on a chip (`gpiochip0` on a Raspberry Pi, offsets = BCM numbers).
        case libgpiod(chip: String)
        /// Prints pin changes; for machines without GPIO.
        case console
    }

    public var backend: Backend = .console
    public var buzzer: GPIOLineSpec? = GPIOLineSpec(name: "buzzer", offset: 18)
    public var led: GPIOLineSpec? = GPIOLineSpec(name: "led", offset: 23)
    public var badge: GPIOLineSpec? = GPIOLineSpec(name: "badge", offset: 24)
    /// A button to ground with the internal pull-up: active low.
    public var button: GPIOLineSpec? = GPIOLineSpec(name: "button", offset: 17, activeLow: true, bias: .pullUp)
    /// A press held this long is a long press (milliseconds).
    public var longPressMilliseconds: Int = 1000
    /// Button debounce (milliseconds).
    public var debounceMilliseconds: Int = 30

    public init() {}
}

/// A command run for each delivery.
public struct HookConfiguration: Sendable {
    /// The program and its arguments (no shell).
    public var command: [String]
    /// The command is killed after this many seconds.
    public var timeoutSeconds: Double

    public init(command: [String], timeoutSeconds: Double = 5) {
        self.command = command; self.timeoutSeconds = timeoutSeconds
    }
}
