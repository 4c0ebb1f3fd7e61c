import Position

/// Framer + decoders + epoch assembler in one call: bytes in, fixes out.
///
///     var stream = NMEAStream()
///     stream.feed(chunk) { fix in monitor.update(fix) }   // any chunking
///     stream.finish { fix in monitor.update(fix) }        // end of input: the last epoch
///
/// Noncopyable (it owns the framer's buffer). No allocation per sentence or per call.
public struct NMEAStream: ~Copyable {
    public private(set) var framer: NMEAFramer
    public private(set) var decoder = NMEADecoder()
    public private(set) var assembler: NMEAEpochAssembler

    /// All counters at once.
    public struct Counters: Hashable, Sendable {
        public var framer: NMEAFramerCounters
        public var decoder: NMEADecoderCounters
        public var assembler: NMEAEpochAssembler.Counters
    }

    public init(
        maximumLength: Int = 120, acceptMissingChecksum: Bool = false,
        assembler configuration: NMEAEpochAssembler.Configuration = .init()
    ) {
        framer = NMEAFramer(maximumLength: maximumLength, acceptMissingChecksum: acceptMissingChecksum)
        assembler = NMEAEpochAssembler(configuration: configuration)
    }

    public var counters: Counters {
        Counters(framer: framer.counters, decoder: decoder.counters, assembler: assembler.counters)
    }

    /// Consumes a chunk of the byte stream; calls `onFix` for each completed epoch.
    ///
    /// - Complexity: O(bytes.count).
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ onFix: (Fix) -> Void) {
        var decoder = self.decoder
        var assembler = self.assembler
        framer.feed(bytes) { sentence in
            if let (_, report) = decoder.decode(sentence) {
                assembler.add(report, onFix)
            }
        }
        self.decoder = decoder
        self.assembler = assembler
    }

    /// Ends the input: an unterminated last line is dropped (counted), the last epoch is emitted.
    public mutating func finish(_ onFix: (Fix) -> Void) {
        framer.finish()
        assembler.finish(onFix)
    }
}
