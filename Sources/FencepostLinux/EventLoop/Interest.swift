// What a registration waits for.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux

/// The conditions a descriptor is watched for. Errors and full hang-ups (`EPOLLERR`, `EPOLLHUP`)
/// are always reported, whatever the interest.
public struct Interest: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32

    @inlinable
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Data to read, or a connection to accept (`EPOLLIN`).
    public static let readable = Interest(rawValue: UInt32(EPOLLIN.rawValue))
    /// Room to write (`EPOLLOUT`).
    public static let writable = Interest(rawValue: UInt32(EPOLLOUT.rawValue))
    /// The peer closed its writing half (`EPOLLRDHUP`).
    public static let hangup = Interest(rawValue: UInt32(EPOLLRDHUP.rawValue))
}
