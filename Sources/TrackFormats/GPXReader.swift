// GPX 1.0 / 1.1 tracks → `Fix` values.
//
// Read: every `trk/trkseg/trkpt` (`lat`, `lon` attributes) with the children `ele`, `time`,
// `speed`, `course`, `fix`, `sat`, `hdop`. GPX 1.0 has `speed` and `course` in the point; GPX 1.1
// moved them to extensions (Garmin's `gpxtpx:TrackPointExtension/gpxtpx:speed`, …), so a `speed`
// or `course` anywhere inside the point is used when the point has none of its own. Elements are
// matched by local name: `gpx:trkpt` and `trkpt` are the same. Routes and waypoints are not
// tracks and are skipped.
//
// Mapping to `Fix`:
//   - mode from `fix`: none → .none, 2d → .twoD, 3d / dgps / pps → .threeD; no `fix` element →
//     .threeD (a logger writes a point only when it has a position);
//   - isValid = mode is 2D or better;
//   - speed is m/s in GPX already; course degrees;
//   - horizontalError = hdop × UERE when `hdop` is present, else nil (never invented);
//   - time: RFC 3339 (`Z` or an offset; none is read as UTC), fraction kept in `nanoseconds`.
//
// A value that is present but not a number, a latitude outside ±90, a longitude outside ±180 or
// a time that is not a timestamp is an error with its line and column: a track that lies about one
// point cannot be trusted for the rest.
import CivilTime
import FencepostJSON
import Position

/// Reads GPX tracks. See the file comment for the mapping.
public struct GPXReader {
    /// User equivalent range error, metres: horizontalError = hdop × uere.
    public var uere: Double

    public init(uere: Double = GPXReader.defaultUERE) { self.uere = uere }

    /// A typical UERE for a consumer receiver (metres).
    public static let defaultUERE = Fix.typicalUERE

    /// Whether `bytes` look like XML (after an optional BOM and white space, the first byte is '<').
    public static func looksLikeXML(_ bytes: some Collection<UInt8>) -> Bool {
        var skippedBOM = false
        var k = 0
        for b in bytes {
            if !skippedBOM && k < 3 && (b == 0xEF || b == 0xBB || b == 0xBF) { k += 1; continue }
            skippedBOM = true
            if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { continue }
            return b == UInt8(ascii: "<")
        }
        return false
    }

    /// Reads all track points of a GPX document, in document order.
    ///
    /// - Throws: `XMLError` (line, column, what) for bad XML or a bad value in a point.
    /// - Complexity: O(n) in the size of the document; memory O(points).
    public func fixes(_ bytes: [UInt8]) throws(XMLError) -> [Fix] {
        var out: [Fix] = []
        try read(bytes) { out.append($0) }
        return out
    }

    /// Reads a GPX document, calling `onFix` for each track point in document order.
    ///
    /// - Throws: `XMLError` (line, column, what) for bad XML or a bad value in a point.
    /// - Complexity: O(n) in the size of the document.
    public func read(_ bytes: [UInt8], _ onFix: (Fix) -> Void) throws(XMLError) {
        // Text from outside is UTF-8 or refused (names and values would otherwise carry U+FFFD).
        if let e = StrictUTF8.firstError(in: bytes) {
            throw XMLError(message: "invalid UTF-8 (byte 0x\(String(e.byte, radix: 16, uppercase: true))); a GPX file must be UTF-8", line: e.line, column: e.column)
        }
        var scanner = XMLScanner(bytes)
        var sawGPX = false
        // Inside a trkpt: its depth in the element stack, the fix being built, which child is open.
        var pointDepth: Int? = nil
        var point = PointBuilder()
        var text = ""
        var textOffset = 0
        while let event = try scanner.next() {
            switch event {
            case .start(let name, let attributes, let offset):
                let local = name.xmlLocalName
                let depth = scanner.openElements.count  // includes this element
                if depth == 1 {
                    guard local == "gpx" else {
                        throw scanner.error("the root element is <\(name)>, expected <gpx>", at: offset)
                    }
                    sawGPX = true
                    if let v = attributes.first(where: { $0.name == "version" })?.value, v != "1.0" && v != "1.1" {
                        throw scanner.error("GPX version \(v) is not supported (1.0 and 1.1 are)", at: offset)
                    }
                }
                if pointDepth == nil, local == "trkpt", depth >= 2,
                   scanner.openElements[depth - 2].xmlLocalName == "trkseg" {
                    pointDepth = depth
                    point = PointBuilder()
                    point.offset = offset
                    try point.setPosition(attributes, scanner: scanner, at: offset)
                } else if pointDepth != nil {
                    text = ""
                    textOffset = offset
                }
            case .text(let t):
                if pointDepth != nil { text += t }
            case .end(let name):
                guard let pd = pointDepth else { continue }
                let depthAfter = scanner.openElements.count
                if depthAfter == pd - 1 {
                    onFix(point.fix(uere: uere))
                    pointDepth = nil
                } else {
                    try point.set(
                        name.xmlLocalName, text: text, direct: depthAfter == pd, scanner: scanner, at: textOffset)
                    text = ""
                }
            }
        }
        if !sawGPX { throw scanner.error("no <gpx> root element", at: 0) }
    }
}

