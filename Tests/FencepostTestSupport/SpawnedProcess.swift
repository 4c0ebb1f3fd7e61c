import CFencepostLinux
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A helper program of a test (mosquitto, the fault proxy, gpsfake, mosquitto_sub), spawned with
/// `posix_spawn`, an empty signal mask and default dispositions, its standard output and error in
/// one file (or standard error in a second), no other descriptor of the test process.
///
/// Foundation's `Process` started from a test thread passes on that thread's mask, in which SIGTERM
/// is blocked: a broker started that way never sees the SIGTERM that stops it (and never saves its
/// persistence file). Stopped with SIGTERM, then SIGKILL after a deadline; killed at deinit.
public final class SpawnedProcess {
    public let pid: pid_t
    public let outputPath: String
    /// Where standard error goes when not to ``outputPath``.
    public let errorPath: String?
    public let arguments: [String]
    public private(set) var exitStatus: Int32?

    public init(_ arguments: [String], output: String, errors: String? = nil, environment: [String: String] = [:]) throws {
        self.arguments = arguments
        outputPath = output
        errorPath = errors
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2] { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        if let errors {
            posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        cfl_spawn_close_from(&actions, 3)

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var child: pid_t = 0
        let r = posix_spawnp(&child, arguments[0], &actions, &attr, argv, envp)
        guard r == 0 else { throw SpawnError(message: "cannot start \(arguments[0]): \(String(cString: strerror(r)))") }
        pid = child
    }

    deinit { if !detached { _ = stop(signal: SIGKILL, timeout: 5) } }

    private var detached = false
    /// The caller owns the pid from now on (waits for it, stops it); deinit leaves it alone.
    public func detach() { detached = true }

    public var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            exitStatus = status
            return false
        }
        return true
    }

    /// What the program wrote so far (to ``outputPath``).
    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    public func signal(_ s: Int32) { if isRunning { kill(pid, s) } }

    /// Sends `signal`, waits at most `timeout` seconds, then SIGKILL; the wait status.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 10) -> Int32? {
        guard isRunning else { return exitStatus }
        kill(pid, signal)
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if !isRunning { return exitStatus }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        exitStatus = status
        return status
    }

    /// Waits until `condition` holds (every 20 ms); false after `timeout` seconds.
    @discardableResult
    public static func wait(timeout: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    /// ``wait(timeout:_:)`` for an `async` test: it sleeps by suspending, so that a test that waits
    /// for minutes does not hold one of the test pool's threads (as many as the machine has cores)
    /// all that time.
    public static func suspending(timeout: Double, _ condition: () -> Bool) async -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if condition() { return true }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        return condition()
    }
}

public struct SpawnError: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// Small TCP and Unix socket helpers for the fixtures (real sockets on the loopback).
public enum TestSockets {
    /// A listening TCP socket on 127.0.0.1 with a kernel-chosen port.
    public static func listen() throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 4) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return (fd, UInt16(bigEndian: addr.sin_port))
    }

    /// Writes all of `text`.
    public static func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Waits up to `milliseconds` for `fd` to become readable.
    public static func waitReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, milliseconds) == 1
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (bound to 0, then closed: a small race,
    /// which the fixtures that use it retry).
    public static func freePort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return UInt16(bigEndian: addr.sin_port)
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func accepts(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = port.bigEndian
        return withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
    }

    /// A connected Unix stream socket to `path` (close-on-exec), or -1 (refused, out of
    /// descriptors, or a path longer than `sun_path` holds).
    public static func connectUnix(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { close(fd); return -1 }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        let r = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        if r != 0 { close(fd); return -1 }
        return fd
    }

    /// Whether something accepts connections on the Unix socket `path`.
    public static func accepts(unix path: String) -> Bool {
        let fd = connectUnix(path)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }
}

