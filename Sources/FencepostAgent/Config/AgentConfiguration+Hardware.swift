// [gps], [gpio] with its four lines, [patterns] and [hook].
import Annunciator
import ConfigFile
import FencepostLinux

extension AgentConfigurationParser {
    // MARK: [gps]

    static let gpsKeys: [(source: String, keys: [String])] = [
        ("none", []), ("serial", ["device", "baud"]), ("gpsd", ["url"]), ("replay", ["file", "speed", "exit_at_end"]),
    ]

    /// `uere` (metres, every source): the error estimate of a fix is HDOP × UERE.
    func readUERE(_ s: ConfigSection) throws(ConfigError) -> Double {
        let uere = try s.float("uere") ?? GPSDClient.defaultUERE
        guard uere > 0 && uere <= 100 else { throw s.error("uere", "must be a distance in metres above 0 and at most 100, got \(uere)") }
        return uere
    }

    func readGPS(_ s: ConfigSection) throws(ConfigError) -> GPSConfiguration {
        try s.checkKeys(allowed: ConfigurationKeys.names(in: "gps"))
        let source = try s.string("source") ?? "none"
        guard let row = Self.gpsKeys.first(where: { $0.source == source }) else {
            throw s.error("source", "\"\(source)\" is not one of " + Self.gpsKeys.map { "\"\($0.source)\"" }.joined(separator: ", "))
        }
        for (key, _) in s.table.entries where key != "source" && key != "uere" && !row.keys.contains(key) {
            let owner = Self.gpsKeys.first { $0.keys.contains(key) }!.source
            throw s.error(key, "applies to source = \"\(owner)\", not \"\(source)\"")
        }
        switch source {
        case "serial":
            let device = try s.string("device") ?? "/dev/serial0"
            guard !device.isEmpty else { throw s.error("device", "must not be empty") }
            let baud = try s.integer("baud") ?? 9600
            guard SerialPort.supportedBaudRates.contains(Int(clamping: baud)) else {
                throw s.error("baud", "\(baud) is not a supported baud rate ("
                              + SerialPort.supportedBaudRates.map(String.init).joined(separator: ", ") + ")")
            }
            return .serial(device: device, baud: Int(baud))
        case "gpsd":
            let url = try s.string("url") ?? "gpsd://127.0.0.1:2947"
            guard let endpoint = GPSDEndpoint(url: url) else {
                throw s.error("url", "\"\(url)\" is not gpsd://HOST:PORT (e.g. \"gpsd://127.0.0.1:2947\")")
            }
            return .gpsd(host: endpoint.host, port: endpoint.port)
        case "replay":
            let file = try s.require(try s.string("file"), "file", "the recorded log, NMEA or GPX")
            guard !file.isEmpty else { throw s.error("file", "must not be empty") }
            let speed = try s.float("speed") ?? 1
            guard speed >= 0.001 && speed <= 10_000 else { throw s.error("speed", "must be 0.001…10000 (times real time), got \(speed)") }
            return .replay(path: resolve(file), speed: speed, exitAtEnd: try s.boolean("exit_at_end") ?? false)
        default:
            return .none
        }
    }

    // MARK: [gpio]

