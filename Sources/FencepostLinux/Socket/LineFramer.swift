// Lines out of a byte stream (the control channel: JSON-RPC, one message a line). Pure: bytes in,
// lines out; the connection feeds it whatever each read returned.

/// One result of a ``LineFramer``.
public enum FramedLine: Hashable, Sendable {
    /// A complete line, without its `\n` (a `\r` before it is kept).
    case line([UInt8])
    /// A line longer than the limit. Reported once; its bytes are dropped up to and including
    /// the next `\n`.
    case tooLong
}

/// Splits a byte stream at `\n` with a bound on the line length, so a peer cannot make the
/// daemon buffer without limit. The output does not depend on how the input was chunked.
public struct LineFramer: Sendable {
    /// The longest line accepted, newline not counted.
    public let maximumLineLength: Int
    /// Bytes not yet handed out: `buffer[head...]`.
    private var buffer: [UInt8] = []
    private var head = 0
    /// Where the search for `\n` resumes (bytes before it hold none).
    private var scanned = 0
    /// Inside an over-long line already reported: drop bytes through the next `\n`.
    private var discarding = false

    public init(maximumLineLength: Int) {
        precondition(maximumLineLength >= 0)
        self.maximumLineLength = maximumLineLength
    }

    /// Bytes buffered and not yet part of a returned line.
    public var bufferedCount: Int { buffer.count - head }

    /// Bytes allocated for the buffer (what the framer costs in memory).
    public var capacity: Int { buffer.capacity }

    /// Empties the buffer when every byte was handed out: a capacity up to `keeping` bytes is kept
    /// for the next request (no allocation per request), a larger one is freed (an idle
    /// connection keeps no more than that). A partial line is kept.
    public mutating func releaseMemoryIfEmpty(keeping: Int = 4096) {
        guard head == buffer.count, head > 0 || buffer.capacity > keeping else { return }
        buffer.removeAll(keepingCapacity: buffer.capacity <= keeping)
        head = 0
        scanned = 0
        _checkInvariants()
    }

    /// Adds bytes; take the lines out with ``next()`` until it returns nil.
    /// - Complexity: amortized O(bytes.count).
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if head > 0 && head >= buffer.count / 2 {
            buffer.removeFirst(head)
            scanned -= head
            head = 0
        }
        buffer.append(contentsOf: bytes)
        _checkInvariants()
    }

    /// The next line or over-long report, or nil when more input is needed.
    /// - Complexity: O(bytes scanned); each byte is scanned once.
    public mutating func next() -> FramedLine? {
        defer {
            _checkInvariants()
            #if DEBUG
            precondition(!discarding || head == buffer.count, "LineFramer keeps bytes of a discarded line")
            #endif
        }
        while true {
            let newline = buffer[scanned...].firstIndex(of: 0x0A)
            if discarding {
                guard let newline else {
                    head = buffer.count
                    scanned = buffer.count
                    return nil
                }
                head = newline + 1
                scanned = head
                discarding = false
                continue
            }
            if let newline {
                let length = newline - head
                let start = head
                head = newline + 1
                scanned = head
                if length > maximumLineLength { return .tooLong }
                return .line(Array(buffer[start..<newline]))
            }
            scanned = buffer.count
            if buffer.count - head > maximumLineLength {
                head = buffer.count
                discarding = true
                return .tooLong
            }
            return nil
        }
    }

    /// Debug builds only: the indices stay ordered (swift-collections' habit).
    @inline(__always)
    private func _checkInvariants() {
        #if DEBUG
        precondition(0 <= head && head <= scanned && scanned <= buffer.count, "LineFramer indices out of order")
        #endif
    }
}
