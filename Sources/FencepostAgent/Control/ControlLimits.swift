// The bounds of the control socket (design §8, "bounded everything"). A client can neither make
// the agent buffer without limit nor hold its descriptors for ever.
//
//   per connection                    bound
//   input buffered (LineFramer)       maximumMessageBytes + readsPerTurn × 64 KiB
//   output queued before input stops  maximumQueuedOutput (then one more answer, ≤ one page)
//   one answer                        a page: ≤ ControlPage.maximumBytes + one item
//   a started line                    requestTimeout to complete it
//   queued output                     writeTimeout without progress
//   nothing at all                    idleTimeout
//
//   connections                       min(maximumConnections, RLIMIT_NOFILE − reservedDescriptors);
//                                     at the cap the least recently active one is closed for a new one
//
// Worst case with the defaults: 128 × (64 KiB + 256 KiB + 64 KiB + ~320 KiB) ≈ 90 MB, inside the
// unit's MemoryMax=256M beside a mapped 1M-zone set (5.4 MB idle), but not beside a child building
// one (176 MB peak, same cgroup: Benchmarks/log/NOTES.md): the kernel would then end the
// largest process, the build, and the agent keeps its old set. Typical: a few KiB per connection.

/// Limits of the control socket's connections.
public struct ControlLimits: Sendable, Equatable {
    /// The most connections open at once.
    public var maximumConnections = 128
    /// Descriptors kept free for everything else (state file, GPS, hook pipes, …).
    public var reservedDescriptors = 32
    /// Output bytes queued on one connection above which its input is not read.
    public var maximumQueuedOutput = 64 * 1024
    /// Reads of 64 KiB from one connection per loop turn (the others get their turn).
    public var readsPerTurn = 4
    /// A line that has begun must end within this many nanoseconds.
    public var requestTimeout: UInt64 = 10_000_000_000
    /// Queued output must make progress within this many nanoseconds.
    public var writeTimeout: UInt64 = 10_000_000_000
    /// A connection with nothing going on is closed after this many nanoseconds.
    public var idleTimeout: UInt64 = 120_000_000_000

    public init() {}

    /// The connection cap under a descriptor limit of `descriptorLimit` (nil: unlimited).
    public func connectionCap(descriptorLimit: Int?) -> Int {
        guard let d = descriptorLimit else { return maximumConnections }
        return max(1, min(maximumConnections, d - reservedDescriptors))
    }
}
