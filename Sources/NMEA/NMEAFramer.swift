// NMEA 0183 framing: bytes in, checksum-verified sentences out.
//
// The problem (as in gpsd's packet.c): a serial port or a log hands us bytes, not sentences. A read
// returns whatever arrived — half a sentence, three and a half, a lone CR. Before the receiver's
// first full sentence there is leading garbage (the tail of a sentence cut by the port opening, a
// boot banner, line noise at the wrong baud rate, NULs). Lines get corrupted (a bit flip, two
// sentences spliced by a buffer overrun), cut short, or never terminated. So the framer is a
// byte-at-a-time lexer with a little state that survives between calls:
//
//   hunting  --'$'-->  in sentence  --CR/LF-->  verify checksum --> hand out | count the rejection
//      ^                  |  '$' again: the line was cut; count it, start over at the new '$'
//      |                  |  NUL / non-printable byte: count it, drop the line, back to hunting
//      +------------------+  more than `maximumLength` bytes: count it, drop until the line end
//
// Decisions, with their reasons:
// - A sentence starts at any `$`, also in the middle of a line, so `r$GPRMC,…` (garbage before the
//   `$`) still yields the RMC. Bytes outside sentences are counted as garbage (line ends are not).
// - gpsd's doubled `$$GPGGA,…` (some ST Teseo firmware) is one sentence: a `$` right after `$` is
//   skipped. The checksum covers the text after the last `$`, so it verifies unchanged.
// - Either CR or LF ends a line (CR LF, LF alone, CR alone); an empty line is nothing.
// - Checksum: `*` and exactly two hex digits (either case) must end the line; their value must be
//   the XOR of the bytes between `$` and `*`. A sentence WITHOUT `*hh` is rejected and counted
//   (`missingChecksum`) unless `acceptMissingChecksum` is set: a serial line has no other integrity
//   check, a truncated line looks exactly like a checksum-less one, and gpsd 3.27 drops them too
//   (its regression log hp58534a, a receiver that never sends checksums, yields nothing).
// - Length: the standard allows 82 characters from `$` to LF inclusive. Real receivers exceed it
//   (u-blox high-precision GGA, NMEA 4.11 GSV with signal ids: ~90), so the limit is 120 by default
//   (`maximumLength`, counted from `$` to the last checksum digit). A longer line is dropped whole
//   and counted (`overlong`): it is far more likely two spliced sentences than a real one.
//
// Cost: one pass over the bytes, eight at a time where they are plain text (SWAR), the checksum
// is XORed on the way, each sentence is copied into a fixed buffer allocated once at initialization and handed out as a borrowed `NMEASentence`. No
// allocation per sentence or per call.

/// Counters of what the framer saw. Every byte ends up in exactly one sentence (accepted or
/// rejected) or in `garbageBytes` / line ends.
public struct NMEAFramerCounters: Hashable, Sendable {
    /// Sentences handed out (checksum verified, or missing and accepted by configuration).
    public var sentences = 0
    /// Bytes outside any sentence (not counting CR, LF). 64 bits on every machine: a line of
    /// noise at 115200 baud passes 2^31 bytes in two days (the sentence counters, at most a few
    /// dozen a second, would take years).
    public var garbageBytes: Int64 = 0
    /// Sentences whose checksum did not match or was malformed (`*` not followed by two hex digits).
    public var badChecksum = 0
    /// Sentences without `*hh` (rejected unless `acceptMissingChecksum`).
    public var missingChecksum = 0
    /// Of `sentences`: those accepted without a checksum.
    public var acceptedWithoutChecksum = 0
    /// Lines longer than `maximumLength`.
    public var overlong = 0
    /// Sentences that contained a NUL or other non-printable byte.
    public var nonPrintable = 0
    /// Sentences cut by a new `$` before their line end (two sentences spliced, a lost line end).
    public var truncated = 0
    /// Sentences with nothing after the `$` (`$` then a line end).
    public var empty = 0

    public init() {}

    /// All rejected sentences.
    public var rejected: Int { badChecksum + missingChecksum + overlong + nonPrintable + truncated + empty }
}

