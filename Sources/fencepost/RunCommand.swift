// `fencepost run`: the agent itself — reads the configuration, opens the state file, the control
// socket, GPIO and the GPS source, and runs the event loop until SIGTERM.
import ArgumentParser
import CivilTime
import FencepostAgent
import FencepostLinux
import Position
import TrackFormats

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the agent: deliver notifications on GPIO, answer the control socket.",
        discussion: """
            The daemon. systemd starts it (board/fencepost.service, Type=notify); on any machine \
            the demo runs it on a recorded drive with console GPIO:

              fencepost run --config board/demo/fencepost.toml

            It reads the configuration (check it first with `fencepost check-config FILE`), \
            restores the pending and delivered notifications from the state file — applying each \
            request's missed-fire policy to what fell due while it was down — applies the \
            requests and categories of the configuration (idempotently: unchanged ones keep their \
            progress), and then sleeps in one epoll loop until a timer, a fix, the button or the \
            control socket wakes it. Every change is committed to the state file before the \
            buzzer sounds.

            Signals: TERM or INT stop it (outputs off, exit 0); HUP reloads the configuration \
            (a broken file is logged with its line, and the running configuration is kept).

            With the console backend each pin change is a line on standard output:

              +12.345 s  buzzer (BCM 18) on

            Exit status: 0 stopped by a signal or the replay ended, 64 usage, 66 a file cannot be \
            read, 69 GPIO unavailable (no such chip: use gpio.backend = "console"), 73 the state \
            file or the socket cannot be created, 74 the state file cannot be written, 78 a \
            configuration error (FILE:LINE: message).
            """
    )

    @Option(help: ArgumentHelp("The configuration file (TOML).", valueName: "file"))
    var config = "/etc/fencepost/fencepost.toml"

    @Flag(help: "Print pin changes on standard output instead of driving GPIO (whatever the file says).")
    var console = false

    func run() throws {
        let log = DaemonLog.standardError
        let loaded: AgentConfiguration
        do { loaded = try Self.load(config) } catch {
            writeStandardError("fencepost run: \(error)\n")
            throw ExitCode(78)
        }
        var configuration = loaded
        if console { configuration.gpio.backend = .console }
        let zones = SystemZones()
        let deviceZone: ZoneRules
        do {
            if let name = configuration.timeZone { deviceZone = try zones.rules(named: name) } else {
                deviceZone = try zones.deviceZone(tzVariable: SystemZones.environmentTZ())
            }
        } catch {
            writeStandardError("fencepost run: time zone: \(error)\n")
            throw ExitCode(78)
        }
        var replayFixes: [Fix] = []
        if case .replay(let path, _, _) = configuration.gps {
            do { replayFixes = try ReplayInput.read(path: path, uere: GPXReader.defaultUERE).fixes } catch {
                writeStandardError("fencepost run: gps replay: \(error.message)\n")
                throw ExitCode(error.code)
            }
        }
        for path in [configuration.statePath, configuration.socketPath] { try? Directories.createParent(of: path) }
        let forceConsole = console
        let environment = AgentDaemon.Environment(
            makeGPIO: { gpio throws(GPIOError) -> any GPIOBackend in
                switch gpio.backend {
                case .console:
                    return ConsoleGPIOBackend(clock: { SystemClocks.boottimeNow().nanosecondsSinceBoot }, fileDescriptor: .standardOutput)
                case .libgpiod(let chip):
                    return try LibgpiodBackend(chip: chip)
                }
            },
            reloadConfiguration: { () throws(AgentConfigurationError) -> AgentConfiguration in
                var c = try Self.load(loaded.path ?? "")
                if forceConsole { c.gpio.backend = .console }
                return c
            },
            replayFixes: replayFixes, deviceZone: deviceZone, zoneLookup: { try? zones.rules(named: $0) }, log: log)
        let daemon: AgentDaemon
        do { daemon = try AgentDaemon(configuration: configuration, environment: environment) } catch {
            writeStandardError("fencepost run: \(error.message)\n")
            throw ExitCode(error.exitCode)
        }
        let code = daemon.run()
        if code != 0 { throw ExitCode(code) }
    }

    /// Reads and parses a configuration file; errors name the file and line.
    static func load(_ path: String) throws(AgentConfigurationError) -> AgentConfiguration {
        let bytes: [UInt8]
        do {
            let fd = try FileDescriptor.openForReading(path)
            defer { try? fd.close() }
            bytes = try fd.readToEnd()
        } catch {
            throw AgentConfigurationError(path: path, line: nil, message: "cannot read the file: \(error)")
        }
        return try AgentConfiguration.parse(String(decoding: bytes, as: UTF8.self), path: path, zoneFileReader: { p in
            let fd = try FileDescriptor.openForReading(p)
            defer { try? fd.close() }
            return try fd.readToEnd()
        })
    }
}
