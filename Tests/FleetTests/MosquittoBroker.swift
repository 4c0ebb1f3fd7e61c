import CFencepostLinux
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real mosquitto (Debian 12: 2.0.11) for one test, in a directory of its own: by default on a
/// Unix socket (`listener 0 PATH`: no port races), `allow_anonymous true`, `user root` (as root
/// it would otherwise drop to the `mosquitto` user and fail to open its files), log to stdout
/// (kept in `broker.log`), its own pid, stopped with SIGTERM to that pid.
///
/// Extend it with ``extraConfiguration`` (listeners, TLS, ACL, persistence) — the first listener
/// line is the Unix socket unless ``listeners`` replaces it.
///
///     let broker = try MosquittoBroker.start()
///     defer { broker.stop() }
///     options = MQTTOptions(broker: .unix(path: broker.socketPath), clientID: "van-1")
final class MosquittoBroker {
    static let executable = "/usr/sbin/mosquitto"
    static var available: Bool { FileManager.default.isExecutableFile(atPath: executable) }
    static var required: Bool { ProcessInfo.processInfo.environment["FENCEPOST_REQUIRE_SHARED_TESTDATA"] != nil }
    /// Why a test that needs the broker skips (or fails, when required).
    static let missing = "mosquitto is not installed (board/install-deps installs mosquitto and mosquitto-clients)"

    let directory: URL
    let socketPath: String
    /// Configuration lines after the listener (TLS, ACL, persistence …).
    let extraConfiguration: [String]
    let listeners: [String]
    private(set) var pid: pid_t = 0
    private var running = false

    var logPath: String { directory.appendingPathComponent("broker.log").path }
    var configurationPath: String { directory.appendingPathComponent("mosquitto.conf").path }
    /// `unix:PATH`, as the agent's `[fleet] broker` key takes it.
    var address: String { "unix:\(socketPath)" }

    /// Starts a broker and waits until its socket accepts.
    static func start(extraConfiguration: [String] = [], listeners: [String]? = nil, directory: URL? = nil) throws -> MosquittoBroker {
        let broker = try MosquittoBroker(extraConfiguration: extraConfiguration, listeners: listeners, directory: directory)
        try broker.launch()
        return broker
    }

    private init(extraConfiguration: [String], listeners: [String]?, directory: URL?) throws {
        let dir = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-mosquitto-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        self.directory = dir
        socketPath = dir.appendingPathComponent("broker.sock").path
        self.extraConfiguration = extraConfiguration
        self.listeners = listeners ?? ["listener 0 \(dir.appendingPathComponent("broker.sock").path)"]
        var lines = self.listeners
        lines += ["allow_anonymous true", "user root", "log_dest stdout", "log_type all", "connection_messages true"]
        lines += extraConfiguration
        try (lines.joined(separator: "\n") + "\n").write(toFile: configurationPath, atomically: true, encoding: .utf8)
    }

    deinit { stop() }

    /// Starts (or restarts after ``stop()``/``kill()``) the broker with the same configuration.
    func launch() throws {
        precondition(!running, "the broker runs already")
        try? FileManager.default.removeItem(atPath: socketPath)
        pid = try Self.spawn([Self.executable, "-c", configurationPath], output: logPath)
        running = true
        // Ready when the socket accepts (the first listener is the Unix socket by default).
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if listeners.first?.hasPrefix("listener 0 ") == true {
                if Self.accepts(socketPath) { return }
            } else if let port = listeners.first.flatMap({ $0.split(separator: " ").dropFirst().first }).flatMap({ UInt16($0) }), Self.acceptsTCP(port) {
                return
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                running = false
                throw BrokerError.exited("mosquitto exited at start (status \(status)); its log:\n\(log)")
            }
            usleep(20_000)
        }
        throw BrokerError.exited("mosquitto did not accept on its listener within 10 s; its log:\n\(log)")
    }

    /// SIGTERM and wait (mosquitto saves its persistence file on SIGTERM).
    func stop() { signalAndWait(SIGTERM) }

    /// SIGKILL and wait: a crash (no persistence written since the last autosave).
    func kill() { signalAndWait(SIGKILL) }

    /// SIGSTOP / SIGCONT: a hung broker (no FIN, no answer).
    func pause() { if running { Glibc.kill(pid, SIGSTOP) } }
    func resume() { if running { Glibc.kill(pid, SIGCONT) } }

    private func signalAndWait(_ signal: Int32) {
        guard running else { return }
        running = false
        Glibc.kill(pid, SIGCONT)
        Glibc.kill(pid, signal)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "(no log)" }

    enum BrokerError: Error, CustomStringConvertible {
        case exited(String)
        var description: String { if case .exited(let s) = self { return s }; return "" }
    }

    /// Whether a Unix socket at `path` accepts a connection now.
    static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        return withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
    }

    /// Whether 127.0.0.1:`port` accepts a connection now.
    static func acceptsTCP(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// posix_spawn with an empty signal mask and default dispositions (a test thread's blocked
    /// SIGTERM must not be inherited), stdout and stderr to `output`, no other descriptor.
    static func spawn(_ arguments: [String], output: String, environment: [String: String]? = nil) throws -> pid_t {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT] { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        cfl_spawn_close_from(&actions, 3)
        let env = environment ?? ProcessInfo.processInfo.environment
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var pid: pid_t = 0
        let r = posix_spawn(&pid, arguments[0], &actions, &attr, argv, envp)
        guard r == 0 else { throw POSIXError(POSIXErrorCode(rawValue: r) ?? .EIO) }
        return pid
    }
}