    func readGPIO(_ s: ConfigSection) throws(ConfigError) -> GPIOConfiguration {
        try s.checkKeys(allowed: ConfigurationKeys.names(in: "gpio"))
        var gpio = GPIOConfiguration()
        let backend = try s.string("backend") ?? "console"
        switch backend {
        case "console":
            if s.value("chip") != nil { throw s.error("chip", "applies to backend = \"libgpiod\", not \"console\"") }
            gpio.backend = .console
        case "libgpiod":
            let chip = try s.string("chip") ?? "gpiochip0"
            guard !chip.isEmpty else { throw s.error("chip", "must not be empty") }
            gpio.backend = .libgpiod(chip: chip)
        default:
            throw s.error("backend", "\"\(backend)\" is not one of \"libgpiod\", \"console\"")
        }
        if let ms = try s.integer("long_press_ms", in: 100...60_000) { gpio.longPressMilliseconds = Int(ms) }
        if let ms = try s.integer("debounce_ms", in: 0...1000) { gpio.debounceMilliseconds = Int(ms) }
        if let t = try s.section("buzzer") { gpio.buzzer = try readLine(t, default: gpio.buzzer!) }
        if let t = try s.section("led") { gpio.led = try readLine(t, default: gpio.led!) }
        if let t = try s.section("badge") { gpio.badge = try readLine(t, default: gpio.badge!) }
        if let t = try s.section("button") { gpio.button = try readLine(t, default: gpio.button!) }
        guard gpio.debounceMilliseconds < gpio.longPressMilliseconds else {
            throw s.error("debounce_ms", "must be shorter than long_press_ms (\(gpio.longPressMilliseconds))")
        }
        // The same pin twice: reported at the later of the two lines.
        var used: [(offset: UInt32, role: String, line: Int)] = []
        let roles: [(String, GPIOLineSpec?)] = [("buzzer", gpio.buzzer), ("led", gpio.led), ("badge", gpio.badge), ("button", gpio.button)]
        for (role, spec) in roles {
            guard let spec else { continue }
            let line = s.table.value(at: [role, "pin"])?.line ?? s.table[role]?.line ?? s.line
            if let first = used.first(where: { $0.offset == spec.offset }) {
                let laterIsThis = line >= first.line
                let later = laterIsThis ? role : first.role, earlier = laterIsThis ? first.role : role
                let byDefault = s.table.value(at: [earlier, "pin"]) == nil ? " (its default pin)" : ""
                throw ConfigError(line: max(line, first.line), path: "gpio.\(later).pin",
                                  message: "BCM \(spec.offset) is already used by gpio.\(earlier)\(byDefault)")
            }
            used.append((spec.offset, role, line))
        }
        return gpio
    }

    /// One `[gpio.ROLE]` table: `pin` (BCM 0…27), `active_low`, `bias`, `enabled = false` to leave
    /// the role unwired.
    func readLine(_ t: ConfigSection, default spec: GPIOLineSpec) throws(ConfigError) -> GPIOLineSpec? {
        try t.checkKeys(allowed: ConfigurationKeys.names(in: "gpio.buzzer"))   // the same four keys for every line
        if try t.boolean("enabled") == false { return nil }
        var spec = spec
        if let pin = try t.integer("pin") {
            guard (0...27).contains(pin) else { throw t.error("pin", "\(pin) is not a BCM pin (0…27)") }
            spec.offset = UInt32(pin)
        }
        if let low = try t.boolean("active_low") { spec.activeLow = low }
        if let b = try t.string("bias") {
            let biases: [(String, GPIOBias)] = [("as_is", .asIs), ("disabled", .disabled), ("pull_up", .pullUp), ("pull_down", .pullDown)]
            guard let bias = biases.first(where: { $0.0 == b })?.1 else {
                throw t.error("bias", "\"\(b)\" is not one of " + biases.map { "\"\($0.0)\"" }.joined(separator: ", "))
            }
            spec.bias = bias
        }
        return spec
    }

    // MARK: [patterns]

    func readPatterns(_ s: ConfigSection) throws(ConfigError) -> [BuzzerPattern] {
        var patterns: [BuzzerPattern] = []
        for (name, _) in s.table.entries {
            let steps = try s.require(try s.integers(name), name, "an array of milliseconds")
            guard let ms = steps.allSatisfy({ (0...Int64(UInt32.max)).contains($0) }) ? steps.map({ UInt32($0) }) : nil else {
                throw s.error(name, "each step must be 1…\(BuzzerPattern.maximumStepMilliseconds) ms")
            }
            do { patterns.append(try BuzzerPattern(name: name, steps: ms)) } catch {
                throw s.error(name, error.description)
            }
        }
        return patterns
    }

    // MARK: [hook]

    func readHook(_ s: ConfigSection) throws(ConfigError) -> HookConfiguration {
        try s.checkKeys(allowed: ConfigurationKeys.names(in: "hook"))
        let command = try s.require(try s.strings("command"), "command", "an array: program and arguments")
        guard let program = command.first, !program.isEmpty else {
            throw s.error("command", "must name a program (e.g. [\"/usr/local/bin/notify\", \"--flag\"])")
        }
        let timeout = try s.float("timeout") ?? 5
        guard timeout > 0 && timeout <= 3600 else { throw s.error("timeout", "must be greater than 0 and at most 3600 seconds, got \(timeout)") }
        return HookConfiguration(command: command, timeoutSeconds: timeout)
    }
}
