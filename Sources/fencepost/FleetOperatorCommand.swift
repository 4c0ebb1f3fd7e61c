// `fencepost fleet …`: the operator's side of the fleet link, talking to the broker (never to a
// board directly). The shapes are in docs/fleet.md; everything here can be done with
// mosquitto_pub and mosquitto_sub as well.
import ArgumentParser
import CivilTime
import ConfigFile
import FencepostAgent
import FencepostJSON
import FencepostLinux
import Fleet
#if canImport(Glibc)
import Glibc
#endif

struct FleetOperatorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Manage and hear boards through the fleet's MQTT broker.",
        discussion: """
            Each board with a [fleet] section keeps a link to an MQTT broker. Its topics are under \
            fencepost/v1/dev/DEVICE/: status, desired, reported, health, evt, cmd and cmd/res \
            (docs/fleet.md has every payload, the broker's ACL and TLS setup, and the \
            mosquitto_pub/mosquitto_sub commands that do what these do).

              fencepost fleet push van-0042 fencepost.toml
                  its requests and categories as the board's desired state (the next version)
              fencepost fleet events --follow
                  every board's events, each once, in order
              fencepost fleet devices
                  who is online, what is applied, health
              fencepost fleet command van-0042 status
                  ask a board, and wait for its answer

            The broker and the operator's credentials come from options, or from the [fleet] \
            section of --config FILE (broker, ca, cert, key, username, password_file), options \
            winning:

              fencepost fleet devices --broker mqtts://broker.example.net:8883 \\
                  --ca ca.crt --cert operator.crt --key operator.key

            A board acts on what the broker holds for it when it next connects: a push to a \
            board that is off takes effect when it comes back (the desired document is \
            retained); a command expires (--expires) and is refused after that, never acted \
            on late.
            """,
        subcommands: [FleetPushCommand.self, FleetEventsCommand.self, FleetDevicesCommand.self, FleetCommandCommand.self]
    )
}

