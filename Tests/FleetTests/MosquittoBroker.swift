import FencepostTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real mosquitto (Debian 12: 2.0.11) for one test, with a configuration written for it: its
/// own folder, its own pid, stopped with SIGTERM to that pid (never by name).
///
///     let broker = try MosquittoBroker.start()
///     defer { broker.stop() }
///     options = MQTTOptions(broker: .unix(path: broker.socketPath), clientID: "van-1")
///
/// Listeners (mosquitto's `per_listener_settings true`: each has its own authentication):
/// - always a Unix socket (`listener 0 PATH`: no port to race for), anonymous, no ACL: the test's
///   own side;
/// - `plainTCP`: 127.0.0.1, anonymous, no ACL (the fault proxy's target);
/// - `tls`: 127.0.0.1, TLS with the fleet CA, `require_certificate`, `use_identity_as_username`
///   and `use_username_as_clientid` (a device's certificate speaks only for its CN), the fleet ACL;
/// - `passwords`: 127.0.0.1, plain, `password_file` made with `mosquitto_passwd`, the fleet ACL.
///
/// Run as root the broker would drop to the `mosquitto` user and fail to open its files in the
/// test's folder: the configuration says `user root`. TCP ports are bound to 0, closed and handed
/// in; a start that loses that race ("Address already in use") is retried with new ports.
final class MosquittoBroker {
    struct Options {
        var plainTCP = false
        var tls: FleetPKI? = nil
        var passwords: [String: String] = [:]
        /// `persistence true` in the folder: retained messages and sessions survive a restart
        /// (saved at a clean stop and every `autosaveInterval` seconds).
        var persistence = false
        var autosaveInterval = 1
        /// More configuration lines (global).
        var extra: [String] = []
        /// `log_type all`: every packet, and every publish the ACL denies ("Denied PUBLISH from …").
        var logAll = false
    }

    static let binary = "/usr/sbin/mosquitto"
    static var available: Bool { FileManager.default.isExecutableFile(atPath: binary) }
    static var required: Bool { TestInputs.required }
    /// Why a test that needs the broker skips (or fails, when required).
    static let missing = "mosquitto is not installed (board/install-deps installs mosquitto and mosquitto-clients)"

    /// A broker on its Unix socket only, with `extraConfiguration` (global lines) added.
    static func start(extraConfiguration: [String] = []) throws -> MosquittoBroker {
        var options = Options()
        options.extra = extraConfiguration
        return try MosquittoBroker(options)
    }

    /// The broker's ACL: each device reads and writes only its own subtree (docs/fleet.md shows the
    /// same lines); the operator user reads and writes every device's.
    static let acl = """
        pattern read fencepost/v1/dev/%u/desired
        pattern read fencepost/v1/dev/%u/cmd
        pattern readwrite fencepost/v1/dev/%u/status
        pattern write fencepost/v1/dev/%u/reported
        pattern write fencepost/v1/dev/%u/health
        pattern write fencepost/v1/dev/%u/evt
        pattern write fencepost/v1/dev/%u/cmd/res
        pattern read fencepost/v1/fleet/+/blob/#
        # Home Assistant (boards with ha = true): discovery, position, events, buttons, HA's status
        pattern write homeassistant/device/fencepost/%u/config
        pattern write fencepost/v1/dev/%u/ha/pos
        pattern write fencepost/v1/dev/%u/ha/event
        pattern read fencepost/v1/dev/%u/ha/cmd
        pattern read homeassistant/status

        user operator
        topic readwrite fencepost/v1/#

        # Home Assistant's own user: its discovery and status, the boards' HA topics and availability
        user homeassistant
        topic readwrite homeassistant/#
        topic read fencepost/v1/dev/+/status
        topic read fencepost/v1/dev/+/health
        topic read fencepost/v1/dev/+/ha/pos
        topic read fencepost/v1/dev/+/ha/event
        topic write fencepost/v1/dev/+/ha/cmd

        """

