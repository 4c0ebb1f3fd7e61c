// What `fencepost replay` prints: JSON lines (events or fixes) and the readable report.
import CivilTime
import FencepostJSON
import Position
import TrackFormats

enum ReplayOutput {
    /// `2011-09-15T05:12:03Z`, or `2010-02-01T12:31:38.545Z` when the fix has a fraction
    /// (milliseconds, trailing zeros dropped).
    static func appendTime(_ t: WallInstant, nanoseconds: Int32, to out: inout [UInt8]) {
        InstantText.appendUTC(t, to: &out)
        guard nanoseconds > 0 else { return }
        out.removeLast()  // "Z"
        var ms = Int(nanoseconds) / 1_000_000
        guard ms > 0 else { out.append(UInt8(ascii: "Z")); return }
        var digits = 3
        while ms % 10 == 0 { ms /= 10; digits -= 1 }
        out.append(UInt8(ascii: "."))
        var text = Array(String(ms).utf8)
        while text.count < digits { text.insert(UInt8(ascii: "0"), at: 0) }
        out.append(contentsOf: text)
        out.append(UInt8(ascii: "Z"))
    }

    static func timeText(_ t: WallInstant, nanoseconds: Int32) -> String {
        var out: [UInt8] = []
        appendTime(t, nanoseconds: nanoseconds, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `{"t":"2011-09-15T05:12:03Z","region":"depot","event":"enter","lat":51.2,"lon":6.7}` and a
    /// newline (lat/lon where the track crossed the boundary; null for `unknown`, which has no place).
    static func appendEventLine(_ e: ReplayEvent, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"t":""#.utf8)
        appendTime(e.time, nanoseconds: e.nanoseconds, to: &out)
        out.append(contentsOf: #"","region":"#.utf8)
        JSONValue.serializeString(e.region, into: &out)
        out.append(contentsOf: #","event":""#.utf8)
        out.append(contentsOf: e.kind.rawValue.utf8)
        out.append(contentsOf: #"","lat":"#.utf8)
        JSONValue.number(e.coordinate?.latitude ?? .nan).serialize(into: &out)
        out.append(contentsOf: #","lon":"#.utf8)
        JSONValue.number(e.coordinate?.longitude ?? .nan).serialize(into: &out)
        out.append(contentsOf: "}\n".utf8)
    }

    /// `{"t":"…","lat":51.2,"lon":6.7,"mode":3,"eph":4.5,"speed":13.2}` and a newline; a value the
    /// source did not give is null. `mode` is gpsd's: 1 no fix, 2 2D, 3 3D.
    static func appendFixLine(_ f: Fix, to out: inout [UInt8]) {
        func number(_ d: Double?) { JSONValue.number(d ?? .nan).serialize(into: &out) }
        out.append(contentsOf: #"{"t":"#.utf8)
        if let t = f.time {
            out.append(UInt8(ascii: "\""))
            appendTime(t, nanoseconds: f.nanoseconds, to: &out)
            out.append(UInt8(ascii: "\""))
        } else {
            out.append(contentsOf: "null".utf8)
        }
        out.append(contentsOf: #","lat":"#.utf8)
        number(f.coordinate?.latitude)
        out.append(contentsOf: #","lon":"#.utf8)
        number(f.coordinate?.longitude)
        out.append(contentsOf: #","mode":"#.utf8)
        out.append(contentsOf: String(f.mode.rawValue).utf8)
        out.append(contentsOf: #","eph":"#.utf8)
        number(f.horizontalError)
        out.append(contentsOf: #","speed":"#.utf8)
        number(f.speed)
        out.append(contentsOf: "}\n".utf8)
    }

    /// The readable report: what was read, then one line per event, then a summary.
    ///
    ///     Log:     drive.nmea (NMEA, 4171 sentences), 596 fixes, 596 with a usable position
    ///     Time:    2009-07-07T14:42:23Z … 2009-07-07T14:52:18Z (9min 55s)
    ///     Zones:   2 (1 circle, 1 polygon)
    ///
    ///     2009-07-07T14:44:10Z  enter  depot
    ///     …
    ///     4 events: 2 enter, 2 exit
    static func appendReport(
        input: GPSLog, logPath: String, zones: [ZoneDefinition], events: [ReplayEvent], to out: inout [UInt8]
    ) {
        var lines: [String] = []
        let usable = input.fixes.lazy.filter { $0.usablePosition != nil }.count
        var source = "\(input.format.rawValue)"
        if input.format == .nmea {
            source += ", \(input.sentences) sentences"
            if input.rejectedSentences > 0 { source += ", \(input.rejectedSentences) rejected" }
        }
        lines.append("Log:    \(logPath) (\(source)), \(input.fixes.count) fixes, \(usable) with a usable position")
        let timed = input.fixes.filter { $0.time != nil }
        if let first = timed.first, let last = timed.last {
            let span = last.time!.secondsSinceEpoch - first.time!.secondsSinceEpoch
            lines.append(
                "Time:   \(timeText(first.time!, nanoseconds: 0)) … \(timeText(last.time!, nanoseconds: 0)) "
                    + "(\(InstantText.duration(span)))")
        } else {
            lines.append("Time:   none of the fixes has a date and time: nothing can be monitored")
        }
        let circles = zones.filter { if case .circle = $0.shape { true } else { false } }.count
        lines.append("Zones:  \(zones.count) (\(circles) circle\(circles == 1 ? "" : "s"), "
            + "\(zones.count - circles) polygon\(zones.count - circles == 1 ? "" : "s"))")
        lines.append("")
        let width = max(6, events.map(\.kind.rawValue.count).max() ?? 0)
        for e in events {
            let kind = e.kind.rawValue + String(repeating: " ", count: width - e.kind.rawValue.count)
            var line = "\(timeText(e.time, nanoseconds: e.nanoseconds))  \(kind)  \(e.region)"
            if let c = e.coordinate { line += "  at \(format(c.latitude)), \(format(c.longitude))" }
            lines.append(line)
        }
        if events.isEmpty {
            lines.append("No events: the track never entered or left a zone.")
        } else {
            var counts: [(ReplayEvent.Kind, Int)] = []
            for k in [ReplayEvent.Kind.enter, .exit, .dwell, .unknown] {
                let n = events.filter { $0.kind == k }.count
                if n > 0 { counts.append((k, n)) }
            }
            lines.append("")
            lines.append("\(events.count) event\(events.count == 1 ? "" : "s"): "
                + counts.map { "\($0.1) \($0.0.rawValue)" }.joined(separator: ", "))
        }
        for l in lines {
            out.append(contentsOf: l.utf8)
            out.append(0x0A)
        }
    }

    /// Degrees with 6 decimals (about 0.1 m).
    static func format(_ d: Double) -> String {
        let scaled = (d * 1_000_000).rounded()
        let negative = scaled < 0
        let a = Int64(abs(scaled))
        var frac = String(a % 1_000_000)
        while frac.count < 6 { frac = "0" + frac }
        return (negative ? "-" : "") + "\(a / 1_000_000).\(frac)"
    }
}
