// Starting the agent from a configuration file: what `fencepost run` and the lean `fencepost-agent`
// executable share. Reads the file (errors by line), picks the device zone, reads a replay log,
// opens GPIO (libgpiod or the console) and runs the daemon until it stops.
import CivilTime
import FencepostJSON
import FencepostLinux
import Position
import TrackFormats

/// Starts and runs the agent; each failure is one line on standard error and a sysexits.h status.
public enum AgentLauncher {
    /// Runs the agent with the configuration at `configPath` until SIGTERM/SIGINT or the end of a
    /// replay; returns the exit status.
    ///
    /// - Parameters:
    ///   - console: print pin changes on standard output whatever the file says.
    ///   - prefix: how error lines begin (`"fencepost run"`); they carry the `<3>` priority prefix.
    ///   - log: where the daemon's lines go; its level is set from the file's `[log] level`.
    /// - Returns: 0 stopped by a signal or the replay ended, 66 the replay log cannot be read, 65 it
    ///   is not a GPS log, 69 GPIO unavailable, 73 the state file or socket cannot be created, 74 the
    ///   state file cannot be written, 78 a configuration error (FILE:LINE: message).
    public static func run(configPath: String, console: Bool, prefix: String, log: DaemonLog = .standardError()) -> Int32 {
        func fail(_ code: Int32, _ message: String) -> Int32 {
            try? FileDescriptor.standardError.writeAll(DaemonLog.format(.error, message, program: prefix) + "\n")
            return code
        }
        var configuration: AgentConfiguration
        do { configuration = try load(configPath) } catch { return fail(78, "\(error)") }
        if console { configuration.gpio.backend = .console }
        log.level = configuration.logLevel
        let zones = SystemZones()
        let deviceZone: ZoneRules
        do { deviceZone = try Self.deviceZone(configuration.timeZone, zones: zones) } catch {
            return fail(78, "time zone: \(error)")
        }
        var replayFixes: [Fix] = []
        if case .replay(let path, _, _) = configuration.gps {
            let bytes: [UInt8]
            do { bytes = try InputFiles.readReplay(path) } catch {
                return fail(66, "gps replay: cannot read \(path): \(error)")
            }
            do throws(GPSLog.ParseError) { replayFixes = try GPSLog.parse(bytes, uere: configuration.gpsUERE).fixes } catch {
                return fail(65, "gps replay: \(path): \(error)")
            }
        }
        for path in [configuration.statePath, configuration.socketPath] { try? Directories.createParent(of: path) }
        // The reload closure captures the path only: the loaded configuration (every zone's
        // request) must not outlive the first apply.
        let loadedPath = configuration.path ?? ""
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
                var c = try load(loadedPath)
                if console { c.gpio.backend = .console }
                return c
            },
            replayFixes: replayFixes, deviceZone: deviceZone, zoneLookup: { try? zones.rules(named: $0) },
            resolveDeviceZone: { (name: String?) throws(ZoneError) -> ZoneRules in try Self.deviceZone(name, zones: zones) },
            readDeviceZone: {
                Result { () throws(ZoneError) in try zones.deviceZone(tzVariable: SystemZones.environmentTZ()) }
            },
            log: log)
        let daemon: AgentDaemon
        do { daemon = try AgentDaemon(configuration: configuration, environment: environment) } catch {
            return fail(error.exitCode, error.message)
        }
        configuration.requests = []   // the daemon's copy is the only one left; it drops it once applied
        return daemon.run()
    }

    /// The device zone for `time_zone` (an IANA name), or the system's when nil (TZ, else
    /// /etc/localtime): at start and at each SIGHUP.
    public static func deviceZone(_ name: String?, zones: SystemZones) throws(ZoneError) -> ZoneRules {
        if let name { return try zones.rules(named: name) }
        return try zones.deviceZone(tzVariable: SystemZones.environmentTZ())
    }

    /// Reads and parses a configuration file; errors name the file and line.
    public static func load(_ path: String, checkZones: Bool = false) throws(AgentConfigurationError) -> AgentConfiguration {
        try AgentConfiguration.parse(try text(path), path: path, zoneFileReader: InputFiles.readZones, checkZones: checkZones)
    }

    /// A configuration file's text: bounded, and strict UTF-8 (an error names the file and line).
    static func text(_ path: String) throws(AgentConfigurationError) -> String {
        let bytes: [UInt8]
        do { bytes = try InputFiles.read(path, maximumBytes: InputFiles.maximumConfigurationBytes) } catch {
            throw AgentConfigurationError(path: path, line: nil, message: "cannot read the file: \(error)")
        }
        let text: String
        do { text = try StrictUTF8.decode(bytes) } catch {
            throw AgentConfigurationError(path: path, line: error.line, message: error.description)
        }
        return text
    }
}
