// StateFileLock: one agent per state file.
//
// Two agents on one state file would each hold their own engine in memory and commit into the
// same database: requests added through one are invisible to the other, and each delivers what
// the other already did. The agent therefore holds a write lock on `<state>.lock` for its whole
// life; a second agent finds it taken and refuses to start, naming the holder's pid.
//
// The lock is a POSIX record lock (`fcntl(F_SETLK)`) on a file of its own, not on the database:
// POSIX locks belong to the process and are dropped when it closes *any* descriptor of the file,
// which SQLite does with its own descriptors of the database. `F_GETLK` reports the holder's pid
// (flock(2) cannot). The kernel drops the lock when the process ends, however it ends (SIGKILL,
// a power cut), so a stale lock file never blocks a restart. The file also holds the pid as text,
// for a person looking.
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux

/// The lock that makes one agent the only user of a state file, held until released (or the
/// process ends).
public final class StateFileLock {
    /// The lock file, `<state>.lock`.
    public let path: String
    private let descriptor: FileDescriptor

    /// The lock file of the state file `statePath`.
    public static func lockPath(of statePath: String) -> String { statePath + ".lock" }

    /// Takes the lock of the state file `statePath`.
    /// - Throws: ``StoreError/stateLost(path:_:)`` when another process holds it (naming its pid)
    ///   or the lock file cannot be created.
    public init(statePath: String) throws(StoreError) {
        path = Self.lockPath(of: statePath)
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path, O_RDWR | O_CREAT | O_CLOEXEC, mode: 0o640) } catch {
            throw .stateLost(path: statePath, "its lock file \(path) cannot be opened (\(error))")
        }
        var holder: Int32 = 0
        if Self._lock(fd.rawValue, &holder) != 0 {
            let code = Errno.current
            try? fd.close()
            if holder > 0 {
                throw .stateLost(path: statePath, "another agent (pid \(holder)) is using it (it holds \(path)); one agent per state file")
            }
            throw .stateLost(path: statePath, "its lock file \(path) cannot be locked (\(code))")
        }
        descriptor = fd
        // The pid as text, for a person: the lock itself is what counts.
        let text = "\(getpid())\n"
        _ = Self._truncate(fd.rawValue)
        try? fd.writeAll(text)
    }

    deinit { try? descriptor.close() }

    // MARK: Shims (the only code here that calls libc)

    /// The corresponding C function is `fcntl(F_SETLK)`, with `F_GETLK` for the holder.
    static func _lock(_ fd: Int32, _ holder: inout Int32) -> Int32 { cfl_lock_whole_file(fd, &holder) }
    /// The corresponding C function is `ftruncate(fd, 0)`.
    static func _truncate(_ fd: Int32) -> Int32 { ftruncate(fd, 0) }
}
