import Position

// Size: one decoder per sentence type (GGA, RMC, GLL, GSA, GST, VTG, ZDA, GNS, GSV …) with its
// documented sample, beside the dispatch table that names them all; splitting would scatter the
// table's rows from their decoders.
//
// Sentence decoders: a verified sentence in, a small value out. Pure functions of the sentence;
// no decoder knows about epochs, fixes or the device (the epoch assembler merges the values).
//
// Dispatch is a table with one row per sentence type and the minimum number of fields it must
// have (gpsd's `nmea_phrase` table, without the session object). Each decoder documents its fields
// with a real sample sentence from gpsd's regression logs. Numbers are parsed from the bytes in
// place (`NMEAField`); nothing allocates.
//
// Strictness: the fields a fix depends on (time, date, status, quality, latitude, longitude and
// their hemispheres) must be well-formed or the sentence is rejected (`invalidFields`); auxiliary
// fields (speed, course, DOPs, altitude, satellites) that do not parse are simply absent — old
// receivers fill them with odd values (Meinberg's RMC course) and a fix should survive that.

/// The talkers whose sentences are decoded. Others (`GY`, `SN`, proprietary `P…`) are ignored and
/// counted.
public enum NMEATalker: UInt8, Hashable, Sendable {
    /// GP: GPS.
    case gps
    /// GN: a combined multi-constellation solution.
    case combined
    /// GL: GLONASS.
    case glonass
    /// GA: Galileo.
    case galileo
    /// GB or BD: BeiDou.
    case beidou
    /// QZ: QZSS.
    case qzss

    @inlinable
    init?(_ a: UInt8, _ b: UInt8) {
        switch (a, b) {
        case (UInt8(ascii: "G"), UInt8(ascii: "P")): self = .gps
        case (UInt8(ascii: "G"), UInt8(ascii: "N")): self = .combined
        case (UInt8(ascii: "G"), UInt8(ascii: "L")): self = .glonass
        case (UInt8(ascii: "G"), UInt8(ascii: "A")): self = .galileo
        case (UInt8(ascii: "G"), UInt8(ascii: "B")), (UInt8(ascii: "B"), UInt8(ascii: "D")): self = .beidou
        case (UInt8(ascii: "Q"), UInt8(ascii: "Z")): self = .qzss
        default: return nil
        }
    }
}

/// GGA: time, position, fix quality, satellites, HDOP, altitude (no date).
public struct NMEAGGA: Hashable, Sendable {
    public var time: NMEATimeOfDay?
    public var coordinate: Coordinate?
    /// 0 invalid, 1 GPS, 2 DGPS, 3 PPS, 4 RTK fixed, 5 RTK float, 6 estimated, 7 manual, 8 simulation.
    public var quality: Int
    public var satellitesUsed: Int?
    public var hdop: Double?
    /// Metres above mean sea level.
    public var altitudeMSL: Double?

    public init(time: NMEATimeOfDay? = nil, coordinate: Coordinate? = nil, quality: Int, satellitesUsed: Int? = nil, hdop: Double? = nil, altitudeMSL: Double? = nil) {
        self.time = time
        self.coordinate = coordinate
        self.quality = quality
        self.satellitesUsed = satellitesUsed
        self.hdop = hdop
        self.altitudeMSL = altitudeMSL
    }
}

/// RMC: the recommended minimum: time, status, position, speed, course, date.
public struct NMEARMC: Hashable, Sendable {
    public var time: NMEATimeOfDay?
    /// Status `A` (and an FAA mode other than `N`).
    public var isValid: Bool
    public var coordinate: Coordinate?
    /// Metres per second.
    public var speed: Double?
    /// Degrees from true north.
    public var course: Double?
    public var date: NMEADate?

    public init(time: NMEATimeOfDay? = nil, isValid: Bool, coordinate: Coordinate? = nil, speed: Double? = nil, course: Double? = nil, date: NMEADate? = nil) {
        self.time = time
        self.isValid = isValid
        self.coordinate = coordinate
        self.speed = speed
        self.course = course
        self.date = date
    }
}

/// GLL: position, time, status.
public struct NMEAGLL: Hashable, Sendable {
    public var coordinate: Coordinate?
    public var time: NMEATimeOfDay?
    public var isValid: Bool

