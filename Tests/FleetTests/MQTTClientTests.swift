import FencepostLinux
import FencepostTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Milliseconds and seconds as the client's nanoseconds.
let second: UInt64 = 1_000_000_000
func nowNanoseconds() -> UInt64 { SystemClocks.boottimeNow().nanosecondsSinceBoot }

/// MQTTClient against a real mosquitto on a Unix socket: connect, publish/subscribe, the Session
/// Expiry stored without an MQTT 5 async connect, the Will with its delay, the CONNACK deadline.
@Suite(.serialized, .processes)
struct MQTTClientTests {
    func options(_ broker: MosquittoBroker, _ id: String) -> MQTTOptions {
        var o = MQTTOptions(broker: .unix(path: broker.socketPath), clientID: id)
        o.keepalive = 10
        o.jitterSeed = 1
        return o
    }

    @Test("a message published is received, with its Message Expiry; a QoS 1 publish gets its PUBACK")
    func roundTrip() throws {
        guard MosquittoBroker.available else {
            if MosquittoBroker.required { Issue.record(Comment(rawValue: MosquittoBroker.missing)) }
            return
        }
        let broker = try MosquittoBroker.start()
        defer { broker.stop() }
        let a = try MQTTBlockingSession(options(broker, "sub-1"))
        try a.connect(timeout: 5 * second)
        try a.subscribe("fencepost/v1/dev/x/#", qos: 1, timeout: 5 * second)
        let b = try MQTTBlockingSession(options(broker, "pub-1"))
        try b.connect(timeout: 5 * second)
        try b.publish(topic: "fencepost/v1/dev/x/cmd", payload: Array("hello".utf8), qos: 1, retain: false, messageExpiry: 600, timeout: 5 * second)
        let m = try #require(a.nextMessage(until: nowNanoseconds() + 5 * second), "no message; broker log:\n\(broker.log)")
        #expect(m.topic == "fencepost/v1/dev/x/cmd")
        #expect(m.payload == Array("hello".utf8))
        #expect(m.qos == 1)
        let expiry = try #require(m.messageExpiry)
        #expect(expiry > 590 && expiry <= 600)
        a.close(); b.close()
    }

    /// libmosquitto 2.0.11 has no asynchronous MQTT 5 connect; the client stores Session Expiry
    /// through connect_bind_v5 with keepalive 1 (CMosquitto.h). If a library version stopped
    /// keeping those properties, the session would not survive and this fails.
    @Test("Session Expiry reaches the broker: the session is present after a reconnect, and not without it")
    func sessionPresentAfterReconnect() throws {
        guard MosquittoBroker.available else {
            if MosquittoBroker.required { Issue.record(Comment(rawValue: MosquittoBroker.missing)) }
            return
        }
        let broker = try MosquittoBroker.start()
        defer { broker.stop() }
        for (expiry, expected) in [(UInt32(300), true), (UInt32(0), false)] {
            let id = "session-\(expiry)"
            var o = options(broker, id)
            o.sessionExpiry = expiry
            let first = try MQTTBlockingSession(o)
            let present0 = try first.connect(timeout: 5 * second)
            #expect(present0 == false)
            try first.subscribe("fencepost/v1/dev/\(id)/cmd", qos: 1, timeout: 5 * second)
            first.close()
            let again = try MQTTBlockingSession(o)
            let present = try again.connect(timeout: 5 * second)
            #expect(present == expected, "session expiry \(expiry): session present \(present); broker log:\n\(broker.log)")
            again.close()
        }
        // And within one client object: a connection lost and resumed by the client's own retry.
        var o = options(broker, "session-retry")
        o.sessionExpiry = 300
        o.backoffInitial = 100_000_000
        o.backoffMaximum = 200_000_000
        let client = try MQTTClient(o)
        var connects: [Bool] = []
        var now = nowNanoseconds()
        client.start(now: now)
        let deadline = now + 20 * second
        var restarted = false
        while now < deadline && connects.count < 2 {
            Self.pump(client, now: now)
            for e in client.takeEvents() { if case .connected(let p) = e { connects.append(p) } }
            if connects.count == 1 && !restarted {
                restarted = true
                // A broker restart without persistence would lose the session: cut the link instead.
                client.stop()
                client.start(now: nowNanoseconds())
            }
            now = nowNanoseconds()
        }
        #expect(connects == [false, true], "connects: \(connects)")
        client.stop()
    }

