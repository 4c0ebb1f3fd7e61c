import FencepostJSON
import FencepostTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The board's side of the fleet's security, with a real agent against a broker with TLS,
/// client certificates (CN = device id) and the ACL of docs/fleet.md.
@Suite(.serialized) struct FleetSecurityTests {
    static func pki(_ name: String) throws -> FleetPKI {
        try FleetPKI.make(in: URL(fileURLWithPath: "/tmp/fp-pki-\(name)-\(UUID().uuidString.prefix(8))"), clients: ["van-a", "van-b", "operator"])
    }

    static func tlsFleet(_ broker: MosquittoBroker, _ pki: FleetPKI, device: String, cert: String, ca: String? = nil) -> String {
        """
        broker = "\(broker.tlsAddress!)"
        device = "\(device)"
        ca = "\(ca ?? pki.caFile)"
        cert = "\(pki.cert(cert))"
        key = "\(pki.key(cert))"
        keepalive = 5
        """
    }

    /// van-a's certificate configured as device van-b: the broker lets it read nothing of van-b's
    /// (its desired document is not applied) and refuses its events (PUBACK 0x87). The agent keeps
    /// them as failed and says so, once each: the broker's count of denied publishes stops growing.
    @Test func aCertificateCannotSpeakForAnotherDevice() throws {
        guard FleetTools.all(), Binaries.agent != nil, FleetAgentProcess.supported else { return }
        let pki = try Self.pki("spoof")
        defer { try? FileManager.default.removeItem(at: pki.folder) }
        var options = MosquittoBroker.Options(tls: pki)
        options.logAll = true
        let broker = try MosquittoBroker(options)
        try broker.publish("fencepost/v1/dev/van-b/desired",
                           #"{"v":1,"version":1,"requests":[{"id":"from-desired","content":{"title":"X"},"trigger":{"interval":{"seconds":3600}}}]}"#,
                           retain: true)
        let watcher = try EventConsumer(broker: broker, device: "+", name: "watcher")
        let agent = try FleetAgentProcess()
        try agent.writeConfig(fleet: Self.tlsFleet(broker, pki, device: "van-b", cert: "van-a"))
        try agent.start()
        #expect(agent.waitUntilRunning(), "\(agent.log)")
        _ = try agent.addIntervals(prefix: "spoof", seconds: (0 ..< 5).map { 0.3 + Double($0) * 0.1 })
        SpawnedProcess.wait(timeout: 20) { agent.log.components(separatedBy: "refused event").count > 5 }
        func denied() -> Int { broker.log.components(separatedBy: "Denied PUBLISH from van-a").count - 1 }
        let deniedFirst = denied()
        usleep(12_000_000)   // two keepalive periods more
        let deniedLater = denied()
        let pending = try agent.cli(["pending", "--json"])
        print("spoofed device: \(deniedFirst) publishes denied, \(deniedLater) after 12 s more")
        #expect(!pending.stdout.contains("from-desired"), "van-a read van-b's desired document: \(pending.stdout)")
        let refusedDeliveries = watcher.unique.filter { $0["type"]?.string == "delivery" }
        #expect(refusedDeliveries.isEmpty, "refused events reached a consumer")
        #expect(agent.log.components(separatedBy: "refused event").count - 1 == 5, "each refused event said once: \(agent.log.suffix(3000))")
        #expect(deniedFirst >= 5, "the broker's log:\n\(broker.log.suffix(3000))")
        #expect(deniedLater - deniedFirst <= 2, "a retry storm: \(deniedLater - deniedFirst) more denied publishes in 12 s")
        let status = try agent.cli(["status", "--json"])
        #expect(status.status == 0)
    }

    /// A board given the wrong CA: the log says why in OpenSSL's words, and the board keeps
    /// working (its control socket answers, its deliveries happen).
    @Test func theWrongCAIsNamedAndTheBoardKeepsWorking() throws {
        guard FleetTools.all(), Binaries.agent != nil, FleetAgentProcess.supported else { return }
        let pki = try Self.pki("wrongca")
        defer { try? FileManager.default.removeItem(at: pki.folder) }
        let broker = try MosquittoBroker(.init(tls: pki))
        let agent = try FleetAgentProcess()
        try agent.writeConfig(fleet: Self.tlsFleet(broker, pki, device: "van-a", cert: "van-a", ca: pki.wrongCAFile))
        try agent.start()
        #expect(agent.waitUntilRunning(), "\(agent.log)")
        _ = try agent.addIntervals(prefix: "ca", seconds: [0.5])
        let said = SpawnedProcess.wait(timeout: 20) { agent.log.lowercased().contains("certificate verify failed") }
        // Open: the agent says only "A TLS error occurred" (MOSQ_ERR_TLS); the reason is in
        // libmosquitto's log callback during the connect, which runs on the connect thread.
        // `fencepost fleet` names it (FleetCLITests.theOperatorsTLSConnection).
        withKnownIssue("the agent's log does not name the TLS failure's reason yet") {
            #expect(said, "the log does not name the certificate problem:\n\(agent.log.suffix(3000))")
        }
        #expect(agent.log.contains("A TLS error occurred") || said, "\(agent.log.suffix(3000))")
        let delivered = try agent.cli(["delivered", "--json"])
        #expect(delivered.stdout.contains("ca-0"), "the delivery did not happen: \(delivered)")
        #expect(agent.process?.isRunning == true)
    }

    /// A key file others can read: the agent refuses to start and names the file and the fix.
    @Test func aKeyOthersCanReadIsRefusedAtStart() throws {
        guard FleetTools.all(), Binaries.agent != nil, FleetAgentProcess.supported else { return }
        let pki = try Self.pki("mode")
        defer { try? FileManager.default.removeItem(at: pki.folder) }
        let broker = try MosquittoBroker(.init(tls: pki))
        chmod(pki.key("van-a"), 0o644)
        let agent = try FleetAgentProcess()
        try agent.writeConfig(fleet: Self.tlsFleet(broker, pki, device: "van-a", cert: "van-a"))
        try agent.start()
        let ended = SpawnedProcess.wait(timeout: 20) { agent.process?.isRunning == false }
        #expect(ended, "the agent started with a key others can read")
        #expect(agent.process?.exitStatus != 0)
        #expect(agent.log.contains(pki.key("van-a")), "the message names the key file:\n\(agent.log)")
        let checked = try Binaries.run(["check-config", agent.configPath])
        print("check-config: \(checked.status) \(checked.stderr)")
    }
}
