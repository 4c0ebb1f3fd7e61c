// Line-oriented I/O for `--jsonl`: big read(2) chunks split into lines by hand, and one buffered
// writer over write(2). Per-line `readLine()`/`print` would cost more than answering the line.
import FencepostLinux

/// What the reader hands out.
enum LineEvent {
    /// One line without its terminator (`\n`, or `\r\n`). Valid only during the callback.
    case line(UnsafeBufferPointer<UInt8>)
    /// A line longer than the limit; its bytes were dropped up to and including its newline.
    case overlong
}

/// Splits a byte stream into lines.
///
/// The buffer holds at most `maximumLineLength` bytes of one line, so memory stays bounded whatever
/// the input; an overlong line is reported as `.overlong` and skipped. A final line without a
/// newline is still a line. Pure with respect to the source: `feed` takes bytes, so tests can feed
/// byte by byte, in chunks, or all at once.
struct LineSplitter {
    let maximumLineLength: Int
    /// Bytes of the current, incomplete line.
    private var pending: [UInt8] = []
    /// True while skipping the rest of an overlong line.
    private var discarding = false

    init(maximumLineLength: Int = 1 << 20) { self.maximumLineLength = maximumLineLength }

    /// Splits `chunk`, calling `body` for every line completed in it.
    ///
    /// - Complexity: O(n) in the chunk length; lines inside the chunk are not copied.
    mutating func feed<E: Error>(_ chunk: UnsafeBufferPointer<UInt8>, _ body: (LineEvent) throws(E) -> Void) throws(E) {
        var start = 0
        let n = chunk.count
        var i = 0
        while i < n {
            guard let nl = Self.indexOfNewline(chunk, from: i) else { break }
            if discarding {
                discarding = false
                try body(.overlong)
            } else if pending.isEmpty {
                try emit(UnsafeBufferPointer(rebasing: chunk[start..<nl]), body)
            } else {
                pending.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[start..<nl]))
                if pending.count > maximumLineLength {
                    try body(.overlong)
                } else {
                    try pending.withUnsafeBufferPointer { (p) throws(E) in try emit(p, body) }
                }
                pending.removeAll(keepingCapacity: true)
            }
            i = nl + 1
            start = i
        }
        // The rest is the beginning of a line that continues in the next chunk.
        if start < n && !discarding {
            pending.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[start..<n]))
            if pending.count > maximumLineLength {
                pending.removeAll(keepingCapacity: false)
                discarding = true
            }
        }
    }

    /// Ends the input: a last line without a newline is handed out.
    mutating func finish<E: Error>(_ body: (LineEvent) throws(E) -> Void) throws(E) {
        if discarding {
            discarding = false
            try body(.overlong)
        } else if !pending.isEmpty {
            try pending.withUnsafeBufferPointer { (p) throws(E) in try emit(p, body) }
        }
        pending.removeAll()
    }

    private func emit<E: Error>(_ line: UnsafeBufferPointer<UInt8>, _ body: (LineEvent) throws(E) -> Void) throws(E) {
        if line.count > maximumLineLength { try body(.overlong); return }
        if let last = line.last, last == UInt8(ascii: "\r") {
            try body(.line(UnsafeBufferPointer(rebasing: line[..<(line.count - 1)])))
        } else {
            try body(.line(line))
        }
    }

    @inline(__always)
    private static func indexOfNewline(_ b: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        var i = from
        while i < b.count {
            if b[i] == 0x0A { return i }
            i += 1
        }
        return nil
    }
}

/// Reads a file descriptor to its end in large chunks and hands out lines.
struct LineReader {
    let fd: FileDescriptor
    let chunkSize: Int
    var splitter: LineSplitter

    init(fd: FileDescriptor, chunkSize: Int = 256 * 1024, maximumLineLength: Int = 1 << 20) {
        self.fd = fd
        self.chunkSize = chunkSize
        self.splitter = LineSplitter(maximumLineLength: maximumLineLength)
    }

    /// Calls `body` for each line until end of file, and `afterChunk` after the lines of each chunk
    /// (the place to flush output, so that a coprocess that writes one line and waits gets its
    /// answer, while a pipe full of lines is answered in large writes).
    mutating func run(_ body: (LineEvent) throws(Errno) -> Void, afterChunk: () throws(Errno) -> Void) throws(Errno) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = try fd.read(into: buffer)
            if n == 0 { break }
            let bytes = UnsafeBufferPointer(start: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n)
            try splitter.feed(bytes, body)
            try afterChunk()
        }
        try splitter.finish(body)
        try afterChunk()
    }
}

/// One output buffer over write(2): callers append bytes to `buffer`, `flush` writes them out.
struct BufferedWriter {
    let fd: FileDescriptor
    var buffer: [UInt8] = []
    /// Flush once this many bytes are pending, even in the middle of a chunk.
    let highWater: Int

    init(fd: FileDescriptor, highWater: Int = 64 * 1024) {
        self.fd = fd
        self.highWater = highWater
        buffer.reserveCapacity(highWater + 4096)
    }

    mutating func flushIfFull() throws(Errno) {
        if buffer.count >= highWater { try flush() }
    }

    mutating func flush() throws(Errno) {
        guard !buffer.isEmpty else { return }
        let result = buffer.withUnsafeBytes { raw in
            Result { () throws(Errno) in try fd.writeAll(raw) }
        }
        buffer.removeAll(keepingCapacity: true)
        try result.get()
    }
}
