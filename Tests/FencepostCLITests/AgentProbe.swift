import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A raw control-socket client for abuse tests: it can send without reading, send part of a
/// line, and read with a deadline. Nonblocking; every wait is bounded.
final class RawClient {
    let fd: Int32

    /// Connects to `path`; nil when the connection is refused or the process is out of descriptors.
    init?(_ path: String) {
        let s = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard s >= 0 else { return nil }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() where i < raw.count - 1 { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { Glibc.close(s); return nil }
        _ = fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK)
        fd = s
    }

    deinit { Glibc.close(fd) }

    /// Sends as much of `bytes` as the socket takes now; returns the count sent (EAGAIN stops).
    @discardableResult
    func sendSome(_ bytes: [UInt8]) -> Int {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            done += n
        }
        return done
    }

    /// Sends all of `text` + `\n`, waiting for room up to `timeout` seconds.
    func sendLine(_ text: String, timeout: Double = 5) -> Bool {
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
    func readLine(timeout: Double) -> String? {
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
    func readAvailable(maximum: Int) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: maximum)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, maximum, 0) }
        if n == 0 || (n < 0 && errno != EAGAIN) { return nil }
        return n < 0 ? [] : Array(chunk[..<n])
    }

    /// Whether the agent closed this connection (EOF or reset) within `timeout` seconds; input
    /// that arrives meanwhile is read and dropped.
    func isClosed(within timeout: Double) -> Bool {
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

/// Resource readings of a process from /proc.
enum ProcessProbe {
    /// Resident memory in KiB (VmRSS).
    static func rssKiB(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        }
        return nil
    }

    /// Open descriptors.
    static func descriptors(_ pid: Int32) -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count
    }

    /// CPU time used so far (user + system), seconds.
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return nil }
        return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// One `status` over a fresh connection: the seconds it took, nil when it got no answer within `timeout`.
func freshStatus(_ socket: String, timeout: Double = 2) -> Double? {
    let start = Date()
    guard let c = RawClient(socket), c.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"status","params":{}}"#, timeout: timeout),
          let line = c.readLine(timeout: timeout), line.contains("\"result\"") else { return nil }
    return Date().timeIntervalSince(start)
}
