import NMEA
import Position
import Testing

/// The same bytes give the same fixes however they are split (swift-nio's
/// ByteToMessageDecoderVerifier idea): whole, byte by byte, and in seeded random chunks.
@Suite("chunking")
struct ChunkingTests {
    /// SplitMix64: chunk sizes 1…`limit` from a seed.
    static func chunkSizes(seed: UInt64, count: Int = 257, limit: UInt64 = 97) -> [Int] {
        var state = seed
        return (0..<count).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            return Int(z % limit) + 1
        }
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
