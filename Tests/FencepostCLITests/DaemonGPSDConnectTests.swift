import FencepostJSON
import FencepostTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// gpsd's `gps_open` (name lookup, connect) must not hold the agent's loop: with a gpsd host
/// whose connect hangs, the control socket answers at once and a due alert fires on time.
@Suite(.serialized, .processes) struct DaemonGPSDConnectTests {
    /// A TCP port on 127.0.0.1 whose connects hang: a listener with a backlog of 0 that never
    /// accepts, its one queue place taken by a first connection, drops every later SYN, so a
    /// blocking `connect` waits through the SYN retries (about two minutes on Linux).
    final class Blackhole {
        let listener: Int32, filler: Int32
        let port: UInt16

        init() throws {
            func inet(_ port: UInt16) -> sockaddr_in {
                var a = sockaddr_in()
                a.sin_family = sa_family_t(AF_INET)
                a.sin_addr.s_addr = inet_addr("127.0.0.1")
                a.sin_port = port.bigEndian
                return a
            }
            func call(_ fd: Int32, _ a: inout sockaddr_in, _ f: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
                withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { f(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            }
            let l = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var a = inet(0)
            guard l >= 0, call(l, &a, bind) == 0, Glibc.listen(l, 0) == 0 else { throw POSIXError(.EIO) }
            var len = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(l, $0, &len) } }
            let p = UInt16(bigEndian: a.sin_port)
            let f = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var b = inet(p)
            guard call(f, &b, connect) == 0 else { throw POSIXError(.EIO) }
            listener = l; filler = f; port = p
        }

        /// Whether a connect to the port hangs for `seconds` (checked with a non-blocking connect).
        func hangs(seconds: Int32) -> Bool {
            let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            defer { close(probe) }
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_addr.s_addr = inet_addr("127.0.0.1")
            a.sin_port = port.bigEndian
            let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard rc != 0, errno == EINPROGRESS else { return false }
            var p = pollfd(fd: probe, events: Int16(POLLOUT), revents: 0)
            return poll(&p, 1, seconds * 1000) == 0
        }

        deinit { close(filler); close(listener) }
    }

    @Test func aHangingGpsdConnectLeavesTheLoopFree() throws {
        let hole = try Blackhole()
        try #require(hole.hangs(seconds: 1), "a connect to the blackhole did not hang; the test cannot show anything")
        let d = try AgentProcess()
        try d.writeConfig("""
            [gps]
            source = "gpsd"
            url = "gpsd://127.0.0.1:\(hole.port)"

            """)
        try d.start()
        if d.waitForExit(timeout: 1)?.status == 69 {
            Issue.record("libgps cannot be loaded (board/install-deps installs it): \(d.stderr)")
            return
        }
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")

        // The control socket answers while the connect hangs.
        for _ in 0 ..< 3 {
            let t0 = Date()
            let status = try d.cli(["status", "--json"])
            let took = Date().timeIntervalSince(t0)
            #expect(status.status == 0 && took < 2, "status took \(took) s: \(status.stderr)")
            #expect(try JSONValue.parse(status.stdout)["gps"]?["connected"] == false)
        }
        // A due alert fires on time.
        let added = Date()
        let add = try d.cli(["add", "-"], input: #"{"id":"soon","content":{"title":"Soon"},"trigger":{"interval":{"seconds":2}}}"# + "\n")
        #expect(add.status == 0, "\(add.stderr)")
        #expect(d.waitForLog("delivered soon", timeout: 10), "log:\n\(d.stderr)")
        let late = Date().timeIntervalSince(added) - 2
        #expect(late < 1, "delivered \(late) s late")
        #expect(hole.hangs(seconds: 0), "the hole stopped hanging during the test")

        // It stops at once, the connect still pending.
        let t0 = Date()
        d.signal(SIGTERM)
        let end = try #require(d.waitForExit(timeout: 10), "no exit after SIGTERM; log:\n\(d.stderr)")
        #expect(end.status == 0 && Date().timeIntervalSince(t0) < 3, "log:\n\(d.stderr)")
        #expect(!d.stderr.contains("connected to gpsd"), "log:\n\(d.stderr)")
    }
}
