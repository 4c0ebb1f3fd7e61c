import CivilTime
import Position

/// Merges the sentences of one navigation epoch into one `Fix`.
///
/// A receiver reports one solution as several sentences, each with part of it: GGA has the time of
/// day, position, quality, altitude, HDOP and satellites but no date; RMC has the date, status,
/// speed and course; GSA the fix mode (no time at all); GST the error sigmas; VTG speed and course
/// (no time); ZDA the date. This type is the one place that knows how they fit together:
///
/// - An epoch is the run of sentences with the same time of day. A timestamped sentence with
///   another time ends the current epoch and emits its fix; sentences without a time (GSA, VTG)
///   belong to the epoch in progress. Optionally a chosen sentence type ends the epoch at once
///   (`Configuration.epochEnd`), for receivers whose cycle is known, to emit without waiting for
///   the next second; later sentences with the closed time are then ignored (`lateSentences`).
/// - An epoch is emitted only if it had a position sentence (GGA, RMC, GLL or GNS). Position
///   sentences without a time (`$GPRMC,,V,…` while there is no fix) form an epoch of their own.
/// - Date: the epoch's own RMC/ZDA date, else the last date seen, carried forward; when the time
///   of day has wrapped past midnight since that date was seen (it went back by more than 12 h),
///   the carried date moves to the next day. No date ever seen: `Fix.time` is nil.
/// - Validity: every status the epoch carries must say valid (GGA quality > 0, RMC/GLL status A
///   and FAA mode not N, GNS some mode letter not N).
/// - Mode (as gpsd): an invalid epoch is `.none`. Otherwise 3D when GGA/GNS gave an altitude
///   (receivers often send GSA mode 2 with a usable altitude; gpsd reports 3D then, and so do we);
///   else GSA's mode when the epoch has one; else the previous fix's mode, at least 2D (an epoch
///   of RMC or GLL alone says nothing about the mode).
/// - Position: the last position sentence's; "null island" (0, 0), which receivers print before
///   their first fix, is no position.
/// - Horizontal error: √(σlat² + σlon²) from GST when the epoch has both sigmas, else
///   HDOP × `Configuration.uere`.
public struct NMEAEpochAssembler: Sendable {
    /// A sentence type that can end an epoch.
    public enum SentenceType: Sendable, Hashable { case gga, rmc, gll, gns, gst, zda }

    public struct Configuration: Sendable, Hashable {
        /// User equivalent range error, metres: horizontal error = HDOP × UERE when there is no GST.
        public var uere: Double
        /// End the epoch right after this sentence type instead of at the next time change.
        public var epochEnd: SentenceType?

        public init(uere: Double = Fix.typicalUERE, epochEnd: SentenceType? = nil) {
            self.uere = uere
            self.epochEnd = epochEnd
        }
    }

    public struct Counters: Hashable, Sendable {
        /// Fixes emitted.
        public var fixes = 0
        /// Epochs dropped because they had no position sentence.
        public var epochsWithoutPosition = 0
        /// Timestamped sentences for an epoch already closed by `epochEnd`.
        public var lateSentences = 0
        public init() {}
    }

    public let configuration: Configuration
    public private(set) var counters = Counters()

    /// The epoch being assembled.
    private var epoch = Epoch()
    /// The last date seen and the time of day it was seen with (for GGA-only epochs).
    private var lastDate: (day: Int64, secondOfDay: Int32)?
    /// The mode of the last fix: an epoch with no altitude and no GSA (RMC and GLL only) keeps it.
    private var lastMode = FixMode.none
    /// The time of the epoch closed by `epochEnd`, whose stragglers are ignored.
    private var closedTime: NMEATimeOfDay?

    private struct Epoch {
        var time: NMEATimeOfDay?
        var day: Int64?
        var hasPosition = false
        var hasContent = false
        var coordinate: Coordinate?
        var altitudeMSL: Double?
        var valid = true
        var statusSeen = false
        var gsaMode: FixMode?
        var speed: Double?
        var course: Double?
        var hdop: Double?
        var satellites: Int?
        var latitudeSigma: Double?
        var longitudeSigma: Double?
    }

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Adds one decoded sentence; calls `onFix` when it completes an epoch (at most once).
    ///
    /// - Complexity: O(1).
    public mutating func add(_ report: NMEAReport, _ onFix: (Fix) -> Void) {
        let time: NMEATimeOfDay?
        switch report {
        case .gga(let r): time = r.time
        case .rmc(let r): time = r.time
        case .gll(let r): time = r.time
        case .gns(let r): time = r.time
        case .gst(let r): time = r.time
        case .zda(let r): time = r.time
        case .gsa, .vtg: time = nil
        }
        if let time {
            if let closed = closedTime, closed == time {
                counters.lateSentences += 1
                return
            }
            if let current = epoch.time {
                if current != time { emit(onFix) }
            } else if epoch.hasPosition {
                // Position sentences without a time (`$GPRMC,,V,…` before a fix) were an epoch
                // of their own: they must not make this one invalid.
                emit(onFix)
            }
            epoch.time = time
            closedTime = nil
        } else if report.isPosition, epoch.time != nil, epoch.hasPosition {
            // A position sentence without a time (`$GPGGA,,,,,,0,…` after losing the fix) does
            // not belong to the timed epoch in progress.
            emit(onFix)
        }
        merge(report)
        if let end = configuration.epochEnd, end == report.sentenceType, epoch.time != nil {
            closedTime = epoch.time
            emit(onFix)
        }
    }

