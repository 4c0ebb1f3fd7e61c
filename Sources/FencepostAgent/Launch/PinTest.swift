// Pulsing each configured output once, so that an installer can check the wiring: the one
// implementation behind `fencepost pin-test` (the CLI) and `fencepost-agent --pin-test` (a board
// with the cross-built agent alone).
import CivilTime
import FencepostLinux

/// Pulses the configured outputs (buzzer, LED, badge LED) one after the other.
public enum PinTest {
    /// How long each output stays on when no `--pulse` is given (milliseconds).
    public static let defaultPulseMilliseconds = 300
    /// The pulse lengths accepted (milliseconds).
    public static let pulseRange = 1...10_000

    /// What the command line asks for.
    public struct Options: Equatable, Sendable {
        public var configPath = AgentArguments.defaultConfigPath
        public var console = false
        public var pulseMilliseconds = PinTest.defaultPulseMilliseconds

        public init(configPath: String = AgentArguments.defaultConfigPath, console: Bool = false,
                    pulseMilliseconds: Int = PinTest.defaultPulseMilliseconds) {
            self.configPath = configPath
            self.console = console
            self.pulseMilliseconds = pulseMilliseconds
        }

        /// The options after the command.
        public static let synopsis = "[--config <file>] [--pulse <ms>] [--console]"

        /// Parses `--config FILE`, `--pulse MS` and `--console`; `command` is how the command was
        /// named, for messages.
        public static func parse(_ arguments: [String], command: String) throws(UsageError) -> Options {
            var options = Options()
            var reader = ArgumentReader(arguments)
            while let a = reader.next() {
                switch a {
                case "--config", "-c": options.configPath = try reader.configFile(a)
                case "--console": try reader.flag(a); options.console = true
                case "--pulse":
                    let text = try reader.value(of: a, example: "milliseconds, 1 ≤ MS ≤ 10000: \(command) --pulse 300")
                    guard let ms = Int(text), pulseRange.contains(ms) else {
                        throw UsageError("--pulse needs milliseconds, 1 ≤ MS ≤ 10000: \(command) --pulse 300")
                    }
                    options.pulseMilliseconds = ms
                default: throw ArgumentReader.unexpected(a, command: command)
                }
            }
            return options
        }
    }

    /// Parses `arguments` (after the command) and pulses; returns the exit status (64: usage).
    public static func run(_ arguments: [String], program: String, command: String) -> Int32 {
        switch Result(catching: { () throws(UsageError) in try Options.parse(arguments, command: command) }) {
        case .success(let o): return run(configPath: o.configPath, console: o.console, pulseMilliseconds: o.pulseMilliseconds, program: program)
        case .failure(let error): return error.report(program: program, usage: "\(program) \(Options.synopsis)")
        }
    }

    /// Opens the GPIO lines the configuration at `configPath` names and switches each on for
    /// `pulseMilliseconds`, then off, one after the other; says what it does on standard error,
    /// each line starting with `program`. With `console`, prints the pin changes on standard
    /// output instead of driving GPIO.
    ///
    /// - Returns: the exit status: 0 every output pulsed, 69 GPIO unavailable (no such chip, line
    ///   busy, permission denied: the message says which), 78 a configuration error.
    public static func run(configPath: String, console: Bool, pulseMilliseconds: Int, program: String) -> Int32 {
        var configuration: AgentConfiguration
        switch Result(catching: { () throws(AgentConfigurationError) in try AgentLauncher.load(configPath) }) {
        case .success(let loaded): configuration = loaded
        case .failure(let error):
            say("\(program): \(error)")
            return 78
        }
        if console { configuration.gpio.backend = .console }
        let backend: any GPIOBackend
        switch configuration.gpio.backend {
        case .console:
            backend = ConsoleGPIOBackend(clock: { SystemClocks.boottimeNow().nanosecondsSinceBoot }, fileDescriptor: .standardOutput)
        case .libgpiod(let chip):
            switch Result(catching: { () throws(GPIOError) in try LibgpiodBackend(chip: chip) }) {
            case .success(let opened): backend = opened
            case .failure(let error):
                say("\(program): \(error)")
                return 69
            }
        }
        var outputs: [GPIOLineSpec] = []
        for spec in [configuration.gpio.buzzer, configuration.gpio.led, configuration.gpio.badge] {
            if let spec { outputs.append(spec) }
        }
        guard !outputs.isEmpty else {
            say("\(program): the configuration names no output (gpio.buzzer, gpio.led, gpio.badge)")
            return 78
        }
        for spec in outputs {
            say("\(program): \(spec) on for \(pulseMilliseconds) ms")
            switch Result(catching: { () throws(GPIOError) in try pulse(backend, spec, milliseconds: pulseMilliseconds) }) {
            case .success: break
            case .failure(let error):
                say("\(program): \(spec): \(error)")
                return 69
            }
        }
        say("\(program): \(outputs.count) outputs pulsed")
        return 0
    }

    /// One output on for `milliseconds`, then off and given back (off also when setting it fails).
    private static func pulse(_ backend: any GPIOBackend, _ spec: GPIOLineSpec, milliseconds: Int) throws(GPIOError) {
        let line = try backend.requestOutput(spec)
        defer { line.release() }
        try line.set(active: true)
        // A sleep cut short (it cannot be: EINTR resumes) would only shorten the pulse.
        try? Sleep.milliseconds(milliseconds)
        try line.set(active: false)
    }

    private static func say(_ text: String) {
        try? FileDescriptor.standardError.writeAll(PrintableText.escaped(text) + "\n")
    }
}
