import FencepostJSON
import FencepostTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The board's side of the fleet's security, with a real agent against a broker with TLS,
/// client certificates (CN = device id) and the ACL of docs/fleet.md.
@Suite(.serialized, .processes) struct FleetSecurityTests {
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
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let pki = try Self.pki("spoof")
        defer { try? FileManager.default.removeItem(at: pki.folder) }
        var options = MosquittoBroker.Options(tls: pki)
        options.logAll = true
        let broker = try MosquittoBroker(options)
        try broker.publish("fencepost/v1/dev/van-b/desired",
                           #"{"v":1,"version":1,"requests":[{"id":"from-desired","content":{"title":"X"},"trigger":{"interval":{"seconds":3600}}}]}"#,
                           retain: true)
        let watcher = try EventConsumer(broker: broker, device: "+", name: "watcher")
        let agent = try AgentProcess()
        try agent.writeFleetConfig(fleet: Self.tlsFleet(broker, pki, device: "van-b", cert: "van-a"))
        try agent.start(agent: true)
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

    /// A board given the wrong CA: the log says why in OpenSSL's words and names the CA file,
    /// the board retries with its backoff (no storm: a few attempts in 20 s, not one per loop
    /// turn), and it keeps working (its control socket answers, its deliveries happen).
    @Test func theWrongCAIsNamedAndTheBoardKeepsWorking() throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let pki = try Self.pki("wrongca")
        defer { try? FileManager.default.removeItem(at: pki.folder) }
        let broker = try MosquittoBroker(.init(tls: pki))
        let agent = try AgentProcess()
        try agent.writeFleetConfig(fleet: Self.tlsFleet(broker, pki, device: "van-a", cert: "van-a", ca: pki.wrongCAFile))
        try agent.start(agent: true)
        let started = Date()
        #expect(agent.waitUntilRunning(), "\(agent.log)")
        _ = try agent.addIntervals(prefix: "ca", seconds: [0.5])
        let said = SpawnedProcess.wait(timeout: 20) { agent.log.lowercased().contains("certificate verify failed") }
        #expect(said, "the log does not name the certificate problem:\n\(agent.log.suffix(3000))")
        let line = agent.log.split(separator: "\n").first { $0.lowercased().contains("certificate verify failed") } ?? ""
        #expect(line.contains(pki.wrongCAFile), "the line does not name the CA file \(pki.wrongCAFile): \(line)")
        // Attempts the broker saw: the backoff (0.5–1 s, 1–2 s, 2–4 s, 4–8 s, 8–16 s …) allows
        // at most 6 in 20 s.
        usleep(UInt32(max(0, 20 - Date().timeIntervalSince(started)) * 1e6))
        let attempts = broker.log.components(separatedBy: "New connection from").count - 1
        print("wrong CA: \(attempts) connection attempts in 20 s; the agent said: \(line)")
        #expect(attempts >= 1 && attempts <= 7, "\(attempts) attempts in 20 s:\n\(broker.log.suffix(3000))")
        let lines = agent.log.components(separatedBy: "certificate verify failed").count - 1
        #expect(lines <= 3, "the failure logged \(lines) times in 20 s:\n\(agent.log.suffix(3000))")
        let delivered = try agent.cli(["delivered", "--json"])
        #expect(delivered.stdout.contains("ca-0"), "the delivery did not happen: \(delivered)")
        #expect(agent.process?.isRunning == true)
    }

    /// Health, from the broker: the board certificate's expiry as openssl reads it, and the
    /// hash of the zone set the board runs (the source hash in its zone-set file's header).
    @Test func healthNamesTheCertificateExpiryAndTheZoneSet() throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let pki = try Self.pki("health")
        defer { try? FileManager.default.removeItem(at: pki.folder) }
        let broker = try MosquittoBroker(.init(tls: pki))
        let agent = try AgentProcess()
        let zones = agent.dir.appendingPathComponent("zones.geojson").path
        try #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[6.7735,51.2277]},"properties":{"radius":150}}]}"#
            .write(toFile: zones, atomically: true, encoding: .utf8)
        try agent.writeFleetConfig(fleet: Self.tlsFleet(broker, pki, device: "van-a", cert: "van-a"), extra: "zones = \"\(zones)\"")
        try agent.start(agent: true)
        #expect(agent.waitUntilRunning(), "\(agent.log)")
        var health: JSONValue?
        _ = SpawnedProcess.wait(timeout: 30) {
            guard let out = try? FleetTools.run(["/usr/bin/mosquitto_sub", "--unix", broker.socketPath, "-t", "fencepost/v1/dev/van-a/health",
                                                 "-C", "1", "-W", "2"]),
                  let line = out.output.split(separator: "\n").first else { return false }
            health = try? JSONValue.parse(String(line))
            return health != nil
        }
        let h = try #require(health, "no retained health: \(agent.log.suffix(3000))")
        // openssl's notAfter, e.g. "notAfter=Nov 28 15:04:05 2026 GMT".
        let end = try FleetTools.run(["/usr/bin/openssl", "x509", "-noout", "-enddate", "-in", pki.cert("van-a")]).output
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "MMM d HH:mm:ss yyyy 'GMT'"
        let text = end.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "notAfter=", with: "")
            .replacingOccurrences(of: "  ", with: " ")
        let expected = try #require(f.date(from: text), "openssl said \(end)")
        #expect(unixSeconds(h["certificateNotAfter"]?.string) == expected.timeIntervalSince1970,
                "health says \(h["certificateNotAfter"]?.serialized() ?? "nothing"), openssl \(end)")
        // The zone set's source hash: bytes 32..<40 of STATE.zones, little-endian.
        let header = try Data(contentsOf: URL(fileURLWithPath: agent.statePath + ".zones")).prefix(40)
        let hash = header.suffix(8).reversed().map { String(format: "%02x", $0) }.joined()
        #expect(h["zoneSet"]?.string == hash, "health says \(h["zoneSet"]?.serialized() ?? "nothing"), the file \(hash)")
    }

    /// A key file its group can read: the agent refuses to start and names the file and the fix,
    /// as `fencepost fleet` does (one rule for both).
    @Test func aKeyOthersCanReadIsRefusedAtStart() throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let pki = try Self.pki("mode")
        defer { try? FileManager.default.removeItem(at: pki.folder) }
        let broker = try MosquittoBroker(.init(tls: pki))
        chmod(pki.key("van-a"), 0o640)
        let agent = try AgentProcess()
        try agent.writeFleetConfig(fleet: Self.tlsFleet(broker, pki, device: "van-a", cert: "van-a"))
        try agent.start(agent: true)
        let ended = SpawnedProcess.wait(timeout: 20) { agent.process?.isRunning == false }
        #expect(ended, "the agent started with a key others can read")
        #expect(agent.process?.exitStatus != 0)
        #expect(agent.log.contains("\(pki.key("van-a")) can be read or changed by others (mode 640): chmod 600"), "the message names the key file and the fix:\n\(agent.log)")
        let checked = try Binaries.run(["check-config", agent.configPath])
        print("check-config: \(checked.status) \(checked.stderr)")
    }
}