    public init(coordinate: Coordinate? = nil, time: NMEATimeOfDay? = nil, isValid: Bool) {
        self.coordinate = coordinate
        self.time = time
        self.isValid = isValid
    }
}

/// GSA: fix mode and dilutions of precision (no time).
public struct NMEAGSA: Hashable, Sendable {
    /// 1 no fix, 2 2D, 3 3D; nil when absent.
    public var mode: FixMode?
    public var pdop: Double?
    public var hdop: Double?
    public var vdop: Double?

    public init(mode: FixMode? = nil, pdop: Double? = nil, hdop: Double? = nil, vdop: Double? = nil) {
        self.mode = mode
        self.pdop = pdop
        self.hdop = hdop
        self.vdop = vdop
    }
}

/// GST: error statistics: 1σ errors in metres.
public struct NMEAGST: Hashable, Sendable {
    public var time: NMEATimeOfDay?
    public var rms: Double?
    public var latitudeSigma: Double?
    public var longitudeSigma: Double?
    public var altitudeSigma: Double?

    public init(time: NMEATimeOfDay? = nil, rms: Double? = nil, latitudeSigma: Double? = nil, longitudeSigma: Double? = nil, altitudeSigma: Double? = nil) {
        self.time = time
        self.rms = rms
        self.latitudeSigma = latitudeSigma
        self.longitudeSigma = longitudeSigma
        self.altitudeSigma = altitudeSigma
    }
}

/// VTG: course and speed over ground (no time).
public struct NMEAVTG: Hashable, Sendable {
    /// Degrees from true north.
    public var course: Double?
    /// Metres per second.
    public var speed: Double?

    public init(course: Double? = nil, speed: Double? = nil) {
        self.course = course
        self.speed = speed
    }
}

/// ZDA: time and full date.
public struct NMEAZDA: Hashable, Sendable {
    public var time: NMEATimeOfDay?
    public var date: NMEADate?

    public init(time: NMEATimeOfDay? = nil, date: NMEADate? = nil) {
        self.time = time
        self.date = date
    }
}

/// GNS: the multi-constellation GGA: time, position, per-system mode letters, satellites, HDOP,
/// altitude.
public struct NMEAGNS: Hashable, Sendable {
    public var time: NMEATimeOfDay?
    public var coordinate: Coordinate?
    /// Some mode letter is a fix (`A`, `D`, `P`, `R`, `F`, `E`, `M`, `S`): not all `N`.
    public var isValid: Bool
    public var satellitesUsed: Int?
    public var hdop: Double?
    public var altitudeMSL: Double?

    public init(time: NMEATimeOfDay? = nil, coordinate: Coordinate? = nil, isValid: Bool, satellitesUsed: Int? = nil, hdop: Double? = nil, altitudeMSL: Double? = nil) {
        self.time = time
        self.coordinate = coordinate
        self.isValid = isValid
        self.satellitesUsed = satellitesUsed
        self.hdop = hdop
        self.altitudeMSL = altitudeMSL
    }
}

/// What a decoder returns.
public enum NMEAReport: Hashable, Sendable {
    case gga(NMEAGGA)
    case rmc(NMEARMC)
    case gll(NMEAGLL)
    case gsa(NMEAGSA)
    case gst(NMEAGST)
    case vtg(NMEAVTG)
    case zda(NMEAZDA)
    case gns(NMEAGNS)
}

/// Counters of the decoders. Every sentence handed to `NMEADecoder.decode` lands in exactly one.
public struct NMEADecoderCounters: Hashable, Sendable {
    public var decoded = 0
    /// Proprietary sentences (`$P…`).
    public var proprietary = 0
    /// Talkers other than GP GN GL GA GB BD QZ.
    public var ignoredTalker = 0
    /// Types without a decoder (GSV, GBS, TXT, RMB …).
    public var unsupportedType = 0
    /// An address that is not two talker letters and three type letters.
    public var malformedAddress = 0
    /// Fewer fields than the type's minimum.
    public var tooFewFields = 0
    /// A field the fix depends on did not parse.
    public var invalidFields = 0

    public init() {}
}

