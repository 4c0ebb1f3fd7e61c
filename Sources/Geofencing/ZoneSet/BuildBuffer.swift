// A growable array of plain values in one malloc'd block, for the zone-set builder's per-zone
// columns (a million rows of 4–80 bytes). It grows with `realloc`: glibc moves a large block by
// `mremap`, so growing never holds the old and the new copy resident together, as `Array`'s
// doubling does (its last doubling at 1M rows of 80 B held 80 MB twice). All the unsafe pointer
// work of the builder is in this one type.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif hasFeature(Embedded)
import CLibm
#endif

/// A growable buffer of trivial elements (no references), freed when the last owner lets go.
final class BuildBuffer<Element: BitwiseCopyable> {
    private(set) var base: UnsafeMutablePointer<Element>?
    private(set) var count = 0
    private var capacity = 0

    init() {}

    /// A buffer of `count` copies of `value`.
    init(repeating value: Element, count: Int) {
        guard count > 0 else { return }
        reserve(count)
        base!.initialize(repeating: value, count: count)
        self.count = count
    }

    deinit { free(base) }

    /// Appends `value`.
    /// - Complexity: amortised O(1) (growth by half again, by `realloc`).
    @inline(__always)
    func append(_ value: Element) {
        if count == capacity { reserve(Swift.max(1024, capacity + capacity / 2)) }
        (base! + count).initialize(to: value)
        count += 1
    }

    /// Appends the bytes of `values` (Element must be UInt8-sized for byte strings).
    func append(contentsOf values: UnsafeBufferPointer<Element>) {
        guard values.count > 0 else { return }
        if count + values.count > capacity { reserve(Swift.max(count + values.count, capacity + capacity / 2, 1024)) }
        (base! + count).initialize(from: values.baseAddress!, count: values.count)
        count += values.count
    }

    subscript(i: Int) -> Element {
        @inline(__always) get {
            assert(i >= 0 && i < count, "BuildBuffer index \(i) of \(count)")
            return base![i]
        }
        @inline(__always) set {
            assert(i >= 0 && i < count, "BuildBuffer index \(i) of \(count)")
            base![i] = newValue
        }
    }

    /// Keeps the first `n` elements and gives the rest of the block back.
    func truncate(to n: Int) {
        precondition(n >= 0 && n <= count)
        count = n
        shrink()
    }

    /// Frees the block.
    func removeAll() {
        free(base)
        base = nil
        count = 0
        capacity = 0
    }

    /// Gives unused capacity back (the block is cut with `realloc`).
    func shrink() {
        guard capacity > count else { return }
        if count == 0 { removeAll(); return }
        resize(count)
    }

    /// The elements as a buffer pointer, valid until the next change of the buffer.
    var elements: UnsafeMutableBufferPointer<Element> { UnsafeMutableBufferPointer(start: base, count: count) }

    /// The elements' bytes.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(elements) }

    private func reserve(_ n: Int) {
        guard n > capacity else { return }
        resize(n)
    }

    private func resize(_ n: Int) {
        let bytes = n * MemoryLayout<Element>.stride
        guard let p = realloc(base, Swift.max(bytes, 1)) else { fatalError("out of memory: \(bytes) bytes for a zone-set build") }
        base = p.bindMemory(to: Element.self, capacity: n)
        capacity = n
    }
}
