// Making folders for the daemon's files (the demo's; on a board systemd makes them).
#if canImport(Glibc)
import Glibc
#endif

public enum Directories {
    /// Creates the folder `path` and any missing parents, with `mode`; an existing folder is fine.
    /// The corresponding C function is `mkdir`.
    public static func create(_ path: String, mode: mode_t = 0o755) throws(Errno) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            prefix += "/" + part
            let rc = mkdir(prefix, mode)
            if rc != 0 && errno != EEXIST { throw Errno.current }
        }
    }

    /// Creates the folder that holds `path` (see ``create(_:mode:)``).
    public static func createParent(of path: String) throws(Errno) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        try create(String(path[..<slash]))
    }
}
