import FencepostTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The fleet's broker setup itself, with mosquitto's own clients: the ACL of docs/fleet.md keeps
/// each device in its own subtree, a certificate speaks only for its CN, and the fault proxy does
/// what its commands say. The agent's side of the same refusals is in FleetSecurityTests.
@Suite(.serialized, .processes) struct BrokerFixtureTests {
    static let devices = ["van-a", "van-b", "operator"]

    /// mosquitto_pub/sub over TLS with `id`'s certificate.
    static func tls(_ broker: MosquittoBroker, _ pki: FleetPKI, as id: String, ca: String? = nil) -> [String] {
        ["-h", "127.0.0.1", "-p", String(broker.tlsPort!), "-V", "5", "--cafile", ca ?? pki.caFile,
         "--cert", pki.cert(id), "--key", pki.key(id), "-i", id]
    }

    /// The ACL these tests give the broker is the one docs/fleet.md tells operators to use.
    @Test func theDocumentedACLIsTheTestedOne() throws {
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/fleet.md")
        let text = try String(contentsOf: doc, encoding: .utf8)
        let heading = try #require(text.range(of: "### The ACL"))
        let rest = text[heading.upperBound...]
        let open = try #require(rest.range(of: "```\n"))
        let close = try #require(rest[open.upperBound...].range(of: "```"))
        #expect(String(rest[open.upperBound..<close.lowerBound]) == MosquittoBroker.acl)
    }

