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
              fencepost fleet push van-1 van-2 --zones schools.geojson --wait 1800
                  a zone set to two boards, following the roll-out until both applied it
              fencepost fleet gc --dry-run
                  the zone-set blobs no board uses any more (without --dry-run: removed)

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
        subcommands: [FleetPushCommand.self, FleetEventsCommand.self, FleetDevicesCommand.self, FleetCommandCommand.self, FleetGCCommand.self]
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
        let file = try config.map(FleetOperatorFile.read)
        let parsed: MQTTBroker
        if let broker {
            do { parsed = try MQTTBroker(parsing: broker) } catch { throw ClientFailure(ExitCode.validationFailure.rawValue, "\(error)") }
        } else if let fromFile = file?.broker {
            parsed = fromFile
        } else {
            throw ClientFailure(ExitCode.validationFailure.rawValue, "no broker: give --broker URL, or --config FILE with a [fleet] section that has broker")
        }
        let id = fixed ?? clientId ?? "fencepost-op-\(UInt32.random(in: 0 ... UInt32.max))"
        var options = MQTTOptions(broker: parsed, clientID: id)
        options.keepalive = 30
        options.connectTimeout = UInt64(timeout * 1e9)
        options.sessionExpiry = sessionExpiry
        options.cleanStart = sessionExpiry == 0
        let caFile = ca ?? file?.ca, certFile = cert ?? file?.certificate, keyFile = key ?? file?.key
        let user = username ?? file?.username, passwordPath = passwordFile ?? file?.passwordFile
        // The agent's rules ([fleet] keys named with their options).
        if let p = FleetSettings.credentialProblem(broker: parsed, ca: caFile, certificate: certFile, key: keyFile,
                                                   username: user, passwordFile: passwordPath) {
            let option = p.key == "password_file" ? "password-file" : p.key
            throw ClientFailure(ExitCode.validationFailure.rawValue, "--\(option) (or [fleet] \(p.key)) \(p.message)")
        }
        if let caFile {
            for path in [caFile, certFile].compactMap({ $0 }) { try FleetOperatorFile.requireReadable(path) }
            do throws(SecretFileError) {
                if let keyFile { try FilePermissions.requirePrivate(keyFile, what: "the key file") }
            } catch { throw FleetOperatorFile.failure(error) }
            options.tls = MQTTTLSFiles(ca: caFile, certificate: certFile, key: keyFile)
        }
        options.username = user
        if let passwordPath {
            do throws(SecretFileError) { options.password = try FilePermissions.readSecretFirstLine(passwordPath, what: "the password file") } catch {
                throw FleetOperatorFile.failure(error)
            }
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
enum FleetOperatorFile {
    /// Reads `path`'s [fleet] section with the agent's reader (``FleetSettings``): the same keys,
    /// types and rules; other sections are not read, so a board's own config works too. Relative
    /// paths are taken from the file's folder.
    static func read(_ path: String) throws(ClientFailure) -> FleetSettings {
        let bytes = try ClientInput.read(path)
        let text: String
        do { text = try StrictUTF8.decode(bytes) } catch {
            throw ClientFailure(ClientFailure.dataError, "\(path):\(error.line): \(error)")
        }
        let settings: FleetSettings?
        do { settings = try FleetSettings.read(configFile: path, text: text) } catch {
            throw ClientFailure(ClientFailure.dataError, "\(path): \(error)")
        }
        guard let settings else { throw ClientFailure(ClientFailure.dataError, "\(path): no [fleet] section") }
        return settings
    }

    static func requireReadable(_ path: String) throws(ClientFailure) {
        if access(path, R_OK) != 0 {
            throw ClientFailure(ClientFailure.noInput, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// A secret's failure as the CLI's exit code: 77 for a file others may read, 66 when unreadable.
    static func failure(_ error: SecretFileError) -> ClientFailure {
        ClientFailure(error.isNotPrivate ? ClientFailure.noPermission : ClientFailure.noInput, error.description)
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

    /// The topic `leaf` (`.events`, `.status` …) of one device, or of all (`+`).
    static func filter(_ device: FleetTopics?, _ leaf: FleetTopics.Leaf) -> String {
        device?[leaf] ?? FleetTopics.everyDevice(leaf)
    }

    /// The device of `topic` when it is `leaf` of some device.
    static func device(of topic: String, _ leaf: FleetTopics.Leaf) -> String? {
        FleetTopics.device(of: topic, leaf)?.text
    }
}

/// The wall clock as the fleet's payloads write it.
enum OperatorClock {
    /// Now, UTC, milliseconds since the epoch.
    static func nowMilliseconds() -> Int64 {
        let now = SystemClocks.realtimeNow()
        return now.instant.secondsSinceEpoch * 1000 + Int64(now.nanoseconds) / 1_000_000
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