/// How the operator reaches the broker.
struct FleetConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The broker: mqtts://host[:port] (TLS, 8883), mqtt://host[:port] (1883) or unix:/path.", valueName: "url"))
    var broker: String?

    @Option(help: ArgumentHelp("The CA file that signed the broker's certificate (mqtts).", valueName: "file"))
    var ca: String?

    @Option(help: ArgumentHelp("The operator's client certificate (mqtts, with --key).", valueName: "file"))
    var cert: String?

    @Option(help: ArgumentHelp("The key of --cert; must not be readable by others.", valueName: "file"))
    var key: String?

    @Option(help: ArgumentHelp("A user name (with --password-file) for a broker with passwords.", valueName: "name"))
    var username: String?

    @Option(help: ArgumentHelp("A file whose first line is the password of --username.", valueName: "file"))
    var passwordFile: String?

    @Option(help: ArgumentHelp("Read broker, ca, cert, key, username and password_file from this file's [fleet] section; options win.", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("The MQTT client id (default: fencepost-op- and a random number). A broker with use_username_as_clientid replaces it.", valueName: "id"))
    var clientId: String?

    @Option(help: ArgumentHelp("Seconds to wait for the broker to accept the connection and each answer.", valueName: "seconds"))
    var timeout: Double = 10

    func validate() throws {
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be between 0 and 3600 seconds") }
    }

    /// The options the connection uses, the [fleet] section of --config filling what the
    /// command line leaves out.
    func mqttOptions(clientID fixed: String? = nil, sessionExpiry: UInt32 = 0) throws(ClientFailure) -> MQTTOptions {
        var file = FleetOperatorFile()
        if let config { file = try FleetOperatorFile.read(config) }
        guard let brokerText = broker ?? file.broker else {
            throw ClientFailure(ExitCode.validationFailure.rawValue, "no broker: give --broker URL, or --config FILE with a [fleet] section that has broker")
        }
        let parsed: MQTTBroker
        do { parsed = try MQTTBroker(parsing: brokerText) } catch { throw ClientFailure(ExitCode.validationFailure.rawValue, "\(error)") }
        let id = fixed ?? clientId ?? "fencepost-op-\(UInt32.random(in: 0 ... UInt32.max))"
        var options = MQTTOptions(broker: parsed, clientID: id)
        options.keepalive = 30
        options.connectTimeout = UInt64(timeout * 1e9)
        options.sessionExpiry = sessionExpiry
        options.cleanStart = sessionExpiry == 0
        let caFile = ca ?? file.ca, certFile = cert ?? file.cert, keyFile = key ?? file.key
        if parsed.usesTLS {
            guard let caFile else {
                throw ClientFailure(ExitCode.validationFailure.rawValue, "\(parsed) is TLS: give --ca FILE (the CA that signed the broker's certificate)")
            }
            guard (certFile == nil) == (keyFile == nil) else {
                throw ClientFailure(ExitCode.validationFailure.rawValue, "--cert and --key go together")
            }
            for path in [caFile, certFile, keyFile].compactMap({ $0 }) { try FleetOperatorFile.requireReadable(path) }
            if let keyFile { try FleetOperatorFile.requirePrivate(keyFile, what: "the key file") }
            options.tls = MQTTTLSFiles(ca: caFile, certificate: certFile, key: keyFile)
        } else if caFile != nil || certFile != nil || keyFile != nil {
            throw ClientFailure(ExitCode.validationFailure.rawValue, "--ca, --cert and --key need an mqtts:// broker (\(parsed) is not TLS)")
        }
        if let user = username ?? file.username {
            guard let pf = passwordFile ?? file.passwordFile else {
                throw ClientFailure(ExitCode.validationFailure.rawValue, "--username needs --password-file FILE (the password is not taken on the command line, where ps shows it)")
            }
            try FleetOperatorFile.requirePrivate(pf, what: "the password file")
            options.username = user
            options.password = try FleetOperatorFile.firstLine(pf)
        } else if passwordFile ?? file.passwordFile != nil {
            throw ClientFailure(ExitCode.validationFailure.rawValue, "--password-file needs --username")
        }
        return options
    }

    var timeoutNanoseconds: UInt64 { UInt64(timeout * 1e9) }

    /// Connects, or fails with what the broker or the library said.
    func connect(clientID: String? = nil, sessionExpiry: UInt32 = 0) throws(ClientFailure) -> MQTTBlockingSession {
        let options = try mqttOptions(clientID: clientID, sessionExpiry: sessionExpiry)
        let session: MQTTBlockingSession
        do { session = try MQTTBlockingSession(options) } catch { throw ClientFailure(ClientFailure.unavailable, "\(error)") }
        // A TLS failure's reason in OpenSSL's words comes with the error (MQTTClient).
        do { try session.connect(timeout: timeoutNanoseconds) } catch {
            throw ClientFailure(ClientFailure.unavailable, "cannot connect to \(options.broker): \(error)")
        }
        return session
    }
}

/// The [fleet] section of an operator's file: where the broker is and how to log in.
struct FleetOperatorFile {
    var broker: String?
    var ca: String?
    var cert: String?
    var key: String?
    var username: String?
    var passwordFile: String?

    static let keys = ["broker", "ca", "cert", "key", "username", "password_file"]

    /// Reads `path`'s [fleet] section (a TOML file; other sections are ignored, so a board's own
    /// config works too). Relative paths are taken from the file's folder.
    static func read(_ path: String) throws(ClientFailure) -> FleetOperatorFile {
        let bytes = try ClientInput.read(path)
        let text: String
        do { text = try StrictUTF8.decode(bytes) } catch {
            throw ClientFailure(ClientFailure.dataError, "\(path):\(error.line): \(error)")
        }
        let document: TOMLTable
        do { document = try TOML.parse(text) } catch {
            throw ClientFailure(ClientFailure.dataError, "\(path):\(error.line): \(error.message)")
        }
        guard let section = document["fleet"] else {
            throw ClientFailure(ClientFailure.dataError, "\(path): no [fleet] section")
        }
        guard let table = section.table else {
            throw ClientFailure(ClientFailure.dataError, "\(path):\(section.line): fleet must be a table ([fleet])")
        }
        var out = FleetOperatorFile()
        let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        for entry in table.entries {
            guard let s = entry.value.string else {
                if keys.contains(entry.key) {
                    throw ClientFailure(ClientFailure.dataError, "\(path):\(entry.value.line): fleet.\(entry.key) must be a string")
                }
                continue
            }
            let relative = s.hasPrefix("/") || entry.key == "broker" || entry.key == "username" ? s : "\(folder)/\(s)"
            switch entry.key {
            case "broker": out.broker = s
            case "ca": out.ca = relative
            case "cert": out.cert = relative
            case "key": out.key = relative
            case "username": out.username = s
            case "password_file": out.passwordFile = relative
            default: break
            }
        }
        return out
    }

