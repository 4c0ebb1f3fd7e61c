// The daemon's log: one line per event on standard error (systemd's journal stamps and keeps it).
import FencepostLinux

/// Writes log lines. Libraries get one of these; only the executable decides where it goes.
public struct DaemonLog: Sendable {
    let sink: @Sendable (String) -> Void

    public init(_ sink: @escaping @Sendable (String) -> Void) { self.sink = sink }

    /// Lines to standard error, prefixed `fencepost: `.
    public static let standardError = DaemonLog { line in
        try? FileDescriptor.standardError.writeAll("fencepost: " + line + "\n")
    }

    public func info(_ line: String) { sink(line) }
    public func warning(_ line: String) { sink("warning: " + line) }
    public func error(_ line: String) { sink("error: " + line) }
}
