// A `sockaddr_un`: a socket path, or a name in the abstract namespace (Linux; written `@name`).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFencepostLinux

/// The address of a Unix-domain socket.
public struct UnixSocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// A file system path, or an abstract name (no file; gone with the last socket).
    public enum Kind: Hashable, Sendable {
        case path(String)
        case abstract(String)
    }

    public let kind: Kind

    /// The most bytes of a path or abstract name (`sun_path` is 108 bytes, one kept for the NUL).
    public static let maximumLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// A socket path; nil when it is empty or longer than ``maximumLength`` bytes.
    public init?(path: String) {
        guard !path.isEmpty, path.utf8.count <= Self.maximumLength, !path.utf8.contains(0) else { return nil }
        kind = .path(path)
    }

    /// An abstract name (without the leading `@` or NUL); nil when longer than ``maximumLength``.
    public init?(abstract name: String) {
        guard name.utf8.count <= Self.maximumLength else { return nil }
        kind = .abstract(name)
    }

    /// systemd's spelling: `@name` is abstract, anything else a path.
    public init?(systemdSpelling text: String) {
        if text.hasPrefix("@") { self.init(abstract: String(text.dropFirst())) } else { self.init(path: text) }
    }

    /// `@name` for an abstract name, else the path.
    public var description: String {
        switch kind {
        case .path(let p): p
        case .abstract(let n): "@" + n
        }
    }

    /// Calls `body` with the `sockaddr_un` and its length: `offsetof(sun_path)` plus the path and
    /// its NUL, or plus the NUL and the abstract name (no terminator: every byte counts).
    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes: [UInt8]
        switch kind {
        case .path(let p): bytes = Array(p.utf8) + [0]
        case .abstract(let n): bytes = [0] + Array(n.utf8)
        }
        let pathOffset = Int(cfl_sun_path_offset)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        let length = socklen_t(pathOffset + bytes.count)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