    let folder: URL
    var directory: URL { folder }
    let options: Options
    var socketPath: String { folder.appendingPathComponent("broker.sock").path }
    /// `unix:PATH`, as the agent's `[fleet] broker` key takes it.
    var address: String { "unix:\(socketPath)" }
    /// `mqtt://127.0.0.1:PORT` of the plain TCP listener (`plainTCP`).
    var plainAddress: String? { plainPort.map { "mqtt://127.0.0.1:\($0)" } }
    /// `mqtts://127.0.0.1:PORT` of the TLS listener (`tls`).
    var tlsAddress: String? { tlsPort.map { "mqtts://127.0.0.1:\($0)" } }
    var logPath: String { folder.appendingPathComponent("mosquitto.log").path }
    var configPath: String { folder.appendingPathComponent("mosquitto.conf").path }
    private(set) var plainPort: UInt16?
    private(set) var tlsPort: UInt16?
    private(set) var passwordPort: UInt16?
    private(set) var process: SpawnedProcess?
    private(set) var starts = 0

    /// Writes the configuration and starts the broker; returns when every listener accepts.
    init(_ options: Options = Options()) throws {
        self.options = options
        // Short: sun_path holds 107 bytes.
        folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("fp-mq-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(Self.acl.utf8).write(to: folder.appendingPathComponent("acl"))
        if !options.passwords.isEmpty { try writePasswords() }
        var lastError = ""
        for _ in 0..<5 {
            plainPort = options.plainTCP ? TestSockets.freePort() : nil
            tlsPort = options.tls != nil ? TestSockets.freePort() : nil
            passwordPort = options.passwords.isEmpty ? nil : TestSockets.freePort()
            try writeConfig()
            do {
                try launch()
                return
            } catch let e as SpawnError {
                lastError = e.message
                guard lastError.contains("Address already in use") else { throw e }
            }
        }
        throw SpawnError(message: lastError)
    }

    deinit {
        resume()
        process?.stop(timeout: 5)
        try? FileManager.default.removeItem(at: folder)
    }

    private func writePasswords() throws {
        let file = folder.appendingPathComponent("passwords").path
        var first = true
        for (user, password) in options.passwords.sorted(by: { $0.key < $1.key }) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
            p.arguments = ["-b"] + (first ? ["-c"] : []) + [file, user, password]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else { throw SpawnError(message: "mosquitto_passwd failed for \(user)") }
            first = false
        }
    }