/// Satellites in view per constellation (the latest GSV of each talker).
public struct SatellitesInView: Hashable, Sendable {
    var counts: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0)
    /// Which talkers sent a GSV.
    var seen: UInt8 = 0

    public init() {}

    public static func == (a: SatellitesInView, b: SatellitesInView) -> Bool {
        a.seen == b.seen && a.counts == b.counts
    }

    public func hash(into h: inout Hasher) {
        h.combine(seen)
        h.combine(counts.0); h.combine(counts.1); h.combine(counts.2); h.combine(counts.3); h.combine(counts.4); h.combine(counts.5)
    }

    mutating func set(_ talker: NMEATalker, _ n: Int) {
        let v = UInt8(n)
        switch talker {
        case .gps: counts.0 = v
        case .combined: counts.1 = v
        case .glonass: counts.2 = v
        case .galileo: counts.3 = v
        case .beidou: counts.4 = v
        case .qzss: counts.5 = v
        }
        seen |= 1 << talker.rawValue
    }

    /// All constellations together; nil before any GSV.
    public var total: Int? {
        guard seen != 0 else { return nil }
        return Int(counts.0) + Int(counts.1) + Int(counts.2) + Int(counts.3) + Int(counts.4) + Int(counts.5)
    }
}

/// One row of the dispatch table: a sentence type, its minimum field count and its decoder.
/// Plain data (no closures), so scanning the table costs no reference counting.
@usableFromInline
struct NMEADecoderRow: Sendable {
    enum Decoder: Sendable { case gga, rmc, gsa, gll, vtg, zda, gst, gns }
    let type: (UInt8, UInt8, UInt8)
    let minimumFields: Int
    let decoder: Decoder
}

/// Turns sentences into `NMEAReport`s through the dispatch table, and counts what it skips.
public struct NMEADecoder: Sendable {
    public private(set) var counters = NMEADecoderCounters()
    /// Satellites in view by constellation, from the latest GSV of each talker (diagnostics:
    /// `fencepost status`); GSV carries no fix data and is otherwise not decoded.
    public private(set) var satellitesInView = SatellitesInView()

    public init() {}

    /// The dispatch table: one row per sentence type with its minimum field count (most frequent
    /// types first).
    static let table: [NMEADecoderRow] = [
        NMEADecoderRow(type: ascii3("GGA"), minimumFields: 9, decoder: .gga),
        NMEADecoderRow(type: ascii3("RMC"), minimumFields: 9, decoder: .rmc),
        NMEADecoderRow(type: ascii3("GSA"), minimumFields: 17, decoder: .gsa),
        NMEADecoderRow(type: ascii3("GLL"), minimumFields: 6, decoder: .gll),
        NMEADecoderRow(type: ascii3("VTG"), minimumFields: 8, decoder: .vtg),
        NMEADecoderRow(type: ascii3("ZDA"), minimumFields: 4, decoder: .zda),
        NMEADecoderRow(type: ascii3("GST"), minimumFields: 8, decoder: .gst),
        NMEADecoderRow(type: ascii3("GNS"), minimumFields: 10, decoder: .gns),
    ]

    /// The talker and report of a sentence, or nil (counted) when it is not one we decode.
    ///
    /// - Complexity: O(sentence length); no allocation.
    public mutating func decode(_ sentence: NMEASentence) -> (talker: NMEATalker, report: NMEAReport)? {
        let n = sentence.count
        // Address: 5 letters then a comma (or the end).
        guard n >= 1 else { counters.malformedAddress += 1; return nil }
        if sentence[0] == UInt8(ascii: "P") { counters.proprietary += 1; return nil }
        guard n >= 5, n == 5 || sentence[5] == UInt8(ascii: ",") else {
            counters.malformedAddress += 1
            return nil
        }
        guard let talker = NMEATalker(sentence[0], sentence[1]) else {
            counters.ignoredTalker += 1
            return nil
        }
        let type = (sentence[2], sentence[3], sentence[4])
        guard let row = Self.table.withUnsafeBufferPointer({ rows in rows.first { $0.type == type } }) else {
            if type == ascii3("GSV") {
                // $GPGSV,3,1,11,… : message count, message number, satellites in view.
                var f = sentence.fields
                f.skip(2)
                if let n = f.next().unsignedInteger, n <= 255 { satellitesInView.set(talker, n) }
            }
            counters.unsupportedType += 1
            return nil
        }
        guard sentence.fieldCount >= row.minimumFields else {
            counters.tooFewFields += 1
            return nil
        }
        var fields = sentence.fields
        let report: NMEAReport?
        switch row.decoder {
        case .gga: report = decodeGGA(&fields)
        case .rmc: report = decodeRMC(&fields)
        case .gsa: report = decodeGSA(&fields)
        case .gll: report = decodeGLL(&fields)
        case .vtg: report = decodeVTG(&fields)
        case .zda: report = decodeZDA(&fields)
        case .gst: report = decodeGST(&fields)
        case .gns: report = decodeGNS(&fields)
        }
        guard let report else {
            counters.invalidFields += 1
            return nil
        }
        counters.decoded += 1
        return (talker, report)
    }
}

