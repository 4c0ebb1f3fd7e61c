// Making folders for the daemon's files (the demo's; on a board systemd makes them).
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
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
        let parent = self.parent(of: path)
        guard parent != "." && parent != "/" else { return }
        try create(parent)
    }

    /// The folder that holds `path`, as dirname(1) says it: "." for a bare name, "/" for a name
    /// in the root.
    public static func parent(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        let d = String(path[..<slash])
        return d.isEmpty ? "/" : d
    }
}