    @Test func aDeviceReadsOnlyItsOwnDesiredDocument() throws {
        guard FleetTools.all() else { return }
        let folder = URL(fileURLWithPath: "/tmp/fp-pki-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pki = try FleetPKI.make(in: folder, clients: Self.devices)
        let broker = try MosquittoBroker(.init(tls: pki))
        let published = try FleetTools.run(["/usr/bin/mosquitto_pub"] + Self.tls(broker, pki, as: "operator")
            + ["-q", "1", "-r", "-t", "fencepost/v1/dev/van-b/desired", "-m", #"{"v":1,"version":1}"#])
        #expect(published.status == 0, "\(published.output)")

        // The broker grants the subscription and delivers nothing (2.0.11 checks read access per message).
        let other = try FleetTools.run(["/usr/bin/mosquitto_sub"] + Self.tls(broker, pki, as: "van-a")
            + ["-t", "fencepost/v1/dev/van-b/desired", "-C", "1", "-W", "2"])
        #expect(!other.output.contains("version"), "van-a read van-b's desired document: \(other.output)")
        let own = try FleetTools.run(["/usr/bin/mosquitto_sub"] + Self.tls(broker, pki, as: "van-b")
            + ["-t", "fencepost/v1/dev/van-b/desired", "-C", "1", "-W", "5"])
        #expect(own.status == 0 && own.output.contains(#""version":1"#), "\(own.output)")
    }

    @Test func aDeviceCannotPublishAnotherDevicesEventsEvenUnderItsClientId() throws {
        guard FleetTools.all() else { return }
        let folder = URL(fileURLWithPath: "/tmp/fp-pki-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pki = try FleetPKI.make(in: folder, clients: Self.devices)
        let broker = try MosquittoBroker(.init(tls: pki))
        let watcher = try SpawnedProcess(["/usr/bin/mosquitto_sub", "--unix", broker.socketPath, "-V", "5", "-q", "1",
                                          "-t", "fencepost/v1/dev/+/evt", "-v"],
                                         output: folder.appendingPathComponent("watch").path)
        usleep(300_000)
        // Client id "van-b" with van-a's certificate: use_username_as_clientid makes it van-a.
        var args = Self.tls(broker, pki, as: "van-a")
        args[args.count - 1] = "van-b"
        let forged = try FleetTools.run(["/usr/bin/mosquitto_pub"] + args
            + ["-q", "1", "-t", "fencepost/v1/dev/van-b/evt", "-m", "forged"])
        #expect(forged.output.contains("Not authorized"), "PUBACK 0x87 expected: \(forged.output)")
        let own = try FleetTools.run(["/usr/bin/mosquitto_pub"] + Self.tls(broker, pki, as: "van-a")
            + ["-q", "1", "-t", "fencepost/v1/dev/van-a/evt", "-m", "own"])
        #expect(own.status == 0, "\(own.output)")
        SpawnedProcess.wait(timeout: 5) { watcher.output.contains("own") }
        watcher.stop()
        #expect(watcher.output.contains("fencepost/v1/dev/van-a/evt own"))
        #expect(!watcher.output.contains("forged"), "\(watcher.output)")
    }

    @Test func aClientWithTheWrongCAIsRefusedAtTheHandshake() throws {
        guard FleetTools.all() else { return }
        let folder = URL(fileURLWithPath: "/tmp/fp-pki-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pki = try FleetPKI.make(in: folder, clients: Self.devices)
        let broker = try MosquittoBroker(.init(tls: pki))
        let wrong = try FleetTools.run(["/usr/bin/mosquitto_pub"] + Self.tls(broker, pki, as: "van-a", ca: pki.wrongCAFile)
            + ["-q", "1", "-t", "fencepost/v1/dev/van-a/evt", "-m", "x"])
        #expect(wrong.status != 0 && wrong.output.contains("TLS"), "\(wrong.output)")
    }

    @Test func passwordsAndTheSameACL() throws {
        guard FleetTools.all() else { return }
        let broker = try MosquittoBroker(.init(passwords: ["van-c": "secret-c"]))
        let base = ["/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", String(broker.passwordPort!), "-V", "5", "-q", "1", "-m", "x"]
        let own = try FleetTools.run(base + ["-u", "van-c", "-P", "secret-c", "-t", "fencepost/v1/dev/van-c/evt"])
        #expect(own.status == 0, "\(own.output)")
        let other = try FleetTools.run(base + ["-u", "van-c", "-P", "secret-c", "-t", "fencepost/v1/dev/van-a/evt"])
        #expect(other.output.contains("Not authorized"), "\(other.output)")
        let bad = try FleetTools.run(base + ["-u", "van-c", "-P", "wrong", "-t", "fencepost/v1/dev/van-c/evt"])
        #expect(bad.status != 0, "\(bad.output)")
    }

    /// The proxy forwards and counts; blackhole keeps the socket and drops the bytes; stall holds
    /// them and lets them through in order; rst resets; cut closes after N bytes.
    @Test func theFaultProxyDoesWhatItsCommandsSay() throws {
        guard FleetTools.all() else { return }
        let broker = try MosquittoBroker(.init(plainTCP: true))
        let proxy = try FaultProxy(target: "127.0.0.1:\(broker.plainPort!)")
        let pub = ["/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", String(proxy.port), "-V", "5", "-q", "1",
                   "-t", "t", "-m", String(repeating: "p", count: 100)]
        #expect(try FleetTools.run(pub).status == 0)
        var stats = try proxy.stats
        // CONNECT + PUBLISH (100-byte payload) + DISCONNECT up; CONNACK + PUBACK down.
        #expect(stats.up > 100 && stats.down > 0 && stats.accepted == 1, "\(stats)")

        try proxy.command("zero")
        try proxy.command("mode blackhole")
        let start = Date()
        let dead = try FleetTools.run(pub, timeLimit: 3)
        #expect(dead.status != 0 && Date().timeIntervalSince(start) >= 2.5, "\(dead)")
        stats = try proxy.stats
        #expect(stats.up == 0 && stats.down == 0 && stats.droppedUp > 0, "\(stats)")

        try proxy.command("mode refuse")
        #expect(try FleetTools.run(pub, timeLimit: 10).status != 0)

        try proxy.command("mode pass")
        try proxy.command("cut 20")
        #expect(try FleetTools.run(pub, timeLimit: 10).status != 0)
        #expect(try FleetTools.run(pub, timeLimit: 10).status == 0, "one cut only")
    }
}