    static func requireReadable(_ path: String) throws(ClientFailure) {
        if access(path, R_OK) != 0 {
            throw ClientFailure(ClientFailure.noInput, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Refuses a secret (key, password) that others may read: the agent refuses the same.
    static func requirePrivate(_ path: String, what: String) throws(ClientFailure) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw ClientFailure(ClientFailure.noInput, "cannot read \(what) \(path): \(String(cString: strerror(errno)))")
        }
        if st.st_mode & 0o077 != 0 {
            throw ClientFailure(ClientFailure.noPermission, "\(what) \(path) can be read by others (mode \(String(st.st_mode & 0o777, radix: 8))): chmod 600 \(path)")
        }
    }

    static func firstLine(_ path: String) throws(ClientFailure) -> String {
        let bytes = try ClientInput.read(path)
        let line = bytes.prefix { $0 != 0x0A && $0 != 0x0D }
        return String(decoding: line, as: UTF8.self)
    }
}

/// Topics as the operator uses them: one device's (``FleetTopics``, the device id checked by
/// ``DeviceID``), or every device's through a `+` level.
enum OperatorTopics {
    /// The topics of `device`, or the usage error naming what is wrong with the id.
    static func of(_ device: String) throws(ClientFailure) -> FleetTopics {
        do { return FleetTopics(device: try DeviceID(device)) } catch {
            throw ClientFailure(ExitCode.validationFailure.rawValue, PrintableText.escaped(error.message))
        }
    }

    /// The topic `leaf` picks (`\.events`, `\.status` …) of one device, or of all (`+`).
    static func filter(_ device: FleetTopics?, _ leaf: (FleetTopics) -> String) -> String {
        guard let device else {
            let sample = FleetTopics(device: try! DeviceID("x"))
            return FleetTopics.prefix + "+" + leaf(sample).dropFirst(sample.root.count)
        }
        return leaf(device)
    }

    /// The device of `topic` when it is `leaf` of some device.
    static func device(of topic: String, _ leaf: (FleetTopics) -> String) -> String? {
        let sample = FleetTopics(device: try! DeviceID("x"))
        let suffix = leaf(sample).dropFirst(sample.root.count)
        guard topic.hasPrefix(FleetTopics.prefix), topic.hasSuffix(suffix) else { return nil }
        let name = String(topic.dropFirst(FleetTopics.prefix.count).dropLast(suffix.count))
        return (try? DeviceID(name)) != nil ? name : nil
    }
}

/// The wall clock as the fleet's payloads write it.
enum OperatorClock {
    /// Now, UTC, milliseconds since the epoch.
    static func nowMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    static func text(milliseconds ms: Int64) -> String {
        var out: [UInt8] = []
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        InstantText.appendUTC(WallInstant(secondsSinceEpoch: seconds), to: &out)
        let frac = Int(ms - seconds * 1000)
        out.removeLast()   // the Z
        out.append(UInt8(ascii: "."))
        out.append(UInt8(ascii: "0") + UInt8(frac / 100))
        out.append(UInt8(ascii: "0") + UInt8(frac / 10 % 10))
        out.append(UInt8(ascii: "0") + UInt8(frac % 10))
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Monotonic nanoseconds.
    static func monotonic() -> UInt64 { SystemClocks.boottimeNow().nanosecondsSinceBoot }
}

extension ClientFailure {
    /// EX_TEMPFAIL: no answer in time (the board may be off); trying later may work.
    static let tryLater: Int32 = 75
    /// EX_NOPERM: a secret file others can read.
    static let noPermission: Int32 = 77
}