private func ascii3(_ s: StaticString) -> (UInt8, UInt8, UInt8) {
    let p = s.utf8Start
    return (p[0], p[1], p[2])
}

// MARK: - Field helpers

/// Result of a field the fix depends on: absent (empty) is fine, malformed rejects the sentence.
private enum Required<T> {
    case absent
    case value(T)
    case malformed
}

/// Latitude and longitude from four fields (`ddmm.mm`, `N|S`, `dddmm.mm`, `E|W`). Both empty: absent.
private func readCoordinate(_ f: inout NMEAFieldReader) -> Required<Coordinate> {
    let lat = f.next(), ns = f.next(), lon = f.next(), ew = f.next()
    if lat.isEmpty || lon.isEmpty { return .absent }
    guard var la = lat.degreesMinutes, var lo = lon.degreesMinutes, la <= 90, lo <= 180 else { return .malformed }
    switch ns.character {
    case UInt8(ascii: "N"): break
    case UInt8(ascii: "S"): la = -la
    default: return .malformed
    }
    switch ew.character {
    case UInt8(ascii: "E"): break
    case UInt8(ascii: "W"): lo = -lo
    default: return .malformed
    }
    return .value(Coordinate(latitude: la, longitude: lo))
}

private func readTime(_ field: NMEAField) -> Required<NMEATimeOfDay> {
    if field.isEmpty { return .absent }
    guard let t = field.timeOfDay else { return .malformed }
    return .value(t)
}

private let knot = 1852.0 / 3600.0

// MARK: - Decoders

/// GGA — Global Positioning System Fix Data.
///
///     $GPGGA,030719.000,3747.0873,S,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,0000*7D   (bu353s4.log)
///            1          2         3 4          5 6 7  8   9    10 11  12 13 14
///
/// 1 UTC hhmmss.sss · 2–3 latitude ddmm.mmmm, N/S · 4–5 longitude dddmm.mmmm, E/W ·
/// 6 quality (0 invalid, 1 GPS, 2 DGPS, 4 RTK fixed, 5 RTK float, 6 estimated …) · 7 satellites used ·
/// 8 HDOP · 9–10 altitude above MSL, M · 11–12 geoid separation, M · 13 DGPS age · 14 station id.
func decodeGGA(_ f: inout NMEAFieldReader) -> NMEAReport? {
    let t = readTime(f.next())
    if t.isMalformed { return nil }
    let c = readCoordinate(&f)
    if c.isMalformed { return nil }
    let q = f.next()
    let quality: Int
    if q.isEmpty { quality = 0 } else {
        guard let v = q.unsignedInteger else { return nil }
        quality = v
    }
    let sats = f.next().unsignedInteger
    let hdop = f.next().double
    let alt = f.next().double
    return .gga(NMEAGGA(time: t.value, coordinate: c.value, quality: quality, satellitesUsed: sats,
                        hdop: hdop, altitudeMSL: alt))
}

