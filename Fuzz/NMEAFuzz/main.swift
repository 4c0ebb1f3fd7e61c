// libFuzzer target for the NMEA framer, decoders and epoch assembler. Not part of the SwiftPM build:
// `Fuzz/run-nmea-fuzz.sh [seconds]` compiles it with `-sanitize=fuzzer,address` and runs it.
//
// Per input it checks, besides "no crash, no sanitizer report":
// - the stream gives the same fixes whole and split at input-chosen points (chunking invariance);
// - the framer with checksums optional hands out at least the sentences of the strict one;
// - every decoded report re-decodes identically (decoders are pure functions of the bytes).

import CivilTime
import NMEA
import Position

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)

    // Whole.
    var whole: [Fix] = []
    var a = NMEAStream()
    a.feed(bytes) { whole.append($0) }
    a.finish { whole.append($0) }

    // Split into chunks whose sizes come from the input itself.
    var split: [Fix] = []
    var b = NMEAStream()
    var i = 0
    var k = 0
    while i < size {
        let n = min(Int(data[k % max(size, 1)] % 17) + 1, size - i)
        b.feed(UnsafeRawBufferPointer(rebasing: bytes[i..<(i + n)])) { split.append($0) }
        i += n
        k += 1
    }
    b.finish { split.append($0) }
    if whole != split { fatalError("chunking changed the output") }
    if a.counters != b.counters { fatalError("chunking changed the counters") }

    // Strict vs lenient framer; decoders are deterministic.
    var strict = NMEAFramer(maximumLength: 82)
    var lenient = NMEAFramer(maximumLength: 82, acceptMissingChecksum: true)
    var decoder = NMEADecoder()
    var strictCount = 0
    strict.feed(bytes) { sentence in
        strictCount += 1
        var again = NMEADecoder()
        let first = decoder.decode(sentence).map { $0.report }
        let second = again.decode(sentence).map { $0.report }
        if first != second { fatalError("decoder not deterministic") }
    }
    var lenientCount = 0
    lenient.feed(bytes) { _ in lenientCount += 1 }
    if lenientCount < strictCount { fatalError("lenient framer accepted fewer sentences") }
    return 0
}
