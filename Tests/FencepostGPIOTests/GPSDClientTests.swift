import CivilTime
import FencepostLinux
import FencepostTestSupport
import Foundation
import Position
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("ReconnectBackoff")
struct ReconnectBackoffTests {
    @Test("1 s doubling to a 30 s cap, back to 1 s after a success")
    func sequence() {
        var b = ReconnectBackoff()
        let s: UInt64 = 1_000_000_000
        #expect((0 ..< 8).map { _ in b.nextDelay() } == [1, 2, 4, 8, 16, 30, 30, 30].map { $0 * s })
        #expect(b.failures == 8)
        b.reset()
        #expect(b.failures == 0 && b.peekDelay == s)
        #expect(b.nextDelay() == s && b.nextDelay() == 2 * s)
    }

    @Test("no overflow with a huge cap; initial equal to the cap stays there")
    func bounds() {
        var huge = ReconnectBackoff(initial: 1, maximum: .max)
        var last: UInt64 = 0
        for _ in 0 ..< 70 { last = huge.nextDelay() }
        #expect(last == .max)
        var flat = ReconnectBackoff(initial: 5, maximum: 5)
        #expect([flat.nextDelay(), flat.nextDelay()] == [5, 5])
    }
}

/// The client against a scripted gpsd stand-in on a real loopback socket: partial lines, several
/// messages per read, non-TPV classes, and the peer closing.
@Suite("GPSDClient on a scripted server")
struct GPSDClientScriptedTests {
    static let tpv1 = #"{"class":"TPV","device":"/dev/x","status":2,"mode":3,"time":"2022-11-23T11:39:39.500Z","ept":0.005,"lat":38.714334310,"lon":-117.090607658,"altHAE":1819.8690,"altMSL":1864.1650,"track":239.0810,"speed":0.023,"eph":7.125}"#
    static let tpv2 = #"{"class":"TPV","device":"/dev/x","mode":2,"time":"2022-11-23T11:39:40.000Z","lat":-33.5,"lon":151.25}"#
    static let sky = #"{"class":"SKY","device":"/dev/x","hdop":1.1,"satellites":[]}"#
    static let noFix = #"{"class":"TPV","device":"/dev/x","mode":1}"#