/// Splits a byte stream into NMEA 0183 sentences. See the file header for the rules.
///
/// Noncopyable: it owns a fixed buffer, allocated once in `init` and freed in `deinit`.
public struct NMEAFramer: ~Copyable {
    /// Longest sentence accepted, from `$` to the last checksum digit (the standard's 82 includes
    /// CR LF, so 80 by the letter; 120 leaves room for real receivers).
    public let maximumLength: Int
    /// Hand out sentences that have no `*hh` (counted in `acceptedWithoutChecksum`).
    public let acceptMissingChecksum: Bool
    public private(set) var counters = NMEAFramerCounters()

    /// Sentence bytes after the `$`; capacity `maximumLength`.
    private let buffer: UnsafeMutablePointer<UInt8>
    private var length = 0
    private var state = State.hunting
    /// XOR of the bytes since `$`, up to the last `*`.
    private var checksum: UInt8 = 0
    /// Position of the last `*` in `buffer`, or -1.
    private var starIndex = -1

    private enum State: UInt8 {
        /// Outside a sentence: looking for `$`.
        case hunting
        /// Just after `$`.
        case started
        /// Inside a sentence.
        case inSentence
        /// Dropping the rest of an overlong line until its end.
        case skippingOverlong
    }

    /// - Parameters:
    ///   - maximumLength: longest sentence from `$` to its last checksum digit; 12…1024.
    ///   - acceptMissingChecksum: hand out sentences without `*hh` instead of rejecting them.
    public init(maximumLength: Int = 120, acceptMissingChecksum: Bool = false) {
        precondition((12...1024).contains(maximumLength), "maximumLength must be 12…1024")
        self.maximumLength = maximumLength
        self.acceptMissingChecksum = acceptMissingChecksum
        buffer = .allocate(capacity: maximumLength)
    }

    deinit { buffer.deallocate() }

