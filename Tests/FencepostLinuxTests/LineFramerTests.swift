import FencepostLinux
import SeededRandom
import Testing

/// The framer is pure: the same bytes give the same lines however they are chunked (swift-nio's
/// ByteToMessageDecoderVerifier idea), checked against a simple reference.
@Suite("line framer")
struct LineFramerTests {
    /// Feeds `input` in pieces of the given sizes (cycled) and collects everything.
    static func frame(_ input: [UInt8], max: Int, chunks: [Int]) -> [FramedLine] {
        var framer = LineFramer(maximumLineLength: max)
        var out: [FramedLine] = []
        var i = 0, k = 0
        while i < input.count {
            let n = Swift.min(chunks[k % chunks.count], input.count - i)
            framer.append(input[i..<(i + n)])
            while let line = framer.next() { out.append(line) }
            i += n
            k += 1
        }
        return out
    }

    /// The reference: split at every newline, then classify. A trailing piece without newline
    /// counts only if it is already too long.
    static func reference(_ input: [UInt8], max: Int) -> [FramedLine] {
        var out: [FramedLine] = []
        var pieces = input.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        let last = pieces.removeLast()
        for p in pieces { out.append(p.count > max ? .tooLong : .line(p)) }
        if last.count > max { out.append(.tooLong) }
        return out
    }

    @Test("whole, byte by byte and random chunks agree with the reference")
    func chunkingAgrees() {
        for seed: UInt64 in 1...300 {
            var rng = SplitMix64(seed: seed)
            let max = Int(rng.below(12))
            var input: [UInt8] = []
            for _ in 0..<Int(rng.below(30)) {
                let length = Int(rng.below(UInt64(max) * 2 + 3))
                input += (0..<length).map { _ in UInt8(65 + rng.below(26)) }
                if rng.below(6) != 0 { input.append(0x0A) }
            }
            if rng.below(3) == 0 { input += [0x0A, 0x0A] }
            let expected = Self.reference(input, max: max)
            #expect(Self.frame(input, max: max, chunks: [Swift.max(input.count, 1)]) == expected, "whole, seed \(seed)")
            #expect(Self.frame(input, max: max, chunks: [1]) == expected, "byte by byte, seed \(seed)")
            let sizes = (0..<17).map { _ in Int(rng.below(9)) + 1 }
            #expect(Self.frame(input, max: max, chunks: sizes) == expected, "chunks \(sizes), seed \(seed)")
        }
    }

    @Test("an over-long line is reported once, then discarded through its newline")
    func overLong() {
        var framer = LineFramer(maximumLineLength: 4)
        framer.append(Array("abcd\nabcde".utf8))
        #expect(framer.next() == .line(Array("abcd".utf8)))
        #expect(framer.next() == .tooLong)
        #expect(framer.next() == nil)
        framer.append(Array("fghij".utf8))
        #expect(framer.next() == nil)
        #expect(framer.bufferedCount == 0)
        framer.append(Array("xyz\n\nok\r\n".utf8))
        #expect(framer.next() == .line([]))
        #expect(framer.next() == .line(Array("ok\r".utf8)))
        #expect(framer.next() == nil)
    }

    @Test("a long stream of short lines keeps the buffer small")
    func bufferStaysSmall() {
        var framer = LineFramer(maximumLineLength: 100)
        var count = 0
        for i in 0..<10_000 {
            framer.append(Array("{\"id\":\(i)}\n".utf8))
            while case .line = framer.next() { count += 1 }
            #expect(framer.bufferedCount == 0)
        }
        #expect(count == 10_000)
    }

    @Test("an emptied buffer keeps a small capacity and frees a large one; a partial line stays")
    func releaseMemoryIfEmpty() {
        var framer = LineFramer(maximumLineLength: 100_000)
        framer.append(Array("{\"id\":1}\n".utf8))
        #expect(framer.next() != nil)
        framer.releaseMemoryIfEmpty(keeping: 4096)
        #expect(framer.bufferedCount == 0)
        #expect(framer.capacity > 0 && framer.capacity <= 4096, "capacity \(framer.capacity): a small buffer is reused")
        framer.append([UInt8](repeating: 0x78, count: 50_000) + [0x0A])
        #expect(framer.next() != nil)
        framer.releaseMemoryIfEmpty(keeping: 4096)
        #expect(framer.capacity == 0, "capacity \(framer.capacity) kept after a 50 kB line")
        framer.append(Array("partial".utf8))
        #expect(framer.next() == nil)
        framer.releaseMemoryIfEmpty(keeping: 0)
        #expect(framer.bufferedCount == 7)
        framer.append(Array("\n".utf8))
        #expect(framer.next() == .line(Array("partial".utf8)))
    }
}