    @Test("the Will is published after its delay when the client disconnects with reason 0x04, not before")
    func willWithDelay() throws {
        guard MosquittoBroker.available else {
            if MosquittoBroker.required { Issue.record(Comment(rawValue: MosquittoBroker.missing)) }
            return
        }
        let broker = try MosquittoBroker.start()
        defer { broker.stop() }
        let watcher = try MQTTBlockingSession(options(broker, "watcher"))
        try watcher.connect(timeout: 5 * second)
        try watcher.subscribe("fencepost/v1/dev/van-1/status", qos: 1, timeout: 5 * second)
        var o = options(broker, "van-1")
        o.sessionExpiry = 60
        o.will = MQTTWill(topic: "fencepost/v1/dev/van-1/status", payload: Array(#"{"online":false}"#.utf8), qos: 1, retain: true, delay: 2)
        let device = try MQTTBlockingSession(o)
        try device.connect(timeout: 5 * second)
        let t0 = nowNanoseconds()
        device.close(sendWill: true)
        let will = try #require(watcher.nextMessage(until: t0 + 8 * second), "no Will; broker log:\n\(broker.log)")
        let after = nowNanoseconds() - t0
        #expect(will.payload == Array(#"{"online":false}"#.utf8))
        #expect(after >= 1_500_000_000, "the Will came \(after / 1_000_000) ms after the disconnect, before its 2 s delay")
        watcher.close()
    }

    @Test("a listener that accepts and never answers: the attempt ends at the client's CONNACK deadline and is retried")
    func connackDeadline() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-silent-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("silent.sock").path
        let listener = try Self.silentListener(path)
        defer { close(listener) }
        var o = MQTTOptions(broker: .unix(path: path), clientID: "van-2")
        o.connectTimeout = 1 * second
        o.backoffInitial = 200_000_000
        o.backoffMaximum = 400_000_000
        o.jitterSeed = 7
        let client = try MQTTClient(o)
        var now = nowNanoseconds()
        let t0 = now
        client.start(now: now)
        var reasons: [(UInt64, String)] = []
        var longest: UInt64 = 0
        while now < t0 + 5 * second && reasons.count < 2 {
            let before = nowNanoseconds()
            Self.pump(client, now: now)
            longest = max(longest, nowNanoseconds() - before - Self.lastWait)
            for e in client.takeEvents() { if case .disconnected(let why) = e { reasons.append((nowNanoseconds() - t0, why)) } }
            now = nowNanoseconds()
        }
        client.stop()
        // Two attempts, each ended by the deadline and said once (the DISCONNECT the client sends
        // to end an attempt is not a second, "Success", disconnection).
        #expect(reasons.count == 2, "\(reasons)")
        for r in reasons { #expect(r.1.contains("no CONNACK"), "\(r.1)") }
        if reasons.count == 2 {
            #expect(reasons[0].0 >= 1 * second && reasons[0].0 < 3 * second, "the first ended after \(reasons[0].0 / 1_000_000) ms")
            #expect(reasons[1].0 >= reasons[0].0 + 1_100_000_000, "the second attempt ended \((reasons[1].0 - reasons[0].0) / 1_000_000) ms after the first (backoff ≥ 100 ms + deadline 1 s)")
        }
        #expect(longest < 50_000_000, "a client call took \(longest / 1_000_000) ms")
    }

    /// Time the last `pump` spent in poll (excluded from the client's own time).
    nonisolated(unsafe) static var lastWait: UInt64 = 0

    /// One turn: poll the client's descriptor up to 100 ms, hand it what was ready, tick.
    static func pump(_ client: MQTTClient, now: UInt64) {
        lastWait = 0
        if let (fd, interest) = client.currentWatch {
            var p = pollfd(fd: fd.rawValue, events: 0, revents: 0)
            if interest.contains(.readable) { p.events |= Int16(POLLIN) }
            if interest.contains(.writable) { p.events |= Int16(POLLOUT) }
            let t = nowNanoseconds()
            let r = poll(&p, 1, 100)
            lastWait = nowNanoseconds() - t
            if r > 0 {
                client.handle(readable: p.revents & Int16(POLLIN | POLLERR | POLLHUP) != 0, writable: p.revents & Int16(POLLOUT) != 0, now: nowNanoseconds())
            }
        } else {
            let t = nowNanoseconds()
            usleep(20_000)
            lastWait = nowNanoseconds() - t
        }
        client.tick(now: nowNanoseconds())
    }

    /// A Unix socket that accepts connections (the kernel's backlog) and never reads them.
    static func silentListener(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        return fd
    }
}

/// The pure parts: broker addresses, the backoff, the handshake's write gate.
@Suite(.processes) struct MQTTClientPartsTests {
    @Test("broker addresses: schemes, default ports, IPv6, Unix sockets; bad ones name the problem")
    func brokers() throws {
        #expect(try MQTTBroker(parsing: "mqtts://fleet.example.com") == .tcp(host: "fleet.example.com", port: 8883, tls: true))
        #expect(try MQTTBroker(parsing: "mqtt://10.0.0.2:1884") == .tcp(host: "10.0.0.2", port: 1884, tls: false))
        #expect(try MQTTBroker(parsing: "mqtts://[::1]:8884") == .tcp(host: "::1", port: 8884, tls: true))
        #expect(try MQTTBroker(parsing: "unix:/run/mosquitto.sock") == .unix(path: "/run/mosquitto.sock"))
        #expect(try MQTTBroker(parsing: "mqtts://[::1]:8884").description == "mqtts://[::1]:8884")
        for (bad, word) in [("http://x", "scheme"), ("mqtt://x:0", "port"), ("mqtt://x:99999", "port"), ("mqtt://:1883", "host"),
                            ("unix:relative", "absolute"), ("mqtt://user@host", "not allowed"), ("mqtt://[::1", "]")] {
            #expect(throws: MQTTError.self) { try MQTTBroker(parsing: bad) }
            do { _ = try MQTTBroker(parsing: bad) } catch { #expect(error.description.contains(word), "\(bad): \(error)") }
        }
    }

    @Test("backoff: each delay within [d/2, d], doubling to the cap, reset after a success (seeded)")
    func backoff() {
        for seed in UInt64(1)...200 {
            var b = ReconnectBackoff(initial: 1_000, maximum: 60_000, jitterSeed: seed)
            var step: UInt64 = 1_000
            var seen = Set<UInt64>()
            for _ in 0..<12 {
                let d = b.nextDelay()
                #expect(d >= step / 2 && d <= step, "seed \(seed): delay \(d) outside [\(step / 2), \(step)]")
                seen.insert(d)
                step = min(step * 2, 60_000)
            }
            #expect(seen.count > 6, "seed \(seed): the jitter repeats: \(seen)")
            b.reset()
            let d = b.nextDelay()
            #expect(d >= 500 && d <= 1_000, "seed \(seed): after reset \(d)")
        }
        // Two boards with different seeds do not retry in lock step.
        var a = ReconnectBackoff(initial: 1_000_000_000, maximum: 60_000_000_000, jitterSeed: 1)
        var c = ReconnectBackoff(initial: 1_000_000_000, maximum: 60_000_000_000, jitterSeed: 2)
        #expect((0..<5).map { _ in a.nextDelay() } != (0..<5).map { _ in c.nextDelay() })
    }

    @Test("handshake write gate: one writable wake per readable wake before the CONNACK, want_write after")
    func writeGate() {
        var g = HandshakeWriteGate()
        #expect(g.allowsWritable(wantWrite: true, connected: false))      // the TCP connect's completion
        g.wrote()
        #expect(!g.allowsWritable(wantWrite: true, connected: false))     // #3745: no spin while the server is awaited
        g.read()
        #expect(g.allowsWritable(wantWrite: true, connected: false))
        #expect(!g.allowsWritable(wantWrite: false, connected: false))
        g.wrote()
        #expect(g.allowsWritable(wantWrite: true, connected: true))       // after the CONNACK: want_write rules
        #expect(!g.allowsWritable(wantWrite: false, connected: true))
    }
}
