// StateFileGuard: notices that the state file is gone while the agent runs, and that a previous
// run's state is missing at start.
//
// SQLite keeps writing to an open file after it was unlinked: its commits succeed, into an inode
// that no name leads to, and vanish when the process ends. So after every commit the store asks
// the guard whether the path still leads to the file it opened (device and inode of the file and
// of its directory, by `stat`): if not, the commit is reported as failed — the agent stops with an
// error naming the file, and never acknowledges a write that is not durable.
//
// At start, a marker file next to the database (`<state>.marker`, written once the database is
// open) says that a run kept state here. A marker without its database (or with an empty one) is
// an error, not a fresh start: everything pending and delivered would be silently gone. Remove the
// marker to start afresh on purpose. A directory removed as a whole takes that marker with it, so
// a second marker is written beside the directory (`<parent>/.<directory>.<file>.fencepost-state`,
// named for the file too, so that it speaks only of this state file) when
// the parent is writable; under systemd's ProtectSystem=strict it is not (the agent may write only
// its StateDirectory), and a StateDirectory removed as a whole starts afresh after the error the
// running agent stopped with, which the journal keeps.
//
// A state file or directory that this process may not write is refused at start (`access`), not
// at the first commit.
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// The identity of the state file and its directory, checked after each commit.
public struct StateFileGuard: Sendable {
    public let path: String
    public let directory: String
    /// The marker of a run that kept state here.
    public var markerPath: String { path + ".marker" }
    /// The marker beside the state directory (written when its parent is writable).
    public var outerMarkerPath: String { Self.outerMarker(of: path) }

    /// `<parent>/.<directory>.<file>.fencepost-state` for the state file `path`: beside its
    /// directory, and about this one file (another state file in the same directory is not
    /// concerned by it).
    static func outerMarker(of path: String) -> String {
        let directory = Self.directory(of: path)
        let parent = Self.directory(of: directory)
        let name = directory.split(separator: "/").last.map(String.init) ?? "state"
        let file = path.split(separator: "/").last.map(String.init) ?? "state"
        return (parent == "/" ? "" : parent) + "/." + name + "." + file + ".fencepost-state"
    }
    let file: (device: UInt64, inode: UInt64)
    let folder: (device: UInt64, inode: UInt64)

    /// Checks what must hold before the database is opened: a marker from a previous run has its
    /// database, and the file and its directory are writable. Call before opening.
    /// - Throws: ``StoreError/stateLost(path:_:)``.
    public static func checkBeforeOpening(path: String) throws(StoreError) {
        let dir = directory(of: path)
        var marker = path + ".marker"
        var markerExists = identity(marker) != nil
        if !markerExists, identity(outerMarker(of: path)) != nil {
            marker = outerMarker(of: path)
            markerExists = true
        }
        if markerExists {
            guard let st = fileInfo(path), st.size > 0 else {
                throw .stateLost(path: path, "the state file is missing or empty, but \(marker) says a previous run kept its state there (pending requests and deliveries would be lost); put the file back, or remove the marker to start afresh")
            }
        }
        guard identity(dir) != nil else {
            throw .stateLost(path: path, "its directory \(dir) does not exist")
        }
        if _access(dir, W_OK) != 0 { throw .stateLost(path: path, "its directory \(dir) is not writable by this process") }
        if identity(path) != nil, _access(path, R_OK | W_OK) != 0 {
            throw .stateLost(path: path, "the state file is read-only for this process (it must be readable and writable)")
        }
    }

    /// Records the identity of the open database and writes the marker.
    /// - Throws: ``StoreError/stateLost(path:_:)`` when the file cannot be found or the marker
    ///   cannot be written.
    public init(path: String) throws(StoreError) {
        self.path = path
        directory = Self.directory(of: path)
        guard let f = Self.identity(path), let d = Self.identity(directory) else {
            throw .stateLost(path: path, "the state file is not where it was opened")
        }
        file = f
        folder = d
        if Self.identity(markerPath) == nil {
            do { try Self.writeMarker(markerPath, "A Fencepost agent keeps its state in \(path). Remove this marker only to start afresh on purpose.\n") } catch {
                throw .stateLost(path: path, "the marker \(markerPath) cannot be written (\(error))")
            }
        }
        // Not for a relative path: its directory's name ("." or a relative one) does not say
        // which directory the marker beside it is about.
        let outer = Self.outerMarker(of: path)
        if path.hasPrefix("/"), Self.identity(outer) == nil, Self._access(Self.directory(of: directory), W_OK) == 0 {
            try? Self.writeMarker(outer, "A Fencepost agent keeps its state in \(path). Remove this marker only to start afresh on purpose.\n")
        }
    }

    /// Writes a marker durably (a marker half written is no marker).
    static func writeMarker(_ at: String, _ text: String) throws(Errno) {
        let fd = try FileDescriptor.open(at, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode: 0o640)
        defer { try? fd.close() }
        try fd.writeAll(text)
        try fd.synchronize()
    }

    /// Whether the path still leads to the file that was opened, in the same directory; the
    /// reason when not.
    /// - Complexity: two `stat` calls (~1 µs each).
    public func check() throws(StoreError) {
        guard let d = Self.identity(directory), d == folder else {
            throw .stateLost(path: path, "its directory \(directory) was removed or replaced while the agent ran; the last changes are not durable")
        }
        guard let f = Self.identity(path), f == file else {
            throw .stateLost(path: path, "the state file was removed or replaced while the agent ran; the last changes are not durable")
        }
    }

    static func directory(of path: String) -> String { Directories.parent(of: path) }

    static func identity(_ path: String) -> (device: UInt64, inode: UInt64)? {
        fileInfo(path).map { ($0.device, $0.inode) }
    }

    static func fileInfo(_ path: String) -> (device: UInt64, inode: UInt64, size: Int64)? {
        var st = stat()
        guard _stat(path, &st) == 0 else { return nil }
        return (UInt64(st.st_dev), UInt64(st.st_ino), Int64(st.st_size))
    }

    // MARK: Shims (the only code here that calls libc)

    /// The corresponding C function is `stat`.
    static func _stat(_ path: String, _ st: inout stat) -> Int32 { stat(path, &st) }
    /// The corresponding C function is `access`.
    static func _access(_ path: String, _ mode: Int32) -> Int32 { access(path, mode) }
}
