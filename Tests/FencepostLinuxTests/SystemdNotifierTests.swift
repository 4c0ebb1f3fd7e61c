import FencepostLinux
import Foundation
import Glibc
import Testing

/// sd_notify against a datagram socket the test binds, as systemd would.
@Suite("systemd notifier")
struct SystemdNotifierTests {
    @Test("READY=1, STATUS, WATCHDOG=1 and STOPPING=1 arrive at a socket path, one datagram each")
    func pathSocket() throws {
        let dir = try TestSockets.makeDirectory()
        defer { TestSockets.removeDirectory(dir) }
        let path = dir + "/notify"
        let server = try TestSockets.boundDatagram(path)
        defer { close(server) }
        let notifier = try SystemdNotifier(notifySocket: path)
        #expect(notifier.isEnabled)
        #expect(notifier.address?.description == path)
        try notifier.ready()
        try notifier.status("tracking 3 regions\nfix 2 s old")
        try notifier.watchdog()
        try notifier.stopping()
        #expect(try TestSockets.receiveDatagram(server) == "READY=1")
        #expect(try TestSockets.receiveDatagram(server) == "STATUS=tracking 3 regions fix 2 s old")
        #expect(try TestSockets.receiveDatagram(server) == "WATCHDOG=1")
        #expect(try TestSockets.receiveDatagram(server) == "STOPPING=1")
        #expect(!TestSockets.hasDatagram(server))
    }

    @Test("an @name NOTIFY_SOCKET is the abstract namespace")
    func abstractSocket() throws {
        let name = "fencepost-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let server = try TestSockets.boundDatagram(name, abstract: true)
        defer { close(server) }
        let notifier = try SystemdNotifier(notifySocket: "@" + name)
        try notifier.send("READY=1\nSTATUS=up")
        #expect(try TestSockets.receiveDatagram(server) == "READY=1\nSTATUS=up")
    }

    @Test("without NOTIFY_SOCKET every call does nothing")
    func disabled() throws {
        for value in [nil, ""] as [String?] {
            let notifier = try SystemdNotifier(notifySocket: value, watchdogMicroseconds: "1000000")
            #expect(!notifier.isEnabled)
            try notifier.ready()
            try notifier.watchdog()
        }
    }

    @Test("a relative or over-long NOTIFY_SOCKET is refused; a missing socket fails on send with the path")
    func badAddresses() throws {
        #expect(throws: SystemdNotifyError.unsupportedAddress("run/notify")) { try SystemdNotifier(notifySocket: "run/notify") }
        let long = "/" + String(repeating: "x", count: 200)
        #expect(throws: SystemdNotifyError.unsupportedAddress(long)) { try SystemdNotifier(notifySocket: long) }
        let missing = "/nonexistent-\(getpid())/notify"
        let notifier = try SystemdNotifier(notifySocket: missing)
        let error = #expect(throws: SystemdNotifyError.self) { try notifier.ready() }
        #expect(error == .system(operation: "sendto", address: missing, errno: .noEntry))
        #expect(error?.description == "sendto \(missing): No such file or directory")
    }

    @Test("WATCHDOG_USEC gives a ping interval of half; WATCHDOG_PID must be this process")
    func watchdogInterval() throws {
        let pid = getpid()
        func interval(_ usec: String?, _ wpid: String?) throws -> Duration? {
            try SystemdNotifier(notifySocket: nil, watchdogMicroseconds: usec, watchdogPID: wpid, processID: pid).watchdogInterval
        }
        #expect(try interval("30000000", nil) == .seconds(15))
        #expect(try interval("30000000", "\(pid)") == .seconds(15))
        #expect(try interval("3", "") == .nanoseconds(1500))
        #expect(try interval("30000000", "\(pid + 1)") == nil)
        #expect(try interval("30000000", "abc") == nil)
        #expect(try interval("0", nil) == nil)
        #expect(try interval("-5", nil) == nil)
        #expect(try interval("soon", nil) == nil)
        #expect(try interval(nil, "\(pid)") == nil)
    }

    @Test("the environment initializer agrees with the explicit one over this process's environment")
    func fromEnvironment() throws {
        // Only read: setenv while other test threads call getenv is not thread-safe in glibc.
        let env = ProcessInfo.processInfo.environment
        let explicit = try SystemdNotifier(notifySocket: env["NOTIFY_SOCKET"], watchdogMicroseconds: env["WATCHDOG_USEC"],
                                           watchdogPID: env["WATCHDOG_PID"])
        let fromEnvironment = try SystemdNotifier()
        #expect(fromEnvironment.address == explicit.address)
        #expect(fromEnvironment.watchdogInterval == explicit.watchdogInterval)
    }
}
