// The command line of `fencepost-agent`, parsed by hand: a handful of options do not justify
// linking swift-argument-parser (which brings FoundationEssentials, ~8 MB of resident pages) into
// the process that runs for months. Each command's options are parsed here once; `fencepost`'s
// subcommands of the same name hand their arguments to the same parsers.
import FencepostLinux

/// The version of the agent and the CLI.
public let fencepostVersion = "0.1.0-dev"

/// What `fencepost-agent` was asked to do.
public enum AgentArguments: Equatable, Sendable {
    /// Run with this configuration.
    case run(RunOptions)
    case help
    case version
    /// Run the seeded core checks (`--check-algorithms [--seed N]`) and exit.
    case checkAlgorithms(seed: UInt64)
    /// Check the configuration as a start would (`--check-config [--quiet]`) and exit.
    case checkConfig(ConfigCheck.Options)
    /// Time the hot paths (`--bench [--seconds S]`) and exit.
    case bench(seconds: Double)
    /// Pulse each configured output once (`--pin-test [--pulse MS] [--console]`) and exit.
    case pinTest(PinTest.Options)

    /// The default configuration path (the systemd unit's).
    public static let defaultConfigPath = "/etc/fencepost/fencepost.toml"

    /// The flags that pick a command other than running; one at most is given.
    static let commandFlags = ["--check-algorithms", "--bench", "--check-config", "--pin-test"]

    /// The command flag whose options include `option` (nil for `run`'s own and unknown ones).
    static func command(owning option: String) -> String? {
        switch option {
        case "--quiet", "-q": "--check-config"
        case "--pulse": "--pin-test"
        case "--seed": "--check-algorithms"
        case "--seconds": "--bench"
        default: nil
        }
    }

    /// Parses the bench's one option, `--seconds S` (0 < S ≤ 3600, default 1).
    static func benchSeconds(_ arguments: [String], command: String) throws(UsageError) -> Double {
        var seconds = 1.0
        var reader = ArgumentReader(arguments)
        while let a = reader.next() {
            guard a == "--seconds" else { throw ArgumentReader.unexpected(a, command: command) }
            let message = "a duration in seconds, 0 < S ≤ 3600: \(command) --seconds 2"
            guard let s = Double(try reader.value(of: a, example: message)), s > 0, s <= 3600 else {
                throw UsageError("--seconds needs \(message)")
            }
            seconds = s
        }
        return seconds
    }

    /// Parses the arguments after the program name: a command flag (none: run) anywhere among
    /// that command's options.
    ///
    /// - Throws: a message naming the argument at fault (the caller prints it and exits 64).
    public static func parse(_ arguments: [String]) throws(UsageError) -> AgentArguments {
        if arguments.first == "help" || arguments.contains(where: { $0 == "-h" || $0 == "--help" }) { return .help }
        if arguments.contains("--version") { return .version }
        var command: String? = nil
        var rest: [String] = []
        for a in arguments {
            guard commandFlags.contains(a) else { rest.append(a); continue }
            if let c = command, c != a {
                throw UsageError("--check-algorithms, --bench, --check-config and --pin-test are separate runs: give one")
            }
            command = a
        }
        switch command {
        case "--check-config": return .checkConfig(try ConfigCheck.Options.parse(rest, command: "--check-config"))
        case "--pin-test": return .pinTest(try PinTest.Options.parse(rest, command: "--pin-test"))
        case "--check-algorithms": return .checkAlgorithms(seed: try AlgorithmCheck.parseSeed(rest, command: "--check-algorithms"))
        case "--bench": return .bench(seconds: try benchSeconds(rest, command: "--bench"))
        default: return .run(try RunOptions.parse(rest))
        }
    }

