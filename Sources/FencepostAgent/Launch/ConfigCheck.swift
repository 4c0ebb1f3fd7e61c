// `check-config`: the one implementation behind `fencepost check-config` and `fencepost-agent
// --check-config` (the second for boards with only the cross-built agent, and for the unit's
// ExecReload=), its options, output and exit statuses included: the file parsed as a start would,
// every zone checked, every time zone name looked up, and a summary of what it configures.
import Annunciator
import CivilTime
import FencepostJSON
import FencepostLinux
import LocalNotifications

/// Checks a configuration as the agent's start would.
public enum ConfigCheck {
    /// What the command line asks for.
    public struct Options: Equatable, Sendable {
        public var path = AgentArguments.defaultConfigPath
        public var quiet = false

        public init(path: String = AgentArguments.defaultConfigPath, quiet: Bool = false) {
            self.path = path
            self.quiet = quiet
        }

        /// The options after the command.
        public static let synopsis = "[--quiet] [<file> | --config <file>]"

        /// Parses `[--quiet] [FILE | --config FILE]`; `command` names the command in messages.
        public static func parse(_ arguments: [String], command: String) throws(UsageError) -> Options {
            var options = Options()
            var file: String? = nil
            var reader = ArgumentReader(arguments)
            func take(_ path: String) throws(UsageError) {
                if file != nil { throw UsageError("one configuration file at a time (\(path) is a second)") }
                file = path
            }
            while let a = reader.next() {
                switch a {
                case "--quiet", "-q": try reader.flag(a); options.quiet = true
                case "--config", "-c": try take(try reader.configFile(a))
                default:
                    guard !a.hasPrefix("-"), !a.isEmpty else { throw ArgumentReader.unexpected(a, command: command) }
                    try take(a)
                }
            }
            if let file { options.path = file }
            return options
        }
    }

    /// What the command does, its options and exit statuses (both executables' help).
    public static let details = """
        Reads FILE (and the GeoJSON file its `zones` key names) exactly as a start of
        the agent does. On success prints a summary: GPS source, GPIO backend and
        pins, requests, categories, zones, quiet hours and hook, and which of the
        file's keys a SIGHUP (systemctl reload) does not apply: those need a restart
        (docs/configuration.md lists every key with its reload behaviour).

        On a problem prints FILE:LINE: key.path: message to standard error, e.g.

          /etc/fencepost/fencepost.toml:12: gpio.buzzer.pin: 99 is not a BCM pin (0…27)

        With --quiet nothing is printed when the file is valid: `systemctl reload
        fencepost` runs it first (ExecReload=), so a bad file fails the reload.

        Exit status: 0 valid, 78 (EX_CONFIG) invalid, 66 the file cannot be opened,
        74 it cannot be read or the summary cannot be written.

        """

    /// Parses `arguments` (after the command) and checks; returns the exit status (64: usage).
    public static func run(_ arguments: [String], program: String, command: String) -> Int32 {
        switch Result(catching: { () throws(UsageError) in try Options.parse(arguments, command: command) }) {
        case .success(let options): return run(options, program: program)
        case .failure(let error): return error.report(program: program, usage: "\(program) \(Options.synopsis)")
        }
    }

    /// Checks the file `options` names: the summary on standard output (nothing with `quiet`),
    /// problems on standard error. Returns the exit status (``details``).
    public static func run(_ options: Options, program: String) -> Int32 {
        func say(_ line: String) { try? FileDescriptor.standardError.writeAll(PrintableText.escaped(line) + "\n") }
        let path = options.path
        let bytes: [UInt8]
        do throws(InputFiles.Failure) { bytes = try InputFiles.read(path, maximumBytes: InputFiles.maximumConfigurationBytes) } catch {
            switch error {
            case .tooLarge:
                say("\(program): config file \(path): \(error)")
                return 78  // EX_CONFIG
            case .system(let e) where e == .ioError:
                say("\(program): cannot read config file \(path): \(error)")
                return 74  // EX_IOERR
            default:
                say("\(program): cannot open config file \(path): \(error)")
                return 66  // EX_NOINPUT
            }
        }
        let text: String
        do { text = try StrictUTF8.decode(bytes) } catch {
            say("\(AgentConfigurationError(path: path, line: error.line, message: error.description))")
            return 78  // EX_CONFIG
        }
        switch Result(catching: { () throws(AgentConfigurationError) in try check(text: text, path: path, zones: SystemZones()) }) {
        case .failure(let error):
            for line in error.lines { say(line) }
            return 78
        case .success(let checked):
            for note in checked.configuration.calendarNotes { say("\(path): \(note)") }
            if options.quiet { return 0 }
            let out = summary(checked.configuration) + reloadLine(restartKeys: checked.restartKeys) + "\n"
            do throws(Errno) { try FileDescriptor.standardOutput.writeAll(out) } catch {
                say("\(program): cannot write the summary: \(error)")
                return 74
            }
            return 0
        }
    }