/// RMC — Recommended Minimum Specific GNSS Data.
///
///     $GPRMC,030719.000,A,3747.0873,S,17518.8938,E,0.69,181.39,311214,,,A*7D   (bu353s4.log)
///            1          2 3         4 5          6 7    8      9      10 11 12
///
/// 1 UTC hhmmss.sss · 2 status A valid / V warning · 3–4 latitude · 5–6 longitude · 7 speed, knots ·
/// 8 course, degrees true · 9 date ddmmyy (the year within 100 years from 30 before the build's:
/// ReceiverDates.year(twoDigit:)) · 10–11 magnetic
/// variation · 12 FAA mode (NMEA 2.3: A autonomous, D differential, E estimated, N not valid …).
func decodeRMC(_ f: inout NMEAFieldReader) -> NMEAReport? {
    let t = readTime(f.next())
    if t.isMalformed { return nil }
    let status = f.next()
    let c = readCoordinate(&f)
    if c.isMalformed { return nil }
    let speed = f.next().double.map { $0 * knot }
    let course = f.next().double
    let dateField = f.next()
    var date: NMEADate?
    if !dateField.isEmpty {
        // ddmmyy; anything else (`2208-1` after a week rollover) is malformed.
        guard dateField.count == 6, let v = dateField.unsignedInteger else { return nil }
        let dd = v / 10000, mm = v / 100 % 100, yy = v % 100
        guard (1...31).contains(dd), (1...12).contains(mm) else { return nil }
        date = NMEADate(year: ReceiverDates.year(twoDigit: yy), month: mm, day: dd)
    }
    f.skip(2)
    let faa = f.next().first
    let valid = status.character == UInt8(ascii: "A") && faa != UInt8(ascii: "N")
    return .rmc(NMEARMC(time: t.value, isValid: valid, coordinate: c.value, speed: speed, course: course, date: date))
}

/// GLL — Geographic Position, Latitude/Longitude.
///
///     $GPGLL,3854.5087,N,07726.4523,W,125106,V,S*55   (a Garmin: status V, FAA mode S simulator)
///            1         2 3          4 5      6 7
///
/// 1–2 latitude · 3–4 longitude · 5 UTC hhmmss.ss · 6 status A valid / V invalid · 7 FAA mode.
func decodeGLL(_ f: inout NMEAFieldReader) -> NMEAReport? {
    let c = readCoordinate(&f)
    if c.isMalformed { return nil }
    let t = readTime(f.next())
    if t.isMalformed { return nil }
    let status = f.next()
    let faa = f.next().first
    let valid = status.character == UInt8(ascii: "A") && faa != UInt8(ascii: "N")
    return .gll(NMEAGLL(coordinate: c.value, time: t.value, isValid: valid))
}

/// GSA — GNSS DOP and Active Satellites.
///
///     $GPGSA,A,3,17,28,06,01,30,20,26,13,,,,,1.8,1.1,1.5*33   (bu353s4.log)
///            1 2 3 … 14                      15  16  17
///
/// 1 selection M manual / A automatic · 2 mode 1 no fix, 2 2D, 3 3D · 3–14 PRNs used · 15 PDOP ·
/// 16 HDOP · 17 VDOP · (18 system id, NMEA 4.10).
func decodeGSA(_ f: inout NMEAFieldReader) -> NMEAReport? {
    f.skip(1)
    let m = f.next()
    var mode: FixMode?
    if !m.isEmpty {
        switch m.character {
        case UInt8(ascii: "1"): mode = FixMode.none
        case UInt8(ascii: "2"): mode = .twoD
        case UInt8(ascii: "3"): mode = .threeD
        default: return nil
        }
    }
    f.skip(12)
    let pdop = f.next().double, hdop = f.next().double, vdop = f.next().double
    return .gsa(NMEAGSA(mode: mode, pdop: pdop, hdop: hdop, vdop: vdop))
}

/// GST — GNSS Pseudorange Error Statistics.
///
///     $GNGST,181141.00,46,,,,4.7,1.9,5.3*4A   (gr8013-w.log, u-blox 8)
///            1         2  3 4 5 6   7   8
///
/// 1 UTC · 2 RMS of the pseudorange residuals · 3 error ellipse semi-major σ, m · 4 semi-minor σ, m ·
/// 5 orientation, degrees · 6 latitude σ, m · 7 longitude σ, m · 8 altitude σ, m.
func decodeGST(_ f: inout NMEAFieldReader) -> NMEAReport? {
    let t = readTime(f.next())
    if t.isMalformed { return nil }
    let rms = f.next().double
    f.skip(3)
    let lat = f.next().double, lon = f.next().double, alt = f.next().double
    return .gst(NMEAGST(time: t.value, rms: rms, latitudeSigma: lat, longitudeSigma: lon, altitudeSigma: alt))
}