    /// `fencepost-agent --help`.
    public static let helpText = """
        USAGE: fencepost-agent [--config <file>] [--console]

        The Fencepost agent: delivers local notifications (calendar, interval and location
        triggers) on a buzzer and LEDs, takes answers from a push button, and is driven over its
        control socket by `fencepost add|pending|remove|delivered|ack|categories|apply|status`.

        This is `fencepost run` without the command-line tools around it: the process that
        systemd keeps running (board/fencepost.service), small in memory.

        OPTIONS:
          -c, --config <file>  The configuration file (TOML). Check it first with
                               `fencepost check-config FILE`. (default: \(defaultConfigPath))
          --console            Print pin changes on standard output instead of driving GPIO.
          --check-algorithms   Check the cores against simple references (next fire, geofence
                               index, timing wheel, NMEA) and exit: 0 when all agree, 1 if not.
                               The last line is a digest of every answer (the same on every
                               machine). --seed N picks other cases. The same command as
                               `fencepost check-algorithms`.
          --check-config       Check the configuration file (--config FILE, or FILE; its zones'
                               GeoJSON, its time zone names) as a start would, summarise it
                               and exit: 0 valid, 78 not, with FILE:LINE: message, 66 it cannot
                               be opened. --quiet prints nothing when it is valid. The unit's
                               ExecReload= runs it, so a bad file fails the reload. The same
                               command as `fencepost check-config`.
          --bench              Time the hot paths in this binary and exit: next fire (daily,
                               Europe/Berlin), a geofence query among 100k circles, NMEA
                               parsing in MB/s (medians; --seconds S per case, default 1). For
                               comparing builds on one machine; `fencepost bench` has more.
          --pin-test           Pulse each configured output (buzzer, LED, badge LED) once, for
                               --pulse MS milliseconds (default 300), to check the wiring, and
                               exit: 0 pulsed, 69 GPIO unavailable (the message says which), 78
                               a configuration error. Stop the service first: a line it holds is
                               busy. With --console, prints the pin changes instead. The same
                               command as `fencepost pin-test`.
          --version            Print the version.
          -h, --help           Show this help.
          zones build IN -o OUT
                               Build a zone set from GeoJSON, as `fencepost zones build`
                               does (the same command): `zones build --help`.

        Signals: TERM or INT stop it (outputs off, exit 0); HUP reloads the configuration (a broken
        file is logged with its line and the running configuration is kept).

        Exit status: 0 stopped by a signal or the replay ended, 1 the event loop failed, 64 usage,
        65 the replay log is not a GPS log, 66 the replay log cannot be read, 69 GPIO or libgps
        unavailable (no such chip: use gpio.backend = "console"), 73 the state file or the socket
        cannot be created, 74 the state file cannot be written, 78 a configuration error
        (FILE:LINE: message) or the configuration file cannot be read.

        """
}

/// What `fencepost run` and `fencepost-agent` take to run the agent.
public struct RunOptions: Equatable, Sendable {
    public var configPath = AgentArguments.defaultConfigPath
    public var console = false

    public init(configPath: String = AgentArguments.defaultConfigPath, console: Bool = false) {
        self.configPath = configPath
        self.console = console
    }

    /// The options after the program name (`fencepost-agent`) or `run` (`fencepost run`).
    public static let synopsis = "[--config <file>] [--console]"

    /// Parses `run`'s options: `-c`/`--config FILE`, `--console`.
    public static func parse(_ arguments: [String]) throws(UsageError) -> RunOptions {
        var options = RunOptions()
        var reader = ArgumentReader(arguments)
        while let a = reader.next() {
            switch a {
            case "--config", "-c": options.configPath = try reader.configFile(a)
            case "--console": try reader.flag(a); options.console = true
            default: throw ArgumentReader.unexpected(a, command: nil)
            }
        }
        return options
    }

    /// Runs the agent (``AgentLauncher``) with these options; returns the exit status.
    public func run(program: String) -> Int32 {
        AgentLauncher.run(configPath: configPath, console: console, prefix: program)
    }

    /// `fencepost run ARGUMENTS`: parses them as `fencepost-agent` does and runs the agent.
    public static func run(_ arguments: [String], program: String) -> Int32 {
        switch Result(catching: { () throws(UsageError) in try parse(arguments) }) {
        case .success(let options): return options.run(program: program)
        case .failure(let error): return error.report(program: program, usage: "\(program) \(synopsis)")
        }
    }
}

/// A command line the agent does not understand.
public struct UsageError: Error, Equatable, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }

    /// Writes the message and the usage line to standard error; returns 64 (EX_USAGE).
    public func report(program: String, usage: String) -> Int32 {
        try? FileDescriptor.standardError.writeAll("\(program): \(PrintableText.escaped(message))\nusage: \(usage)  (see --help)\n")
        return 64
    }
}
