// NMEA 0183 logs for `fencepost replay`: raw receiver captures and gpsd's regression `.log`
// files, whose lines beginning with '#' are comments. Comment lines are cut out here (the framer
// would skip them as garbage too, but a comment may quote a sentence); everything else goes to
// `NMEAStream` in large contiguous runs, so the cost is the stream's own.
import NMEA
import Position

enum ReplayNMEA {
    /// All fixes of an NMEA log, in order, with the framer's counts.
    ///
    /// - Complexity: O(n) in the size of the log.
    static func fixes(_ bytes: [UInt8], uere: Double) -> ReplayInput {
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
        return ReplayInput(format: .nmea, fixes: fixes, sentences: c.sentences, rejectedSentences: c.rejected)
    }
}
