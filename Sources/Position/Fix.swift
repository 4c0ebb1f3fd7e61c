import CivilTime

/// A point on the WGS 84 ellipsoid, in degrees.
public struct Coordinate: Hashable, Sendable, CustomStringConvertible {
    /// −90…90, north positive.
    public var latitude: Double
    /// −180…180, east positive.
    public var longitude: Double

    @inlinable
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Whether both values are finite and in range, and the point is not "null island" (0, 0),
    /// which receivers report before their first fix.
    @inlinable
    public var isPlausible: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
            && !(latitude == 0 && longitude == 0)
    }

    public var description: String { "\(latitude),\(longitude)" }
}

/// The kind of position solution a receiver reports.
public enum FixMode: Int, Hashable, Sendable, Comparable {
    /// No position (gpsd mode 1).
    case none = 1
    /// Latitude and longitude only (gpsd mode 2).
    case twoD = 2
    /// Latitude, longitude and altitude (gpsd mode 3).
    case threeD = 3

    public static func < (a: FixMode, b: FixMode) -> Bool { a.rawValue < b.rawValue }
}

/// One position solution: what every source (NMEA, gpsd, GPX) is turned into, and what the region
/// monitor consumes.
///
/// Values that the source did not give are nil; no field is invented.
public struct Fix: Hashable, Sendable {
    /// UTC time of the solution, whole seconds; nil when the source gave no date (GGA alone).
    public var time: WallInstant?
    /// Fraction of the second of `time`, 0…999_999_999.
    public var nanoseconds: Int32
    /// Position; nil for no fix.
    public var coordinate: Coordinate?
    /// Altitude above mean sea level, metres.
    public var altitudeMSL: Double?
    public var mode: FixMode
    /// The receiver calls the solution valid (RMC/GLL status A, GGA quality > 0).
    public var isValid: Bool
    /// Speed over ground, metres per second.
    public var speed: Double?
    /// Course over ground, degrees from true north.
    public var course: Double?
    /// Horizontal dilution of precision.
    public var hdop: Double?
    /// Satellites used in the solution.
    public var satellitesUsed: Int?
    /// Estimated horizontal error, metres (1 σ per axis combined: from GST sigmas when the
    /// receiver sends them, else HDOP × UERE).
    public var horizontalError: Double?

    /// The user equivalent range error of a typical consumer receiver, metres: every source's
    /// default (serial NMEA, gpsd, GPX, `[gps] uere`).
    public static let typicalUERE = 5.0

    public init(
        time: WallInstant? = nil, nanoseconds: Int32 = 0, coordinate: Coordinate? = nil,
        altitudeMSL: Double? = nil, mode: FixMode = .none, isValid: Bool = false,
        speed: Double? = nil, course: Double? = nil, hdop: Double? = nil,
        satellitesUsed: Int? = nil, horizontalError: Double? = nil
    ) {
        self.time = time; self.nanoseconds = nanoseconds; self.coordinate = coordinate
        self.altitudeMSL = altitudeMSL; self.mode = mode; self.isValid = isValid
        self.speed = speed; self.course = course; self.hdop = hdop
        self.satellitesUsed = satellitesUsed; self.horizontalError = horizontalError
    }

    /// A position the region monitor may use: valid, at least 2D, plausible coordinates.
    @inlinable
    public var usablePosition: Coordinate? {
        guard isValid, mode >= .twoD, let c = coordinate, c.isPlausible else { return nil }
        return c
    }
}
