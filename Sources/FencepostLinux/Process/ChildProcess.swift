// Starting and reaping child processes (the delivery hook): posix_spawn with an argv (no shell),
// a chosen environment, an empty signal mask and default signal dispositions — the daemon blocks
// TERM/INT/HUP for its signalfd, and a child must not inherit that (it would ignore `kill`). Every
// descriptor above standard error is closed in the child: one left open by a library without
// O_CLOEXEC (or opened by another thread between its creation and fcntl) would otherwise live on
// in a long-running child, and whoever waits for that descriptor's end-of-file (a pipe's reader,
// Foundation's Process watching its socket pair) would wait for the child instead.
#if canImport(Glibc)
import Glibc
#endif
import CFencepostLinux

/// A child process started by ``ChildProcess/spawn(_:environment:)``.
public struct ChildProcess: Hashable, Sendable {
    public let pid: pid_t

    /// How a child ended.
    public enum Termination: Hashable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)
        public var description: String {
            switch self {
            case .exited(let code): "exited with status \(code)"
            case .signalled(let s): "killed by signal \(s)"
            }
        }
    }

    /// Starts `arguments[0]` (an absolute path, or a name looked up in `PATH`) with `arguments`
    /// as its argv and exactly `environment` as its environment. Standard input is /dev/null;
    /// standard output and error are the daemon's; no other descriptor is inherited.
    /// The corresponding C functions are `posix_spawnp` and `posix_spawn_file_actions_addclosefrom_np`.
    public static func spawn(_ arguments: [String], environment: [String]) throws(Errno) -> ChildProcess {
        precondition(!arguments.isEmpty, "spawn needs a program")
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        cfl_spawn_close_from(&actions, 3)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) }; for p in envp { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard rc == 0 else { throw Errno(rawValue: rc) }
        return ChildProcess(pid: pid)
    }

    /// The child's end, if it has ended (without blocking); nil while it runs.
    /// The corresponding C function is `waitpid` with `WNOHANG`.
    public func reap() throws(Errno) -> Termination? {
        var status: Int32 = 0
        let r = try retryOnInterrupt { () -> Result<pid_t, Errno> in
            let r = waitpid(pid, &status, WNOHANG)
            return r < 0 ? .failure(Errno.current) : .success(r)
        }.get()
        guard r == pid else { return nil }
        if status & 0x7F == 0 { return .exited((status >> 8) & 0xFF) }
        return .signalled(status & 0x7F)
    }

    /// Sends `signal` to the child. The corresponding C function is `kill`.
    public func send(_ signal: Int32) throws(Errno) {
        if kill(pid, signal) != 0 { throw Errno.current }
    }
}