/// VTG — Course Over Ground and Ground Speed.
///
///     $GPVTG,0.0,T,10.5,M,0.0,N,0.0,K*7A   (a SiRF receiver, stationary)
///            1   2 3    4 5   6 7   8 (9)
///
/// 1–2 course, degrees true, T · 3–4 course, degrees magnetic, M · 5–6 speed, knots, N ·
/// 7–8 speed, km/h, K · 9 FAA mode (NMEA 2.3).
func decodeVTG(_ f: inout NMEAFieldReader) -> NMEAReport? {
    let course = f.next().double
    f.skip(3)
    let knots = f.next().double
    f.skip(1)
    let kmh = f.next().double
    let speed = knots.map { $0 * knot } ?? kmh.map { $0 / 3.6 }
    return .vtg(NMEAVTG(course: course, speed: speed))
}

/// ZDA — Time and Date.
///
///     $GPZDA,193223.00,23,12,2007,00,00*69   (ac12.log, Ashtech AC12)
///            1         2  3  4    5  6
///
/// 1 UTC hhmmss.ss · 2 day · 3 month · 4 year (four digits) · 5–6 local zone hours, minutes.
func decodeZDA(_ f: inout NMEAFieldReader) -> NMEAReport? {
    let t = readTime(f.next())
    if t.isMalformed { return nil }
    let d = f.next(), m = f.next(), y = f.next()
    var date: NMEADate?
    if !d.isEmpty || !m.isEmpty || !y.isEmpty {
        guard let dd = d.unsignedInteger, let mm = m.unsignedInteger, let yy = y.unsignedInteger,
              (1...31).contains(dd), (1...12).contains(mm), y.count == 4
        else { return nil }
        date = NMEADate(year: yy, month: mm, day: dd)
    }
    return .zda(NMEAZDA(time: t.value, date: date))
}

/// GNS — GNSS Fix Data (the multi-constellation GGA).
///
///     $GNGNS,074150.799,,,,,NNNN,00,,,0.0,,0000*63   (quectel-eg25-g-2.log, no fix yet)
///     $GNGNS,122310.2,3722.425671,N,12258.856215,W,AAN,12,0.8,1005.543,6.5,,*xx   (a fix)
///            1        2           3 4            5 6   7  8   9        10  11 12 (13)
///
/// 1 UTC · 2–3 latitude · 4–5 longitude · 6 mode letters, one per system (GPS, GLONASS, Galileo,
/// BeiDou …: N no fix, A autonomous, D differential, P precise, R RTK, F float RTK, E estimated) ·
/// 7 satellites used · 8 HDOP · 9 altitude above MSL, m · 10 geoid separation · 11 DGPS age ·
/// 12 station · 13 navigational status (NMEA 4.10).
func decodeGNS(_ f: inout NMEAFieldReader) -> NMEAReport? {
    let t = readTime(f.next())
    if t.isMalformed { return nil }
    let c = readCoordinate(&f)
    if c.isMalformed { return nil }
    let modes = f.next()
    var valid = false
    for i in 0..<modes.count {
        switch modes.base[i] {
        case UInt8(ascii: "A"), UInt8(ascii: "D"), UInt8(ascii: "P"), UInt8(ascii: "R"),
             UInt8(ascii: "F"), UInt8(ascii: "E"), UInt8(ascii: "M"), UInt8(ascii: "S"):
            valid = true
        default: break
        }
    }
    let sats = f.next().unsignedInteger
    let hdop = f.next().double
    let alt = f.next().double
    return .gns(NMEAGNS(time: t.value, coordinate: c.value, isValid: valid, satellitesUsed: sats,
                        hdop: hdop, altitudeMSL: alt))
}

extension Required {
    fileprivate var isMalformed: Bool { if case .malformed = self { true } else { false } }
    fileprivate var value: T? { if case .value(let v) = self { v } else { nil } }
}