    /// Consumes `bytes` (any chunk of the stream) and calls `onSentence` for each complete,
    /// verified sentence. The sentence is a view into the framer's buffer, valid only during the
    /// call.
    ///
    /// - Complexity: O(bytes.count); no allocation.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ onSentence: (NMEASentence) -> Void) {
        guard let start = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let n = bytes.count
        let cap = maximumLength - 1   // `$` is not stored
        let buf = buffer
        var i = 0
        while i < n {
            if state == .inSentence {
                // Hot path: copy plain bytes (printable, not `$` or `*`) with the state in registers.
                var len = length
                var sum = checksum
                // Eight bytes at a time while they are all plain (SWAR: one 64-bit load, test,
                // unaligned store and XOR per eight bytes), then byte by byte.
                var words: UInt64 = 0
                while i &+ 8 <= n && len &+ 8 <= cap {
                    let x = UnsafeRawPointer(start + i).loadUnaligned(as: UInt64.self)
                    guard Self.allPlain(x) else { break }
                    UnsafeMutableRawPointer(buf + len).storeBytes(of: x, as: UInt64.self)
                    words ^= x
                    i &+= 8
                    len &+= 8
                }
                words ^= words >> 32
                words ^= words >> 16
                words ^= words >> 8
                sum ^= UInt8(truncatingIfNeeded: words)
                while i < n {
                    let b = start[i]
                    guard Self.isPlain(b), len < cap else { break }
                    buf[len] = b
                    len &+= 1
                    sum ^= b
                    i &+= 1
                }
                length = len
                checksum = sum
                if i == n { break }
                let b = start[i]
                i &+= 1
                if Self.isPlain(b) {   // no room left: the line is too long
                    state = .skippingOverlong
                } else {
                    handleSpecial(b, onSentence)
                }
                continue
            }
            let b = start[i]
            i &+= 1
            switch state {
            case .hunting:
                if b == UInt8(ascii: "$") {
                    state = .started
                } else if b != 0x0D && b != 0x0A {
                    counters.garbageBytes += 1
                }
            case .started:
                if b == UInt8(ascii: "$") { continue }   // `$$`: gpsd's doubled start
                length = 0; checksum = 0; starIndex = -1
                state = .inSentence
                if Self.isPlain(b) {
                    buf[0] = b
                    length = 1
                    checksum = b
                } else {
                    handleSpecial(b, onSentence)
                }
            case .skippingOverlong:
                if b == 0x0D || b == 0x0A {
                    counters.overlong += 1
                    state = .hunting
                } else if b == UInt8(ascii: "$") {
                    // A new sentence inside an overlong line: the overlong part is dropped.
                    counters.overlong += 1
                    state = .started
                }
            case .inSentence:
                preconditionFailure("handled above")
            }
        }
        _checkInvariants()
    }

    /// Whether all eight bytes of `x` are plain (see `isPlain`). Exact, from the bit tricks in
    /// "Bit Twiddling Hacks" (haszero, hasless, hasmore).
    @inline(__always)
    private static func allPlain(_ x: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZero(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }
        let below20 = (x &- ones &* 0x20) & ~x & highs             // some byte < 0x20
        let above7E = ((x &+ ones &* (127 - 0x7E)) | x) & highs     // some byte > 0x7E
        return below20 | above7E == 0
            && !hasZero(x ^ (ones &* UInt64(UInt8(ascii: "$"))))
            && !hasZero(x ^ (ones &* UInt64(UInt8(ascii: "*"))))
    }

    /// Printable ASCII other than `$` and `*`: a byte stored without further thought.
    @inline(__always)
    private static func isPlain(_ b: UInt8) -> Bool {
        b &- 0x20 < 0x5F && b != UInt8(ascii: "$") && b != UInt8(ascii: "*")
    }

    /// Ends the stream: an unterminated last sentence is counted as truncated, and the framer is
    /// ready for a new stream.
    public mutating func finish() {
        switch state {
        case .inSentence, .started: counters.truncated += 1
        case .skippingOverlong: counters.overlong += 1
        case .hunting: break
        }
        state = .hunting
        length = 0
    }

    /// Clears the counters (the framing state is kept).
    public mutating func resetCounters() { counters = NMEAFramerCounters() }

    /// `$`, `*`, CR, LF, and non-printable bytes inside a sentence.
    private mutating func handleSpecial(_ b: UInt8, _ onSentence: (NMEASentence) -> Void) {
        switch b {
        case UInt8(ascii: "*"):
            if length == maximumLength - 1 { state = .skippingOverlong; return }
            // The checksum covers the bytes before the last `*`; an earlier `*` is data. (`*` itself
            // is never XORed in when it arrives; the bytes after it are, and come out at the end.)
            if starIndex >= 0 { checksum ^= UInt8(ascii: "*") }
            starIndex = length
            buffer[length] = b
            length += 1
        case 0x0D, 0x0A:
            state = .hunting
            endOfLine(onSentence)
        case UInt8(ascii: "$"):
            if length == 0 { counters.empty += 1 } else { counters.truncated += 1 }
            state = .started
        default:
            // Plain bytes never get here (the caller stores them): this is a control or non-ASCII byte.
            counters.nonPrintable += 1
            state = .hunting
        }
    }

    private mutating func endOfLine(_ onSentence: (NMEASentence) -> Void) {
        if length == 0 { counters.empty += 1; return }
        guard starIndex >= 0 else {
            counters.missingChecksum += 1
            if acceptMissingChecksum {
                counters.sentences += 1
                counters.acceptedWithoutChecksum += 1
                onSentence(NMEASentence(base: UnsafePointer(buffer), count: length))
            }
            return
        }
        // The bytes after the last `*` were XORed in; take them out again.
        var sum = checksum
        for k in (starIndex + 1)..<length { sum ^= buffer[k] }
        guard length - starIndex == 3,
              let hi = hexValue(buffer[starIndex + 1]), let lo = hexValue(buffer[starIndex + 2]),
              hi << 4 | lo == sum
        else {
            counters.badChecksum += 1
            return
        }
        counters.sentences += 1
        onSentence(NMEASentence(base: UnsafePointer(buffer), count: starIndex))
    }

    @inline(__always)
    private func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    @inline(__always)
    private func _checkInvariants() {
        #if DEBUG
        precondition(length >= 0 && length < maximumLength, "framer length out of range")
        precondition(starIndex < length, "framer star index out of range")
        #endif
    }
}
