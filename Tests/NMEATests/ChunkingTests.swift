import NMEA
import Position
import Testing
import SeededRandom

/// The same bytes give the same fixes however they are split (swift-nio's
/// ByteToMessageDecoderVerifier idea): whole, byte by byte, and in seeded random chunks.
@Suite("chunking")
struct ChunkingTests {
    /// SplitMix64: chunk sizes 1…`limit` from a seed.
    static func chunkSizes(seed: UInt64, count: Int = 257, limit: UInt64 = 97) -> [Int] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in Int(rng.next() % limit) + 1 }
    }

    @Test("every gpsd log: whole, byte by byte and random chunks agree",
          .enabled(if: GpsdLogs.available, "gpsd logs not found at \(GpsdLogs.folder.path)"))
    func everyLog() throws {
        var fixes = 0
        for name in GpsdLogs.names {
            let bytes = try GpsdLogs.input(name)
            let whole = GpsdLogs.fixes(bytes)
            fixes += whole.count
            #expect(GpsdLogs.fixes(bytes, chunks: [1]) == whole, "\(name): byte by byte differs")
            for seed: UInt64 in [1, 2, 3] {
                #expect(GpsdLogs.fixes(bytes, chunks: Self.chunkSizes(seed: seed &* 0x5EED ^ UInt64(bytes.count))) == whole,
                        "\(name): random chunks (seed \(seed)) differ")
            }
        }
        #expect(fixes > 1000)
    }
}
