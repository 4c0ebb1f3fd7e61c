// The command line of `fencepost-agent`, parsed by hand: three options do not justify linking
// swift-argument-parser (which brings FoundationEssentials, ~8 MB of resident pages) into the
// process that runs for months.

/// The version of the agent and the CLI.
public let fencepostVersion = "0.1.0-dev"

/// What `fencepost-agent` was asked to do.
public enum AgentArguments: Equatable, Sendable {
    /// Run with this configuration.
    case run(configPath: String, console: Bool)
    case help
    case version
    /// Run the seeded core checks (`--self-check [--seed N]`) and exit.
    case selfCheck(seed: UInt64)
    /// Check the configuration as a start would (`--check-config [--quiet]`) and exit.
    case checkConfig(configPath: String, quiet: Bool)
    /// Time the hot paths (`--bench [--seconds S]`) and exit.
    case bench(seconds: Double)
    /// Pulse each configured output once (`--selftest [--pulse MS] [--console]`) and exit.
    case selftest(configPath: String, console: Bool, pulseMilliseconds: Int)

    /// The default configuration path (the systemd unit's).
    public static let defaultConfigPath = "/etc/fencepost/fencepost.toml"

    /// Parses the arguments after the program name.
    ///
    /// - Throws: a message naming the argument at fault (the caller prints it and exits 64).
    public static func parse(_ arguments: [String]) throws(UsageError) -> AgentArguments {
        var config = defaultConfigPath
        var console = false
        var selfCheck = false
        var bench = false
        var checkConfig = false
        var selftest = false
        var pulse: Int? = nil
        var quiet = false
        var seconds = 1.0
        var seed = SelfCheck.defaultSeed
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            switch a {
            case "-h", "--help", "help": return .help
            case "--version": return .version
            case "--console": console = true
            case "--self-check": selfCheck = true
            case "--bench": bench = true
            case "--check-config": checkConfig = true
            case "--selftest": selftest = true
            case "--pulse":
                guard i + 1 < arguments.count, let ms = Int(arguments[i + 1]), OutputSelftest.pulseRange.contains(ms) else {
                    throw UsageError("--pulse needs milliseconds, 1 ≤ MS ≤ 10000: --selftest --pulse 300")
                }
                pulse = ms
                i += 1
            case "--quiet", "-q": quiet = true
            case "--seconds":
                guard i + 1 < arguments.count, let s = Double(arguments[i + 1]), s > 0, s <= 3600 else {
                    throw UsageError("--seconds needs a duration in seconds, 0 < S ≤ 3600: --bench --seconds 2")
                }
                seconds = s
                i += 1
            case "--seed":
                guard i + 1 < arguments.count, let n = UInt64(arguments[i + 1]) else {
                    throw UsageError("--seed needs a number: --self-check --seed 42")
                }
                seed = n
                i += 1
            case "--config", "-c":
                guard i + 1 < arguments.count, !arguments[i + 1].isEmpty else {
                    throw UsageError("\(a) needs a file: \(a) /etc/fencepost/fencepost.toml")
                }
                config = arguments[i + 1]
                i += 1
            default:
                if a.hasPrefix("--config=") {
                    config = String(a.dropFirst("--config=".count))
                    guard !config.isEmpty else { throw UsageError("--config= needs a file") }
                } else if a.hasPrefix("-") {
                    throw UsageError("unknown option \(a)")
                } else {
                    throw UsageError("unexpected argument \(a) (the configuration is given with --config FILE)")
                }
            }
            i += 1
        }
        if [selfCheck, bench, checkConfig, selftest].filter({ $0 }).count > 1 {
            throw UsageError("--self-check, --bench, --check-config and --selftest are separate runs: give one")
        }
        if quiet && !checkConfig { throw UsageError("--quiet goes with --check-config") }
        if pulse != nil && !selftest { throw UsageError("--pulse goes with --selftest") }
        if selftest {
            return .selftest(configPath: config, console: console, pulseMilliseconds: pulse ?? OutputSelftest.defaultPulseMilliseconds)
        }
        if checkConfig { return .checkConfig(configPath: config, quiet: quiet) }
        if selfCheck { return .selfCheck(seed: seed) }
        if bench { return .bench(seconds: seconds) }
        return .run(configPath: config, console: console)
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
          --self-check         Check the cores against simple references (next fire, geofence
                               index, timing wheel, NMEA) and exit: 0 when all agree, 1 if not.
                               The last line is a digest of every answer (the same on every
                               machine). --seed N picks other cases.
          --check-config       Check the configuration file (and its zones' GeoJSON, its time
                               zone names) as a start would, and exit: 0 valid, 78 not, with
                               FILE:LINE: message. --quiet prints nothing when it is valid.
                               The unit's ExecReload= runs it, so a bad file fails the reload.
          --bench              Time the hot paths in this binary and exit: next fire (daily,
                               Europe/Berlin), a geofence query among 100k circles, NMEA
                               parsing in MB/s (medians; --seconds S per case, default 1). For
                               comparing builds on one machine; `fencepost bench` has more.
          --selftest           Pulse each configured output (buzzer, LED, badge LED) once, for
                               --pulse MS milliseconds (default 300), to check the wiring, and
                               exit: 0 pulsed, 69 GPIO unavailable (the message says which), 78
                               a configuration error. Stop the service first: a line it holds is
                               busy. With --console, prints the pin changes instead.
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

/// A command line the agent does not understand.
public struct UsageError: Error, Equatable, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