/// The values of one `trkpt` collected so far.
struct PointBuilder {
    var offset = 0
    var coordinate: Coordinate?
    var fix = Fix()
    var modeGiven: FixMode?
    var speedIsDirect = false
    var courseIsDirect = false

    mutating func setPosition(_ attributes: [XMLAttribute], scanner: XMLScanner, at offset: Int) throws(XMLError) {
        func value(_ key: String) throws(XMLError) -> Double {
            guard let a = attributes.first(where: { $0.name.xmlLocalName == key }) else {
                throw scanner.error("<trkpt> has no \(key) attribute", at: offset)
            }
            guard let d = Double(a.value.trimmingSpaces), d.isFinite else {
                throw scanner.error("<trkpt> \(key)=\"\(a.value)\" is not a number", at: offset)
            }
            return d
        }
        let lat = try value("lat"), lon = try value("lon")
        guard abs(lat) <= 90 else { throw scanner.error("<trkpt> lat=\(lat) is outside -90...90", at: offset) }
        guard abs(lon) <= 180 else { throw scanner.error("<trkpt> lon=\(lon) is outside -180...180", at: offset) }
        coordinate = Coordinate(latitude: lat, longitude: lon)
    }

    /// A child element ended with `text`. `direct`: a child of the trkpt itself (not inside
    /// `extensions`).
    mutating func set(_ name: Substring, text: String, direct: Bool, scanner: XMLScanner, at offset: Int) throws(XMLError) {
        let t = text.trimmingSpaces
        func number() throws(XMLError) -> Double {
            guard let d = Double(t), d.isFinite else {
                throw scanner.error("<\(name)> \"\(t)\" is not a number", at: offset)
            }
            return d
        }
        switch name {
        case "ele" where direct: fix.altitudeMSL = try number()
        case "time" where direct:
            guard case let .success((instant, nanos)) = RFC3339.parse(t.utf8, lenient: true) else {
                throw scanner.error("<time> \"\(t)\" is not a timestamp like 2010-02-01T12:31:38Z", at: offset)
            }
            fix.time = instant
            fix.nanoseconds = nanos
        case "speed":
            if direct || !speedIsDirect {
                fix.speed = try number()
                speedIsDirect = direct
            }
        case "course":
            if direct || !courseIsDirect {
                fix.course = try number()
                courseIsDirect = direct
            }
        case "fix" where direct:
            switch t {
            case "none": modeGiven = FixMode.none
            case "2d": modeGiven = .twoD
            case "3d", "dgps", "pps": modeGiven = .threeD
            default: throw scanner.error("<fix> \"\(t)\" is not one of none, 2d, 3d, dgps, pps", at: offset)
            }
        case "sat" where direct:
            guard let n = Int(t), n >= 0 else { throw scanner.error("<sat> \"\(t)\" is not a count", at: offset) }
            fix.satellitesUsed = n
        case "hdop" where direct: fix.hdop = try number()
        default: break
        }
    }

    func fix(uere: Double) -> Fix {
        var f = fix
        f.coordinate = coordinate
        f.mode = modeGiven ?? .threeD
        f.isValid = f.mode >= .twoD
        if let h = f.hdop { f.horizontalError = h * uere }
        return f
    }
}

extension String {
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }
}
