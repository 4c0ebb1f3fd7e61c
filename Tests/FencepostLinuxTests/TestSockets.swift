import FencepostLinux
import Foundation
import Glibc

/// Raw Glibc sockets for the test side, written independently of the code under test.
enum TestSockets {
    /// A private directory for socket files (paths stay well under 108 bytes).
    static func makeDirectory(mode: mode_t = 0o755) throws -> String {
        let path = "/tmp/fp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard mkdir(path, mode) == 0 else { throw Errno.current }
        chmod(path, mode)
        return path
    }

    static func removeDirectory(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// `sockaddr_un` for a path, or for an abstract name when `abstract` (leading NUL, no terminator).
    static func withAddress<R>(_ name: String, abstract: Bool = false, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = abstract ? [0] + Array(name.utf8) : Array(name.utf8) + [0]
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        return withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
    }

    /// A bound datagram socket with a receive timeout, to play systemd's side of sd_notify.
    static func boundDatagram(_ name: String, abstract: Bool = false) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Errno.current }
        guard withAddress(name, abstract: abstract, { bind(fd, $0, $1) }) == 0 else { let e = Errno.current; close(fd); throw e }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// One datagram as text (waits up to the receive timeout).
    static func receiveDatagram(_ fd: Int32) throws -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n >= 0 else { throw Errno.current }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }

    /// Whether a datagram is waiting, without blocking.
    static func hasDatagram(_ fd: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 1
    }

    /// A blocking stream client connected to `path`.
    static func connectStream(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Errno.current }
        guard withAddress(path, { connect(fd, $0, $1) }) == 0 else { let e = Errno.current; close(fd); throw e }
        return fd
    }
}
