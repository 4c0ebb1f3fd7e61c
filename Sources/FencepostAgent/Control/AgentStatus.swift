// What the daemon knows about itself, for `status`: filled by the daemon, read by the control
// service. A plain value: no behaviour.
import CivilTime

/// The daemon's state as `fencepost status` shows it.
/// Stored properties: one per field of the `status` answer; a plain value, no behaviour.
public struct AgentStatus: Sendable {
    /// Where the wall clock's trust comes from.
    public enum ClockSource: String, Sendable {
        /// NTP synchronised (the kernel's `adjtimex` status).
        case ntp
        /// GNSS time: the agent's own wall clock anchored to CLOCK_BOOTTIME (`clock_trust = "gnss"`),
        /// or, with `ntp`, the system clock agreeing with GNSS time.
        case gnss
        /// Trusted by configuration (`clock_trust = "always"`: a board with a good RTC).
        case always
        /// Not trusted.
        case none

        /// Why the clock is trusted: `always` by configuration, else NTP when the kernel says it is
        /// synchronised, else GNSS; `none` when it is not trusted.
        public init(trusted: Bool, trust: ClockTrust, ntpSynchronized: Bool) {
            if !trusted { self = .none } else if trust == .always { self = .always } else { self = ntpSynchronized ? .ntp : .gnss }
        }
    }

    /// When the daemon started (nil while the wall clock was untrusted at start).
    public var started: WallInstant?
    /// Monotonic time of the start, for the uptime.
    public var startedMonotonic: MonotonicInstant?
    /// Whether the daemon trusts the wall clock, and why.
    public var wallTrusted: Bool
    public var clockSource: ClockSource
    /// Seconds the agent's wall clock is ahead of the system clock (GNSS time minus CLOCK_REALTIME),
    /// while the wall clock is GNSS time; nil otherwise.
    public var offsetToSystemClock: Double?
    /// The GPS source as configured: `/dev/serial0 @ 9600`, `gpsd://localhost:2947`, `replay drive.nmea ×10`, or nil.
    public var gpsSource: String?
    /// Whether the source is connected now.
    public var gpsConnected: Bool
    /// Seconds since the last fix (nil: none yet).
    public var lastFixAge: Double?
    /// The last fix's horizontal error estimate, metres.
    public var lastFixError: Double?
    /// The last fix's position.
    public var lastFixLatitude: Double?
    public var lastFixLongitude: Double?
    /// Fixes received since start.
    public var fixesReceived: Int
    /// Fix mode, satellites, HDOP, the source's counters and a hint.
    public var gps = GPSDiagnostics()
    /// The device zone (IANA name).
    public var deviceZone: String
    public var configPath: String?
    public var statePath: String?

    public init(started: WallInstant? = nil, startedMonotonic: MonotonicInstant? = nil, wallTrusted: Bool = false,
                clockSource: ClockSource = .none, gpsSource: String? = nil, gpsConnected: Bool = false,
                lastFixAge: Double? = nil, lastFixError: Double? = nil, lastFixLatitude: Double? = nil,
                lastFixLongitude: Double? = nil, fixesReceived: Int = 0, deviceZone: String = "UTC",
                configPath: String? = nil, statePath: String? = nil) {
        self.started = started; self.startedMonotonic = startedMonotonic; self.wallTrusted = wallTrusted
        self.clockSource = clockSource; self.gpsSource = gpsSource; self.gpsConnected = gpsConnected
        self.lastFixAge = lastFixAge; self.lastFixError = lastFixError; self.lastFixLatitude = lastFixLatitude
        self.lastFixLongitude = lastFixLongitude; self.fixesReceived = fixesReceived; self.deviceZone = deviceZone
        self.configPath = configPath; self.statePath = statePath
    }
}
