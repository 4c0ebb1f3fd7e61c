// When to read the device's time zone again (`TZ`, else /etc/localtime), and its failures to
// read as one repeating condition in the log. Nothing signals a new /etc/localtime or TZ file
// (timedatectl replaces a symlink; a package upgrade rewrites the file), and a read costs a
// readlink and a stat while the file is unchanged (the zone cache), so a look every 30 s notices
// a change within a minute at no measurable cost. A configuration with `time_zone` fixes the
// zone: no look at all while it names one (a SIGHUP may add or remove it).

/// The schedule of the device zone's reads.
struct DeviceZoneWatch {
    /// How often the device zone is read again.
    static let interval: UInt64 = 30_000_000_000
    /// When to read the device zone again (nil: the configuration fixes it).
    var nextCheck: UInt64?
    /// The device zone failing to read, logged as one repeating condition.
    var readFailures = RepeatLimiter()

    /// Starts the periodic reads while the zone is not fixed, and stops them while it is: at start
    /// and after each SIGHUP. A schedule already running keeps its next read.
    mutating func schedule(at now: UInt64, zoneIsFixed: Bool) {
        if zoneIsFixed {
            nextCheck = nil
        } else if nextCheck == nil {
            nextCheck = now + Self.interval
        }
    }

    /// Whether a read is due at `now`; when it is, the next one is scheduled.
    mutating func isDue(at now: UInt64) -> Bool {
        guard let z = nextCheck, z <= now else { return false }
        nextCheck = now + Self.interval
        return true
    }
}
