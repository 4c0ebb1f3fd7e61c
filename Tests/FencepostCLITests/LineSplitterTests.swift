@testable import fencepost
import Testing

/// The `--jsonl` line splitter, fed byte by byte, in chunks, and all at once.
@Suite struct LineSplitterTests {
    /// Lines come out the same whether the input arrives byte by byte, in chunks, or at once.
    @Test func lineSplitterIgnoresChunking() {
        let text = Array(("a\r\n\nbb\nccc\n" + String(repeating: "x", count: 40) + "\nlast").utf8)
        func split(chunk: Int) -> [String] {
            var splitter = LineSplitter(maximumLineLength: 16)
            var lines: [String] = []
            let collect = { (e: LineEvent) in
                switch e {
                case .line(let l): lines.append(String(decoding: l, as: UTF8.self))
                case .overlong: lines.append("<overlong>")
                }
            }
            var i = 0
            while i < text.count {
                let end = min(text.count, i + chunk)
                text[i..<end].withUnsafeBufferPointer { splitter.feed($0, collect) }
                i = end
            }
            splitter.finish(collect)
            return lines
        }
        let expected = ["a", "", "bb", "ccc", "<overlong>", "last"]
        for chunk in [1, 2, 3, 5, 7, 16, 17, 1000] { #expect(split(chunk: chunk) == expected, "chunk \(chunk)") }
    }
}
