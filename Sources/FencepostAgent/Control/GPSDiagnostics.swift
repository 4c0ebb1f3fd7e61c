// What `fencepost status` shows about the GPS, as `cgps`/`gpsmon` would: the fix (mode,
// satellites used and seen, HDOP, error estimate, age) and the source's counters (bytes,
// sentences accepted, rejected by reason), with a hint when the counters point at a cause.
import FencepostJSON
import NMEA
import Position

/// The GPS source's state and counters, for `status` (text and `--json`).
public struct GPSDiagnostics: Sendable, Equatable {
    /// "none", "2D" or "3D" from the last fix; nil before any.
    public var mode: String?
    public var satellitesUsed: Int?
    /// Satellites in view (GSV, or gpsd's SKY).
    public var satellitesSeen: Int?
    public var hdop: Double?
    /// The last fix's horizontal error estimate, metres.
    public var error: Double?
    /// Seconds since the last fix arrived.
    public var fixAge: Double?
    /// Fixes with a position since start.
    public var positionFixes: Int = 0
    /// Bytes read from a serial port (since the port was opened); nil for other sources. 64 bits
    /// on every machine: an `Int` on a 32-bit board would trap after 2 GiB (weeks at 9600 baud).
    public var bytes: Int64?
    /// Sentences (serial) or gpsd messages accepted.
    public var sentences: Int = 0
    /// Rejected sentences by reason (serial), or gpsd messages libgps could not read (`unreadable`).
    public var rejected = Rejections()
    /// Bytes outside any sentence (line noise, a wrong baud rate).
    public var garbageBytes: Int64 = 0

    /// Sentences rejected, by reason.
    public struct Rejections: Sendable, Equatable {
        /// A wrong or missing checksum.
        public var checksum = 0
        /// Broken framing: non-printable bytes, a sentence cut short, an empty one, a bad address.
        public var framing = 0
        /// A talker we do not decode (not GP GN GL GA GB BD QZ).
        public var unknownTalker = 0
        /// Longer than NMEA's 82 characters (our limit: 120).
        public var overlong = 0
        /// gpsd messages libgps could not unpack.
        public var unreadable = 0

        public init() {}

        public var total: Int { checksum + framing + unknownTalker + overlong + unreadable }
    }

    public init() {}

    /// Reads the serial stream's counters: accepted sentences, rejections by reason, garbage.
    public mutating func count(_ c: NMEAStream.Counters, satellitesInView: SatellitesInView) {
        sentences = c.framer.sentences - c.decoder.ignoredTalker - c.decoder.malformedAddress
        rejected.checksum = c.framer.badChecksum + c.framer.missingChecksum
        rejected.framing = c.framer.nonPrintable + c.framer.truncated + c.framer.empty + c.decoder.malformedAddress
        rejected.unknownTalker = c.decoder.ignoredTalker
        rejected.overlong = c.framer.overlong
        garbageBytes = c.framer.garbageBytes
        if let n = satellitesInView.total { satellitesSeen = n }
    }

    /// Takes the fix's own fields (mode, satellites used, HDOP, error).
    public mutating func take(_ fix: Fix) {
        switch fix.mode {
        case .threeD: mode = "3D"
        case .twoD: mode = "2D"
        case .none: mode = "none"
        }
        if let n = fix.satellitesUsed { satellitesUsed = n }
        hdop = fix.hdop
        error = fix.horizontalError
    }

    /// A likely cause when the counters point at one: bytes but no sentence → the baud rate;
    /// sentences but no position → the antenna's view of the sky. Nil otherwise.
    public var hint: String? {
        if let b = bytes, b >= 256, sentences == 0 {
            return "bytes arrive but no NMEA sentence: wrong baud rate?"
        }
        if sentences >= 20, positionFixes == 0 || mode == "none" {
            return "sentences arrive but no position fix: no sky view?"
        }
        return nil
    }

    /// The `status` JSON object's GPS diagnostics fields.
    public var jsonFields: [(key: String, value: JSONValue)] {
        func number(_ d: Double?) -> JSONValue { d.map(JSONValue.number) ?? .null }
        func integer(_ i: Int?) -> JSONValue { i.map { .integer(Int64($0)) } ?? .null }
        return [
            ("mode", mode.map(JSONValue.string) ?? .null),
            ("satellitesUsed", integer(satellitesUsed)), ("satellitesSeen", integer(satellitesSeen)),
            ("hdop", number(hdop)), ("fixAge", number(fixAge)),
            ("counters", .object([
                ("bytes", bytes.map(JSONValue.integer) ?? .null), ("sentences", .integer(Int64(sentences))),
                ("garbageBytes", .integer(garbageBytes)),
                ("rejected", .object([
                    ("checksum", .integer(Int64(rejected.checksum))), ("framing", .integer(Int64(rejected.framing))),
                    ("unknownTalker", .integer(Int64(rejected.unknownTalker))), ("overlong", .integer(Int64(rejected.overlong))),
                    ("unreadable", .integer(Int64(rejected.unreadable))),
                ])),
            ])),
            ("hint", hint.map(JSONValue.string) ?? .null),
        ]
    }
}
