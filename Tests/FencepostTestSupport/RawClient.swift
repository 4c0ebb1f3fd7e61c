import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A raw client of the agent's control socket: it can send without reading, send part of a line,
/// and read a line with a deadline. Nonblocking; every wait is bounded.
public final class RawClient {
    public let fd: Int32

    /// Connects to `path`; nil when the connection is refused or the process is out of descriptors.
    public init?(_ path: String) {
        let s = TestSockets.connectUnix(path)
        guard s >= 0 else { return nil }
        _ = fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK)
        fd = s
    }

    deinit { Glibc.close(fd) }

    /// Sends as much of `bytes` as the socket takes now; returns the count sent (EAGAIN stops).
    @discardableResult
    public func sendSome(_ bytes: [UInt8]) -> Int {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            done += n
        }
        return done
    }

    /// Sends all of `text` + `\n`, waiting for room up to `timeout` seconds.
    public func sendLine(_ text: String, timeout: Double = 5) -> Bool {
        let bytes = Array((text + "\n").utf8)
        var done = 0
        let end = Date().addingTimeInterval(timeout)
        while done < bytes.count && Date() < end {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL)) }
            if n > 0 { done += n } else if errno == EAGAIN { usleep(1000) } else { return false }
        }
        return done == bytes.count
    }

    /// Reads one line (without `\n`), waiting at most `timeout` seconds; nil on timeout or close.
    public func readLine(timeout: Double) -> String? {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, 1, 0) }
            if n == 1 {
                if chunk[0] == 0x0A { return String(decoding: out, as: UTF8.self) }
                out.append(chunk[0])
                // Take the rest in large reads up to the newline.
                let m = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, 65_536, Int32(MSG_PEEK)) }
                if m > 0, let nl = chunk[..<m].firstIndex(of: 0x0A) {
                    _ = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, nl + 1, 0) }
                    out.append(contentsOf: chunk[..<nl])
                    return String(decoding: out, as: UTF8.self)
                } else if m > 0 {
                    _ = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, m, 0) }
                    out.append(contentsOf: chunk[..<m])
                }
                continue
            }
            if n == 0 { return nil }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 20)
        }
        return nil
    }

    /// Reads what has arrived, at most `maximum` bytes, without waiting: the bytes (possibly
    /// none), or nil when the agent closed the connection.
    public func readAvailable(maximum: Int) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: maximum)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, maximum, 0) }
        if n == 0 || (n < 0 && errno != EAGAIN) { return nil }
        return n < 0 ? [] : Array(chunk[..<n])
    }

    /// Whether the agent closed this connection (EOF or reset) within `timeout` seconds; input
    /// that arrives meanwhile is read and dropped.
    public func isClosed(within timeout: Double) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, 65_536, 0) }
            if n == 0 || (n < 0 && errno != EAGAIN) { return true }
            if n < 0 { var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0); _ = poll(&p, 1, 20) }
        }
        return false
    }
}
