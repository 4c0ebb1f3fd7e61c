// Files a person names in the configuration (the configuration itself, a zones file): read with
// a size bound, so `zones = "/dev/zero"` or a runaway file is a clear error, not an agent that
// fills its memory and is killed (through SIGHUP, while running).
import FencepostJSON
import FencepostLinux
import LocalNotifications

/// Bounded reads of the configuration and zones files.
public enum InputFiles {
    /// The largest configuration file read (its [[request]]s included).
    public static let maximumConfigurationBytes = 64 << 20
    /// The largest zones file read: 1M circle zones are ~170 MB of GeoJSON.
    public static let maximumZonesBytes = 512 << 20
    /// The largest replayed GPS log read (NMEA at 1 Hz is ~30 MB a day of driving).
    public static let maximumReplayBytes = 256 << 20

    /// Why a file was not read.
    public enum Failure: Error, CustomStringConvertible {
        case system(Errno)
        case tooLarge(limit: Int)
        case notRegular

        public var description: String {
            switch self {
            case .system(let e): "\(e)"
            case .tooLarge(let limit): "larger than \(limit >> 20) MiB (the most read; is it the right file?)"
            case .notRegular: "not a regular file (a device or a pipe cannot be read whole)"
            }
        }
    }

    /// The whole file at `path`, at most `maximumBytes`; with `regularOnly` (zones files) a device
    /// or pipe is refused before reading, and so is a file whose size is over the bound.
    public static func read(_ path: String, maximumBytes: Int, regularOnly: Bool = false) throws(Failure) -> [UInt8] {
        do { return try FileDescriptor.readFile(path, maximumBytes: maximumBytes, regularOnly: regularOnly) } catch {
            if error == Errno.fileTooLarge { throw .tooLarge(limit: maximumBytes) }
            if regularOnly && error == Errno.notRegularFile { throw .notRegular }
            throw .system(error)
        }
    }

    /// A replayed GPS log (`[gps] source = "replay"`): regular, at most ``maximumReplayBytes``.
    public static func readReplay(_ path: String) throws(Failure) -> [UInt8] {
        try read(path, maximumBytes: maximumReplayBytes, regularOnly: true)
    }

    /// A zones file: regular, at most ``maximumZonesBytes``.
    public static func readZones(_ path: String) throws(Failure) -> [UInt8] {
        try read(path, maximumBytes: maximumZonesBytes, regularOnly: true)
    }

    /// The text of the calendar file at `path` (at most the size of a config file, UTF-8): the one
    /// reader of `ics` files for the agent's config and the CLI's `add --ics` and `simulate`.
    public static func readCalendar(at path: String) throws(ICalendarKeyError) -> String {
        let bytes: [UInt8]
        do { bytes = try InputFiles.read(path, maximumBytes: InputFiles.maximumConfigurationBytes) } catch {
            throw ICalendarKeyError(key: "ics", "\(path): cannot read: \(error)")
        }
        do { return try StrictUTF8.decode(bytes) } catch {
            throw ICalendarKeyError(key: "ics", "\(path):\(error.line): \(error)")
        }
    }

    /// Whether a TZID is a zone of the system's TZif files.
    public static func isZone(_ name: String) -> Bool {
        do { _ = try SystemZones().rules(named: name); return true } catch { return false }
    }
}