    /// Ends the stream: emits the epoch in progress, if it has a position.
    public mutating func finish(_ onFix: (Fix) -> Void) {
        emit(onFix)
        closedTime = nil
    }

    private mutating func merge(_ report: NMEAReport) {
        epoch.hasContent = true
        switch report {
        case .gga(let r):
            mergeFixData(r.coordinate, valid: r.quality != 0, r.altitudeMSL, r.hdop, r.satellitesUsed)
        case .gns(let r):
            mergeFixData(r.coordinate, valid: r.isValid, r.altitudeMSL, r.hdop, r.satellitesUsed)
        case .rmc(let r):
            epoch.hasPosition = true
            epoch.coordinate = r.coordinate
            epoch.statusSeen = true
            if !r.isValid { epoch.valid = false }
            if let s = r.speed { epoch.speed = s }
            if let c = r.course { epoch.course = c }
            if let d = r.date { setDate(d) }
        case .gll(let r):
            epoch.hasPosition = true
            epoch.coordinate = r.coordinate
            epoch.statusSeen = true
            if !r.isValid { epoch.valid = false }
        case .gsa(let r):
            if let m = r.mode { epoch.gsaMode = m }
            if let h = r.hdop { epoch.hdop = h }
        case .gst(let r):
            if let a = r.latitudeSigma, let b = r.longitudeSigma {
                epoch.latitudeSigma = a
                epoch.longitudeSigma = b
            }
        case .vtg(let r):
            if let s = r.speed { epoch.speed = s }
            if let c = r.course { epoch.course = c }
        case .zda(let r):
            if let d = r.date { setDate(d) }
        }
    }

    /// GGA and GNS carry the same fix data: position, quality, altitude, HDOP, satellites.
    private mutating func mergeFixData(_ coordinate: Coordinate?, valid: Bool, _ altitudeMSL: Double?,
                                       _ hdop: Double?, _ satellites: Int?) {
        epoch.hasPosition = true
        epoch.coordinate = coordinate
        epoch.statusSeen = true
        if !valid { epoch.valid = false }
        if let a = altitudeMSL { epoch.altitudeMSL = a }
        if let h = hdop { epoch.hdop = h }
        if let s = satellites { epoch.satellites = s }
    }

    private mutating func setDate(_ d: NMEADate) {
        let day = CivilDays.dayNumber(year: Int64(d.year), month: d.month, day: d.day)
        epoch.day = day
    }

    private mutating func emit(_ onFix: (Fix) -> Void) {
        defer { epoch = Epoch() }
        guard epoch.hasContent else { return }
        // Date: the epoch's own, else carried forward across midnight.
        var day = epoch.day
        if let t = epoch.time {
            if let d = day {
                lastDate = (d, t.secondOfDay)
            } else if let last = lastDate {
                var d = last.day
                if t.secondOfDay < last.secondOfDay - 43_200 { d += 1 }
                day = d
                lastDate = (d, t.secondOfDay)
            }
        }
        guard epoch.hasPosition else {
            counters.epochsWithoutPosition += 1
            return
        }
        var fix = Fix()
        if let t = epoch.time, let day {
            fix.time = WallInstant(secondsSinceEpoch: day * 86_400 + Int64(t.secondOfDay))
            fix.nanoseconds = t.nanoseconds
        }
        if let c = epoch.coordinate, !(c.latitude == 0 && c.longitude == 0) {
            fix.coordinate = c
        }
        fix.isValid = epoch.statusSeen && epoch.valid
        if fix.isValid {
            if epoch.altitudeMSL != nil {
                fix.mode = .threeD
            } else if let m = epoch.gsaMode {
                fix.mode = m
            } else {
                fix.mode = max(lastMode, .twoD)
            }
        } else {
            fix.mode = .none
        }
        lastMode = fix.mode
        fix.altitudeMSL = epoch.altitudeMSL
        fix.speed = epoch.speed
        fix.course = epoch.course
        fix.hdop = epoch.hdop
        fix.satellitesUsed = epoch.satellites
        if let a = epoch.latitudeSigma, let b = epoch.longitudeSigma {
            fix.horizontalError = (a * a + b * b).squareRoot()
        } else if let h = epoch.hdop {
            fix.horizontalError = h * configuration.uere
        }
        counters.fixes += 1
        onFix(fix)
    }
}

extension NMEAReport {
    var isPosition: Bool {
        switch self {
        case .gga, .rmc, .gll, .gns: true
        default: false
        }
    }

    var sentenceType: NMEAEpochAssembler.SentenceType? {
        switch self {
        case .gga: .gga
        case .rmc: .rmc
        case .gll: .gll
        case .gns: .gns
        case .gst: .gst
        case .zda: .zda
        case .gsa, .vtg: nil
        }
    }
}
