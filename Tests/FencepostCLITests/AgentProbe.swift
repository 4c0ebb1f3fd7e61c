import FencepostTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
