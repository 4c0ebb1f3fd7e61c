// The daemon's log: one line per event on standard error, which systemd's journal stamps and
// keeps. Each line begins with an sd-daemon(3) priority prefix (`<3>` error, `<4>` warning, `<6>`
// info, `<7>` debug), which journald strips and stores as the entry's priority, so that
// `journalctl -u fencepost -p warning` shows warnings and errors only. Lines below the configured
// level (`[log] level`) are not written.
import FencepostLinux

/// A line's priority, numbered as syslog(3) and sd-daemon(3) number them (lower is more severe).
public enum LogLevel: UInt8, Sendable, Comparable {
    case error = 3
    case warning = 4
    case info = 6
    case debug = 7

    /// The name in `[log] level` ("error", "warning", "info", "debug"); nil for another word.
    public init?(name: String) {
        switch name {
        case "error": self = .error
        case "warning": self = .warning
        case "info": self = .info
        case "debug": self = .debug
        default: return nil
        }
    }

    /// The name in `[log] level`.
    public var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// More severe first: `.error < .warning < .info < .debug`.
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// The level a log writes at and below; shared by the copies of one ``DaemonLog`` so that a
/// SIGHUP that changes `[log] level` reaches every part holding a copy.
final class LogThreshold {
    var level: LogLevel
    init(_ level: LogLevel) { self.level = level }
}

/// Writes log lines. Libraries get one of these; only the executable decides where it goes.
public struct DaemonLog {
    let sink: (LogLevel, String) -> Void
    let threshold: LogThreshold

    /// A log that hands each line at or above `level` to `sink` (its level and its text, without
    /// prefix or newline).
    public init(level: LogLevel = .info, _ sink: @escaping (LogLevel, String) -> Void) {
        self.sink = sink
        threshold = LogThreshold(level)
    }

    /// Lines to standard error as ``format(_:_:)`` writes them.
    public static func standardError(level: LogLevel = .info) -> DaemonLog {
        DaemonLog(level: level) { level, text in
            try? FileDescriptor.standardError.writeAll(format(level, text) + "\n")
        }
    }

    /// One line as written to standard error: `<4>fencepost: warning: text` — the sd-daemon
    /// priority first (journald reads it), then the words a person reads in a terminal. `text`
    /// is escaped (``PrintableText``): whatever it quotes, it stays one entry of this priority.
    public static func format(_ level: LogLevel, _ text: String, program: String = "fencepost") -> String {
        let word: String
        switch level {
        case .error: word = "error: "
        case .warning: word = "warning: "
        case .info: word = ""
        case .debug: word = "debug: "
        }
        return "<\(level.rawValue)>\(PrintableText.escaped(program)): \(word)\(PrintableText.escaped(text))"
    }

    /// The least severe level written; lines below it are dropped (their text is not even built).
    public var level: LogLevel {
        get { threshold.level }
        nonmutating set { threshold.level = newValue }
    }

    /// Whether lines of `level` are written.
    public func isEnabled(_ level: LogLevel) -> Bool { level <= threshold.level }

    /// Writes `text` at `level` when the level is enabled.
    public func log(_ level: LogLevel, _ text: @autoclosure () -> String) {
        if isEnabled(level) { sink(level, text()) }
    }

    public func debug(_ line: @autoclosure () -> String) { log(.debug, line()) }
    public func info(_ line: @autoclosure () -> String) { log(.info, line()) }
    public func warning(_ line: @autoclosure () -> String) { log(.warning, line()) }
    public func error(_ line: @autoclosure () -> String) { log(.error, line()) }

    /// One occurrence of a repeating condition (GPS missing, gpsd unreachable, a failing GPIO
    /// line): written when the condition starts, then at most once per the limiter's interval with
    /// the number of occurrences since the previous line, e.g.
    /// `GPS: /dev/ttyACM0: no such file (30 times in the last 60 s)`.
    ///
    /// - Parameter now: the caller's monotonic clock, nanoseconds (the limiter reads no clock).
    public func repeating(_ level: LogLevel, _ text: @autoclosure () -> String, limiter: inout RepeatLimiter, at now: UInt64) {
        switch limiter.occurred(at: now) {
        case .first: log(level, text())
        case .repeated(let count, let seconds): log(level, "\(text()) (\(count) times in the last \(seconds) s)")
        case .suppressed: break
        }
    }

    /// The end of a repeating condition: when it was active, writes `text` (at info) with how many
    /// times it occurred and for how long, e.g. `GPS: connected to gpsd at 127.0.0.1:2947 (after
    /// 12 failures over 3 min)`, and returns true; otherwise writes nothing and returns false.
    @discardableResult
    public func cleared(_ text: @autoclosure () -> String, limiter: inout RepeatLimiter, at now: UInt64, level: LogLevel = .info) -> Bool {
        guard let end = limiter.clear(at: now) else { return false }
        log(level, "\(text()) (after \(end.occurrences) \(end.occurrences == 1 ? "failure" : "failures") over \(ControlService.approximate(Int64(clamping: end.seconds))))")
        return true
    }
}
