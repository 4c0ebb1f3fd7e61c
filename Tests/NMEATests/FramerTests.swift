import Foundation
import NMEA
import Testing

/// Frames `text` (fed in chunks of `chunk` bytes, whole when 0) and returns the sentences and counters.
func frame(_ bytes: [UInt8], chunk: Int = 0, maximumLength: Int = 120, acceptMissingChecksum: Bool = false)
    -> (sentences: [String], counters: NMEAFramerCounters)
{
    var framer = NMEAFramer(maximumLength: maximumLength, acceptMissingChecksum: acceptMissingChecksum)
    var out: [String] = []
    bytes.withUnsafeBytes { all in
        let step = chunk == 0 ? max(all.count, 1) : chunk
        var i = 0
        while i < all.count {
            let n = min(step, all.count - i)
            framer.feed(UnsafeRawBufferPointer(rebasing: all[i..<(i + n)])) { out.append($0.text) }
            i += n
        }
    }
    framer.finish()
    return (out, framer.counters)
}

func frame(_ text: String, chunk: Int = 0, maximumLength: Int = 120, acceptMissingChecksum: Bool = false)
    -> (sentences: [String], counters: NMEAFramerCounters)
{
    frame(Array(text.utf8), chunk: chunk, maximumLength: maximumLength, acceptMissingChecksum: acceptMissingChecksum)
}

@Suite("framer")
struct FramerTests {
    static let gga = "$GPGGA,030719.000,3747.0873,S,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,0000*7D"
    static let ggaBody = "GPGGA,030719.000,3747.0873,S,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,0000"
    static let rmc = "$GPRMC,030719.000,A,3747.0873,S,17518.8938,E,0.69,181.39,311214,,,A*7D"

    @Test func crlfLfAndCrOnly() {
        for end in ["\r\n", "\n", "\r"] {
            let r = frame(Self.gga + end + Self.rmc + end)
            #expect(r.sentences.count == 2, "line end \(Array(end.utf8))")
            #expect(r.sentences.first == Self.ggaBody)
            #expect(r.counters.rejected == 0 && r.counters.garbageBytes == 0)
        }
    }

    @Test func everyChunkSizeGivesTheSameSentences() {
        let text = "junk\r\n" + Self.gga + "\r\n\0\0" + Self.rmc + "\n$GPGGA,1*00\n" + Self.gga + "\r\n"
        let whole = frame(text)
        for chunk in 1...40 {
            let r = frame(text, chunk: chunk)
            #expect(r.sentences == whole.sentences && r.counters == whole.counters, "chunk \(chunk)")
        }
    }

    @Test func leadingGarbageAndGarbagePrefix() {
        let r = frame("\u{1}\u{2}xyz garbage\r\nr" + Self.rmc + "\r\n")
        #expect(r.sentences.count == 1)
        #expect(r.counters.garbageBytes == 1 + 1 + 11 + 1)   // \1 \2 "xyz garbage" "r"
    }

    @Test func nulInsideASentenceDropsIt() {
        var bytes = Array((Self.gga + "\r\n").utf8)
        bytes[20] = 0
        let r = frame(bytes + Array((Self.rmc + "\r\n").utf8))
        #expect(r.sentences.count == 1)
        #expect(r.counters.nonPrintable == 1)
        // The rest of the broken line is garbage until the next `$`.
        #expect(r.counters.garbageBytes > 0)
    }

    @Test func nonAsciiByteDropsTheSentence() {
        var bytes = Array((Self.gga + "\r\n").utf8)
        bytes[30] = 0xE9
        #expect(frame(bytes).counters.nonPrintable == 1)
    }

    @Test func badChecksum() {
        let r = frame(Self.gga.replacingLast("7D", "7E") + "\r\n")
        #expect(r.sentences.isEmpty && r.counters.badChecksum == 1)
    }

    @Test func lowerCaseChecksumIsAccepted() {
        let line = "$GPRMC,205206.00,A,4405.556,N,12118.398,W,000.0,000.0,090605,0.0,E*49"
        #expect(frame(line.lowercasedChecksum() + "\r\n").sentences.count == 1)
    }

    @Test func truncatedChecksumIsBad() {
        // garmin48.log: a GSV cut after one checksum digit.
        let r = frame("$GPGSV,3,3,09,28,24,100,00*7\r\n")
        #expect(r.sentences.isEmpty && r.counters.badChecksum == 1)
    }

