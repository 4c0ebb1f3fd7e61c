// `fencepost check-config [FILE]`: read the daemon's config file as `fencepost run` would, and
// either summarise it or name the first problem as FILE:LINE: message.
import ArgumentParser
import ConfigFile
import FencepostJSON
import FencepostAgent
import CivilTime
import FencepostLinux
import LocalNotifications

struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check the daemon's config file and summarise it.",
        discussion: """
            Reads FILE (and the GeoJSON file its `zones` key names) exactly as `fencepost run` \
            does. On success prints a summary: GPS source, GPIO backend and pins, requests, \
            categories, zones, quiet hours and hook, and which of the file's keys a SIGHUP \
            (systemctl reload) does not apply: those need a restart (docs/configuration.md \
            lists every key with its reload behaviour).

            On a problem prints FILE:LINE: key.path: message to standard error, e.g.

              /etc/fencepost/fencepost.toml:12: gpio.buzzer.pin: 99 is not a BCM pin (0…27)

            With --quiet nothing is printed when the file is valid: `systemctl reload fencepost` \
            runs it first (ExecReload=), so a bad file fails the reload.

            Exit status: 0 valid, 78 (EX_CONFIG) invalid, 66 the file cannot be opened, 74 it \
            cannot be read or the summary cannot be written.
            """)

    @Flag(help: "Print nothing when the file is valid (errors still go to standard error).")
    var quiet = false

    @Argument(help: ArgumentHelp("The config file.", valueName: "file"))
    var file: String = "/etc/fencepost/fencepost.toml"

    func run() throws {
        let bytes: [UInt8]
        do { bytes = try readWholeFile(file, what: "config file", maximumBytes: InputFiles.maximumConfigurationBytes) } catch {
            writeErrorLine("fencepost check-config: \(error.message)")
            throw ExitCode(error.code)
        }
        let text: String
        do { text = try StrictUTF8.decode(bytes) } catch {
            writeErrorLine("\(AgentConfigurationError(path: file, line: error.line, message: error.description))")
            throw ExitCode(78)  // EX_CONFIG
        }
        let config: AgentConfiguration
        let tables: Int, restartKeys: [String]
        do { (config, tables, restartKeys) = try ConfigCheck.check(text: text, path: file, zones: SystemZones()) } catch {
            writeErrorLine("\(error)")
            throw ExitCode(78)  // EX_CONFIG
        }
        if quiet { return }
        do throws(ClientFailure) { try writeStandardOutput(Self.summary(config, requestTables: tables) + ConfigCheck.reloadLine(restartKeys: restartKeys) + "\n") } catch {
            writeErrorLine("fencepost check-config: \(error)")
            throw ExitCode(74)
        }
    }

    /// One line per topic:
    ///
    ///     /etc/fencepost/fencepost.toml: OK
    ///     gps: serial /dev/serial0 at 9600 baud
    ///     gpio: libgpiod gpiochip0; buzzer BCM 18, led BCM 23, badge BCM 24, button BCM 17 (active low, pull-up); long press 1000 ms, debounce 30 ms
    static func summary(_ c: AgentConfiguration, requestTables: Int) -> String {
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
        let pins = [c.gpio.buzzer, c.gpio.led, c.gpio.badge, c.gpio.button].compactMap { $0 }.map(line)
        lines.append("gpio: \(backend); " + (pins.isEmpty ? "no lines" : pins.joined(separator: ", "))
                     + "; long press \(c.gpio.longPressMilliseconds) ms, debounce \(c.gpio.debounceMilliseconds) ms")
        lines.append("requests: \(c.requests.count)")
        lines.append("zones: \(c.zoneCount ?? 0)")
        lines.append("categories: \(c.categories.count)")
        let alerts = c.engine.alertSettings
        let outputs = [("buzzer", alerts.buzzer), ("led", alerts.led), ("badge", alerts.badge)]
            .map { "\($0.0) \($0.1 ? "on" : "off")" }.joined(separator: ", ")
        lines.append("alerts: \(outputs)")
        if let q = alerts.quietHours {
            lines.append("quiet hours: \(clock(q.startMinute))-\(clock(q.endMinute))")
        } else {
            lines.append("quiet hours: none")
        }
        if !c.patterns.isEmpty { lines.append("patterns: " + c.patterns.map(\.name).joined(separator: ", ")) }
        if let h = c.hook {
            lines.append("hook: " + h.command.joined(separator: " ") + " (timeout \(number(h.timeoutSeconds)) s)")
        } else {
            lines.append("hook: none")
        }
        lines.append("time zone: \(c.timeZone ?? "system (/etc/localtime)"); clock trust: \(c.clockTrust.rawValue)")
        lines.append("state: \(c.statePath)")
        lines.append("socket: \(c.socketPath) mode \(octal(c.socketMode))\(c.socketGroup.map { " group \($0)" } ?? "")")
        return lines.joined(separator: "\n") + "\n"
    }

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

    static func clock(_ minute: Int) -> String {
        let h = minute / 60, m = minute % 60
        return (h < 10 ? "0" : "") + "\(h):" + (m < 10 ? "0" : "") + "\(m)"
    }

    static func number(_ d: Double) -> String {
        if let i = Int64(exactly: d) { return "\(i)" }
        return "\(d)"
    }

    static func octal(_ mode: UInt32) -> String { "0o" + String(mode, radix: 8) }
}
