// What the caller gets back from the event loop for a ready descriptor: a token of its choosing.

/// A value that identifies a registered descriptor to its owner, carried through epoll's 64-bit
/// `data` field. The caller picks the type: `UInt64`, or a small enum of its event sources
/// (`case signals, monotonicTimer, serial, connection(UInt32)`) that packs into 64 bits.
public protocol EventToken {
    /// The 64 bits stored in the kernel with the registration.
    var epollData: UInt64 { get }
    /// The token back from those 64 bits.
    init(epollData: UInt64)
}

extension UInt64: EventToken {
    @inlinable public var epollData: UInt64 { self }
    @inlinable public init(epollData: UInt64) { self = epollData }
}
