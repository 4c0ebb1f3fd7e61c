// Two sequences one after the other, without type erasure (AnySequence boxes each in a class and
// is not in Embedded Swift's standard library). The standard library's `joined()` needs one
// element type of sequence; swift-algorithms' `chain` is this, and not worth a dependency.

/// The elements of `first`, then those of `second`; each iterated once, lazily.
struct Concatenation<First: Sequence, Second: Sequence<First.Element>>: Sequence {
    let first: First
    let second: Second

    struct Iterator: IteratorProtocol {
        var first: First.Iterator
        var second: Second.Iterator
        var inSecond = false

        mutating func next() -> First.Element? {
            if !inSecond {
                if let e = first.next() { return e }
                inSecond = true
            }
            return second.next()
        }
    }

    func makeIterator() -> Iterator { Iterator(first: first.makeIterator(), second: second.makeIterator()) }
}