    private func writeConfig() throws {
        let acl = folder.appendingPathComponent("acl").path
        var lines = [
            "user root",
            "log_dest file \(logPath)",
        ] + (options.logAll ? ["log_type all"] : ["log_type error", "log_type warning", "log_type notice", "log_type information"]) + [
            "connection_messages true",
            "per_listener_settings true",
            // A consumer that falls behind a 10,000-event backlog must not lose messages at the
            // broker (mosquitto drops beyond 1,000 queued by default, silently).
            "max_queued_messages 1000000",
        ]
        if options.persistence {
            lines += ["persistence true", "persistence_location \(folder.path)/",
                      "autosave_interval \(options.autosaveInterval)"]
        }
        lines += options.extra
        lines += ["", "listener 0 \(socketPath)", "allow_anonymous true"]
        if let port = plainPort {
            lines += ["", "listener \(port) 127.0.0.1", "allow_anonymous true"]
        }
        if let pki = options.tls, let port = tlsPort {
            lines += ["", "listener \(port) 127.0.0.1", "allow_anonymous false", "acl_file \(acl)",
                      "cafile \(pki.caFile)", "certfile \(pki.serverCert)", "keyfile \(pki.serverKey)",
                      "tls_version tlsv1.2",
                      "require_certificate true", "use_identity_as_username true", "use_username_as_clientid true"]
        }
        if let port = passwordPort {
            lines += ["", "listener \(port) 127.0.0.1", "allow_anonymous false", "acl_file \(acl)",
                      "password_file \(folder.appendingPathComponent("passwords").path)",
                      "use_username_as_clientid true"]
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: configPath))
    }

    /// Starts the broker (again, after ``stop()`` or ``kill()``: same folder, ports and files).
    func launch() throws {
        precondition(process?.isRunning != true, "the broker is running")
        let p = try SpawnedProcess([Self.binary, "-c", configPath], output: folder.appendingPathComponent("stdout").path)
        process = p
        starts += 1
        let ready = SpawnedProcess.wait(timeout: 10) {
            guard p.isRunning else { return true }
            return TestSockets.accepts(unix: socketPath)
                && [plainPort, tlsPort, passwordPort].allSatisfy { $0.map(TestSockets.accepts(port:)) ?? true }
        }
        guard ready, p.isRunning else {
            p.stop(timeout: 2)
            throw SpawnError(message: "mosquitto did not start: \(log.suffix(2000)) \(p.output.suffix(1000))")
        }
    }

    /// SIGTERM: a clean stop (the persistence file is written).
    func stop() { resume(); process?.stop(signal: SIGTERM, timeout: 10) }

    /// SIGKILL: a crash (what persistence saved last is all that survives).
    func kill() { resume(); process?.stop(signal: SIGKILL, timeout: 10) }

    /// SIGSTOP/SIGCONT: a broker that hangs with its sockets open.
    func pause() { process?.signal(SIGSTOP) }
    func resume() { process?.signal(SIGCONT) }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// `mosquitto_pub` on the Unix socket (the anonymous test side); the exit status.
    @discardableResult
    func publish(_ topic: String, _ payload: String, retain: Bool = false, qos: Int = 1) throws -> Int32 {
        try FleetTools.run(["/usr/bin/mosquitto_pub", "--unix", socketPath, "-V", "5", "-q", String(qos), "-t", topic,
                            "-m", payload] + (retain ? ["-r"] : [])).status
    }
}

extension MosquittoBroker {
    enum BrokerError: Error, CustomStringConvertible {
        case exited(String)
        var description: String { if case .exited(let s) = self { return s }; return "" }
    }

    /// posix_spawn with an empty signal mask (``SpawnedProcess``'s way), for a caller that
    /// keeps the pid itself.
    static func spawn(_ arguments: [String], output: String, environment: [String: String]? = nil) throws -> pid_t {
        let p = try SpawnedProcess(arguments, output: output, environment: environment ?? [:])
        p.detach()
        return p.pid
    }

    static func accepts(_ path: String) -> Bool { TestSockets.accepts(unix: path) }
    static func acceptsTCP(_ port: UInt16) -> Bool { TestSockets.accepts(port: port) }
}

/// Programs from Debian that the fleet tests run.
enum FleetTools {
    /// Whether `path` is there; if not, the test is skipped or fails (``RequiredTool``).
    static func find(_ path: String, package: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        RequiredTool.find(path, package: package, sourceLocation: sourceLocation) != nil
    }

    /// mosquitto, its clients, openssl and python3: all the fleet's fault and security tests need.
    static func all(sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        find(MosquittoBroker.binary, package: "mosquitto", sourceLocation: sourceLocation)
            && find("/usr/bin/mosquitto_pub", package: "mosquitto-clients", sourceLocation: sourceLocation)
            && find(FleetPKI.opensslPath, package: "openssl", sourceLocation: sourceLocation)
            && FaultProxy.python != nil
    }

    /// Runs a program to its end (at most `timeLimit` seconds) with both outputs collected.
    static func run(_ arguments: [String], timeLimit: Double = 60) throws -> (status: Int32, output: String) {
        let file = "/tmp/fp-run-\(UUID().uuidString.prefix(8)).out"
        defer { unlink(file) }
        let p = try SpawnedProcess(arguments, output: file)
        if !SpawnedProcess.wait(timeout: timeLimit, { !p.isRunning }) { p.stop(signal: SIGKILL) }
        let status = p.exitStatus ?? -1
        return ((status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f), p.output)
    }
}
