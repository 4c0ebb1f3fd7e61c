// A recorded GPS log — NMEA 0183 or GPX — turned into fixes, for `fencepost replay`, `simulate`
// and the agent's replay source.
//
// NMEA logs are raw receiver captures or gpsd's regression `.log` files, whose lines beginning
// with '#' are comments. Comment lines are cut out here (the framer would skip them as garbage
// too, but a comment may quote a sentence); everything else goes to `NMEAStream` in large
// contiguous runs, so the cost is the stream's own.
import NMEA
import Position

/// The fixes of a recorded log, with what the NMEA framer counted.
public struct GPSLog: Sendable {
    public enum Format: String, Sendable { case nmea = "NMEA", gpx = "GPX" }
    public var format: Format
    public var fixes: [Fix]
    /// NMEA only: sentences accepted and rejected by the framer.
    public var sentences = 0
    public var rejectedSentences = 0

    public init(format: Format, fixes: [Fix], sentences: Int = 0, rejectedSentences: Int = 0) {
        self.format = format; self.fixes = fixes; self.sentences = sentences; self.rejectedSentences = rejectedSentences
    }

    /// Why bytes are not a GPS log.
    public enum ParseError: Error, CustomStringConvertible, Sendable {
        /// The file is XML but not readable GPX.
        case gpx(XMLError)
        /// The file is empty.
        case empty
        /// Neither an NMEA sentence nor XML.
        case notALog

        public var description: String {
            switch self {
            case .gpx(let e): "\(e)"
            case .empty: "not a GPS log: the file is empty"
            case .notALog: "not a GPS log: no NMEA sentence ($…*hh) and not GPX (XML)"
            }
        }
    }

    /// Reads a whole log: GPX when it looks like XML, else NMEA.
    ///
    /// - Parameter uere: user equivalent range error, metres (error = HDOP × UERE without GST).
    /// - Complexity: O(n) in the size of the log.
    public static func parse(_ bytes: [UInt8], uere: Double) throws(ParseError) -> GPSLog {
        if GPXReader.looksLikeXML(bytes) {
            do throws(XMLError) {
                return GPSLog(format: .gpx, fixes: try GPXReader(uere: uere).fixes(bytes))
            } catch {
                throw .gpx(error)
            }
        }
        let log = nmea(bytes, uere: uere)
        if log.sentences == 0 { throw bytes.isEmpty ? .empty : .notALog }
        return log
    }

    /// All fixes of an NMEA log, in order, with the framer's counts.
    ///
    /// - Complexity: O(n) in the size of the log.
    public static func nmea(_ bytes: [UInt8], uere: Double) -> GPSLog {
        var stream = NMEAStream(assembler: .init(uere: uere))
        var fixes: [Fix] = []
        bytes.withUnsafeBytes { raw in
            let n = raw.count
            var runStart = 0
            var i = 0
            while i < n {
                // `i` is at the start of a line.
                if raw[i] == UInt8(ascii: "#") {
                    if runStart < i {
                        stream.feed(UnsafeRawBufferPointer(rebasing: raw[runStart..<i])) { fixes.append($0) }
                    }
                    while i < n && raw[i] != 0x0A { i += 1 }
                    i += 1
                    runStart = i
                    continue
                }
                while i < n && raw[i] != 0x0A { i += 1 }
                i += 1
            }
            if runStart < n {
                stream.feed(UnsafeRawBufferPointer(rebasing: raw[runStart..<n])) { fixes.append($0) }
            }
        }
        stream.finish { fixes.append($0) }
        let c = stream.counters.framer
        return GPSLog(format: .nmea, fixes: fixes, sentences: c.sentences, rejectedSentences: c.rejected)
    }
}