    @Test func splitChecksumAcrossReads() {
        let line = Array((Self.gga + "\r\n").utf8)
        let star = line.firstIndex(of: UInt8(ascii: "*"))!
        for cut in [star, star + 1, star + 2, star + 3] {
            var framer = NMEAFramer()
            var n = 0
            line.withUnsafeBytes { all in
                framer.feed(UnsafeRawBufferPointer(rebasing: all[..<cut])) { _ in n += 1 }
                framer.feed(UnsafeRawBufferPointer(rebasing: all[cut...])) { _ in n += 1 }
            }
            #expect(n == 1, "cut at \(cut)")
        }
    }

    @Test func doubledDollar() {
        // st-teseo-liv4f.log: every sentence starts with `$$`; the checksum covers the text after it.
        let r = frame("$" + Self.gga + "\r\n")
        #expect(r.sentences == [Self.ggaBody] && r.counters.rejected == 0)
    }

    @Test func missingChecksumRejectedByDefault() {
        let line = "$GPZDA,193223.00,23,12,2007,00,00\r\n"
        let strict = frame(line)
        #expect(strict.sentences.isEmpty && strict.counters.missingChecksum == 1)
        let lenient = frame(line, acceptMissingChecksum: true)
        #expect(lenient.sentences == ["GPZDA,193223.00,23,12,2007,00,00"])
        #expect(lenient.counters.acceptedWithoutChecksum == 1)
    }

    @Test func overlongLineDropped() {
        let long = "$GPTXT," + String(repeating: "A", count: 200)
        let line = long + "*" + checksumHex(String(long.dropFirst())) + "\r\n"
        let r = frame(line + Self.gga + "\r\n")
        #expect(r.sentences == [Self.ggaBody])
        #expect(r.counters.overlong == 1)
        // The same line fits a larger limit.
        #expect(frame(line, maximumLength: 300).sentences.count == 1)
        // 82 by the letter of the standard: a 74-byte GGA fits, 120 bytes do not.
        #expect(frame(Self.gga + "\r\n", maximumLength: 82).sentences.count == 1)
    }

    @Test func sentenceCutByANewDollar() {
        // isync.log: a sentence spliced into another.
        let r = frame("$GPGSV,3,1,12,17,72,2" + Self.gga + "\r\n")
        #expect(r.sentences == [Self.ggaBody] && r.counters.truncated == 1)
    }

    @Test func unterminatedLastLineCountsAsTruncated() {
        let r = frame(Self.gga + "\r\n" + "$GPGSV,3,3,12,11")
        #expect(r.sentences.count == 1 && r.counters.truncated == 1)
    }

    @Test func starsInsideTheDataAreData() {
        let body = "GPTXT,01,01,02,a*b"
        let r = frame("$" + body + "*" + checksumHex(body) + "\r\n")
        #expect(r.sentences == [body])
    }

    @Test func emptySentences() {
        let r = frame("$\r\n$$\r\n")
        #expect(r.sentences.isEmpty && r.counters.empty == 2)
    }

    @Test func randomBytesNeverCrashAndEveryByteIsAccounted() {
        var state: UInt64 = 42
        for _ in 0..<200 {
            var bytes: [UInt8] = []
            for _ in 0..<512 {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let r = UInt8(truncatingIfNeeded: state >> 56)
                // Bias towards the interesting bytes.
                bytes.append(r < 40 ? UInt8(ascii: "$") : r < 60 ? 0x0A : r < 70 ? UInt8(ascii: "*") : r)
            }
            _ = frame(bytes)
            _ = frame(bytes, chunk: 3, maximumLength: 12, acceptMissingChecksum: true)
        }
    }
}

func checksumHex(_ body: String) -> String {
    let x = body.utf8.reduce(UInt8(0), ^)
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(x >> 4)], digits[Int(x & 15)]])
}

extension String {
    func replacingLast(_ a: String, _ b: String) -> String {
        guard let r = range(of: a, options: .backwards) else { return self }
        return replacingCharacters(in: r, with: b)
    }
    func lowercasedChecksum() -> String {
        guard let star = lastIndex(of: "*") else { return self }
        return String(self[..<star]) + self[star...].lowercased()
    }
}