    /// One line per topic:
    ///
    ///     /etc/fencepost/fencepost.toml: OK
    ///     gps: serial /dev/serial0 at 9600 baud
    ///     gpio: libgpiod gpiochip0; buzzer BCM 18, led BCM 23, badge BCM 24, button BCM 17 (active low, pull-up); long press 1000 ms, debounce 30 ms
    public static func summary(_ c: AgentConfiguration) -> String {
        var lines: [String] = ["\(c.path ?? "config"): OK"]
        switch c.gps {
        case .none: lines.append("gps: none")
        case .serial(let device, let baud): lines.append("gps: serial \(device) at \(baud) baud")
        case .gpsd(let host, let port): lines.append("gps: gpsd \(host.contains(":") ? "[\(host)]" : host):\(port)")
        case .replay(let path, let speed, let exitAtEnd):
            lines.append("gps: replay \(path) ×\(number(speed))\(exitAtEnd ? ", exit at end" : "")")
        }
        let backend: String = switch c.gpio.backend {
        case .console: "console"
        case .libgpiod(let chip): "libgpiod \(chip)"
        }
        var pins: [String] = []
        for spec in [c.gpio.buzzer, c.gpio.led, c.gpio.badge, c.gpio.button] { if let spec { pins.append(line(spec)) } }
        lines.append("gpio: \(backend); " + (pins.isEmpty ? "no lines" : pins.joined(separator: ", "))
                     + "; long press \(c.gpio.longPressMilliseconds) ms, debounce \(c.gpio.debounceMilliseconds) ms")
        lines.append("requests: \(c.requests.count)")
        lines.append("zones: \(c.zoneCount ?? 0)")
        lines.append("categories: \(c.categories.count)")
        let alerts = c.engine.alertSettings
        lines.append("alerts: buzzer \(alerts.buzzer ? "on" : "off"), led \(alerts.led ? "on" : "off"), badge \(alerts.badge ? "on" : "off")")
        if let q = alerts.quietHours {
            lines.append("quiet hours: \(clock(q.startMinute))-\(clock(q.endMinute))")
        } else {
            lines.append("quiet hours: none")
        }
        if !c.patterns.isEmpty { lines.append("patterns: " + c.patterns.map { $0.name }.joined(separator: ", ")) }
        if let h = c.hook {
            lines.append("hook: " + h.command.joined(separator: " ") + " (timeout \(number(h.timeoutSeconds)) s)")
        } else {
            lines.append("hook: none")
        }
        lines.append("time zone: \(c.timeZone ?? "system (/etc/localtime)"); clock trust: \(c.clockTrust.rawValue)")
        lines.append("state: \(c.statePath)")
        lines.append("socket: \(c.socketPath) mode 0o\(String(c.socketMode, radix: 8))\(c.socketGroup.map { " group \($0)" } ?? "")")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `buzzer BCM 18 (active low, pull-up)`.
    static func line(_ spec: GPIOLineSpec) -> String {
        var notes: [String] = []
        if spec.activeLow { notes.append("active low") }
        switch spec.bias {
        case .asIs: break
        case .disabled: notes.append("no pull")
        case .pullUp: notes.append("pull-up")
        case .pullDown: notes.append("pull-down")
        }
        return "\(spec.name) BCM \(spec.offset)" + (notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")")
    }

    /// `07:05` for minute 425 of the day.
    static func clock(_ minute: Int) -> String {
        let h = minute / 60, m = minute % 60
        return (h < 10 ? "0" : "") + "\(h):" + (m < 10 ? "0" : "") + "\(m)"
    }

    /// A whole number without its `.0`.
    static func number(_ d: Double) -> String {
        if let i = Int64(exactly: d) { return "\(i)" }
        return "\(d)"
    }

    /// Parses `text` (the file at `path`), checks the zones' GeoJSON and every time zone name.
    /// - Returns: the configuration and the keys it sets that a SIGHUP does not apply
    ///   (``ConfigurationKeys``).
    /// - Throws: the first problem, as FILE:LINE: key.path: message.
    public static func check(text: String, path: String, zones: SystemZones) throws(AgentConfigurationError)
        -> (configuration: AgentConfiguration, restartKeys: [String]) {
        let config = try AgentConfiguration.parse(text, path: path, zoneFileReader: InputFiles.readZones)
        if let problem = unknownZone(config, zones: zones) { throw problem }
        return (config, ConfigurationKeys.restartKeysSet(by: config))
    }

    /// The line that says what a SIGHUP does with the file's keys.
    public static func reloadLine(restartKeys: [String]) -> String {
        restartKeys.isEmpty ? "reload: SIGHUP applies every key set here"
            : "reload: SIGHUP applies every key set here except \(restartKeys.joined(separator: ", ")), which need\(restartKeys.count == 1 ? "s" : "") a restart"
    }

    /// The first time zone name the system does not know (the device zone, a calendar trigger's
    /// `tz`), as the error the agent (or the engine, for a request) would give, at its line (the
    /// lines the parse kept: `request[K]` is the K-th `[[request]]` table, as the parser's own
    /// errors count them, which an `ics` table before it makes differ from the request's index).
    static func unknownZone(_ c: AgentConfiguration, zones: SystemZones) -> AgentConfigurationError? {
        if let name = c.timeZone {
            do throws(ZoneError) { _ = try zones.rules(named: name) } catch {
                return AgentConfigurationError(path: c.path, line: c.lines.timeZone, message: "time_zone: \(error)")
            }
        }
        for (k, request) in c.requests.enumerated() {
            guard case .calendar(let t) = request.trigger, let name = t.zoneIdentifier else { continue }
            do throws(ZoneError) { _ = try zones.rules(named: name) } catch {
                let origin = c.lines.request(k)
                return AgentConfigurationError(path: c.path, line: origin.map { $0.zoneLine ?? $0.line },
                                               message: "request[\(origin?.table ?? k)] (id \"\(request.identifier)\"): trigger.calendar.tz: \(error)")
            }
        }
        return nil
    }
}