    @Test("fixes from TPV reports, split across writes; disconnection is reported and closes the client")
    func scripted() throws {
        let (listener, port) = try TestSockets.listen()
        defer { close(listener) }
        let serverDone = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let watchCommand = LockedBox("")
        Thread.detachNewThread {
            let c = accept(listener, nil, nil)
            var buf = [UInt8](repeating: 0, count: 256)
            let n = read(c, &buf, buf.count)
            watchCommand.value = String(decoding: buf.prefix(max(n, 0)), as: UTF8.self)
            TestSockets.send(c, #"{"class":"VERSION","release":"3.22"}"# + "\n" + Self.sky + "\n")
            let line = Self.tpv1 + "\n"
            let cut = line.index(line.startIndex, offsetBy: 40)
            TestSockets.send(c, String(line[..<cut]))        // half a message
            proceed.wait()
            TestSockets.send(c, String(line[cut...]) + Self.tpv2 + "\n" + Self.noFix + "\n")
            proceed.wait()
            close(c)
            serverDone.signal()
        }
        let client = try GPSDClient(host: "127.0.0.1", port: String(port))
        let fd = try #require(client.fileDescriptor)
        // First batch: VERSION, SKY and half a TPV. Never blocks on the half.
        var messages = 0
        let deadline = Date().addingTimeInterval(10)
        while messages < 2, Date() < deadline, TestSockets.waitReadable(fd.rawValue, milliseconds: 1000) {
            let r = client.readAvailable()
            #expect(r.fixes.isEmpty && r.disconnection == nil)
            messages += r.messages
        }
        #expect(messages == 2)
        #expect(watchCommand.value.hasPrefix(#"?WATCH={"enable":true,"json":true"#))
        proceed.signal()
        var fixes: [Fix] = []
        while fixes.count < 3, Date() < deadline, TestSockets.waitReadable(fd.rawValue, milliseconds: 1000) {
            let r = client.readAvailable()
            #expect(r.disconnection == nil)
            fixes += r.fixes
        }
        try #require(fixes.count == 3)
        let f = fixes[0]
        #expect(f.time == WallInstant(secondsSinceEpoch: 1_669_203_579) && f.nanoseconds == 500_000_000)
        #expect(f.coordinate == Coordinate(latitude: 38.714334310, longitude: -117.090607658))
        #expect(f.mode == .threeD && f.isValid)
        #expect(f.altitudeMSL == 1864.1650 && f.speed == 0.023 && f.course == 239.0810)
        // The error is HDOP × UERE from the SKY's HDOP (the serial source's model), not the TPV's eph.
        #expect(f.hdop == 1.1)
        #expect(abs((f.horizontalError ?? 0) - 1.1 * client.uere) < 1e-9, "\(String(describing: f.horizontalError))")
        let g = fixes[1]
        #expect(g.mode == .twoD && g.coordinate == Coordinate(latitude: -33.5, longitude: 151.25))
        #expect(g.altitudeMSL == nil && g.speed == nil && g.course == nil)
        // No eph in this TPV, but the SKY's HDOP still stands (libgps keeps the latest DOPs).
        #expect(g.hdop == 1.1 && g.horizontalError == f.horizontalError)
        let h = fixes[2]
        #expect(h.mode == .none && h.coordinate == nil && !h.isValid && h.usablePosition == nil)
        // The server closes: reported once, then the client is closed.
        proceed.signal()
        #expect(serverDone.wait(timeout: .now() + 10) == .success)
        var disconnection: GPSDError?
        while disconnection == nil, Date() < deadline, TestSockets.waitReadable(fd.rawValue, milliseconds: 1000) {
            disconnection = client.readAvailable().disconnection
        }
        guard case .disconnected(let host, let p, _, let message)? = disconnection else {
            Issue.record("expected a disconnection, got \(String(describing: disconnection))")
            return
        }
        #expect(host == "127.0.0.1" && p == String(port) && !message.isEmpty)
        #expect(!client.isConnected && client.fileDescriptor == nil)
    }

    @Test("connecting where nothing listens gives connectFailed with libgps's message")
    func refused() throws {
        let port = TestSockets.freePort()
        do {
            _ = try GPSDClient(host: "127.0.0.1", port: String(port))
            Issue.record("connected to a port nobody listens on")
        } catch {
            guard case .connectFailed(let host, let p, let code, let message) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(host == "127.0.0.1" && p == String(port))
            #expect(code < 0, "libgps reports its own negative codes, got \(code)")
            #expect(message == "can't connect to host/port pair", "message: \(message)")
            #expect(error.description.hasPrefix("cannot connect to gpsd at 127.0.0.1:\(port) ("))
        }
    }
}

/// A value shared with a server thread.
final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var _value: T
    init(_ value: T) { _value = value }
    var value: T {
        get { lock.lock(); defer { lock.unlock() }; return _value }
        set { lock.lock(); _value = newValue; lock.unlock() }
    }
}

@Suite("GPSDEndpoint")
struct GPSDEndpointTests {
    @Test("gpsd:// URLs", arguments: [
        ("gpsd://localhost:2947", "localhost", "2947"),
        ("gpsd://pi.local", "pi.local", "2947"),
        ("gpsd://", "localhost", "2947"),
        ("gpsd://10.0.0.7:3000/", "10.0.0.7", "3000"),
        ("gpsd://[::1]:2948", "::1", "2948"),
        ("gpsd://[fe80::1]", "fe80::1", "2947"),
        ("gpsd://h:00080", "h", "80"),
    ])
    func valid(_ url: String, _ host: String, _ port: String) {
        #expect(GPSDEndpoint(url: url) == GPSDEndpoint(host: host, port: port), "\(url)")
    }

    @Test("refused", arguments: [
        "http://localhost:2947", "gpsd:localhost", "gpsd://host:0", "gpsd://host:65536", "gpsd://host:",
        "gpsd://host:12a", "gpsd://::1:2947", "gpsd://[::1", "gpsd://[]:2947", "gpsd://[::1]x", "gpsd://h/path",
        "gpsd://:2947", "gpsd://a b", "gpsd://h:123456",
    ])
    func invalid(_ url: String) {
        #expect(GPSDEndpoint(url: url) == nil, "\(url)")
    }

    @Test("description round-trips")
    func roundTrip() {
        for e in [GPSDEndpoint(), GPSDEndpoint(host: "::1", port: "3000"), GPSDEndpoint(host: "pi", port: "1")] {
            #expect(GPSDEndpoint(url: e.description) == e)
        }
    }
}
