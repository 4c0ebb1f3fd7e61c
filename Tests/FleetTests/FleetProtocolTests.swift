import CivilTime
@testable import Fleet
import Foundation
import RecentIDs
import FencepostJSON
import Testing
import FencepostTestSupport

@Suite(.processes) struct FleetProtocolTests {
    @Test("device ids: letters, digits and -, 1 to 23; a refusal names the position")
    func deviceIDs() throws {
        #expect(try DeviceID("van-0042").text == "van-0042")
        #expect(try DeviceID(String(repeating: "a", count: 23)).text.count == 23)
        for (bad, word) in [("", "empty"), (String(repeating: "a", count: 24), "at most 23"), ("van/1", "position 4"),
                            ("van+", "position 4"), ("#", "position 1"), ("vän", "position 2"), ("a b", "position 2")] {
            do { _ = try DeviceID(bad); Issue.record("\(bad) accepted") } catch { #expect(error.description.contains(word), "\(bad): \(error)") }
        }
    }

    @Test("topics stay in the device's subtree; downlink topics are classified")
    func topics() throws {
        let t = FleetTopics(device: try DeviceID("van-1"))
        #expect(t.events == "fencepost/v1/dev/van-1/evt")
        #expect(t.commandResult == "fencepost/v1/dev/van-1/cmd/res")
        #expect(t.subscriptions.allSatisfy { $0.hasPrefix("fencepost/v1/dev/van-1/") && !$0.contains("+") && !$0.contains("#") })
        #expect(t.classify("fencepost/v1/dev/van-1/desired") == .desired)
        #expect(t.classify("fencepost/v1/dev/van-2/desired") == nil)
    }

    @Test("leaves: one device's topic, every device's filter, and the device of a topic")
    func leaves() throws {
        let t = FleetTopics(device: try DeviceID("van-1"))
        #expect(FleetTopics.Leaf.allCases.map { t[$0] } == [t.status, t.desired, t.reported, t.health, t.events, t.command, t.commandResult])
        #expect(FleetTopics.everyDevice(.commandResult) == "fencepost/v1/dev/+/cmd/res")
        #expect(FleetTopics.device(of: "fencepost/v1/dev/van-7/evt", .events)?.text == "van-7")
        #expect(FleetTopics.device(of: "fencepost/v1/dev/van-7/cmd/res", .commandResult)?.text == "van-7")
        for topic in ["fencepost/v1/dev/van-7/evt/x", "fencepost/v1/dev//evt", "fencepost/v1/dev/a/b/evt", "other/van-7/evt", "fencepost/v1/dev/evt"] {
            #expect(FleetTopics.device(of: topic, .events) == nil, "\(topic)")
        }
    }

    @Test("event payloads: v, id, seq first, then the body; ids unique per seq and zero-padded")
    func eventPayloads() throws {
        let d = try DeviceID("van-0042")
        #expect(FleetEventID.make(device: d, tag: 0x7f3a, seq: 123) == "van-0042.7f3a.000000000123")
        let e = FleetEvent.response(delivery: "depot/3/12", action: "snooze", source: "button", at: WallInstant(secondsSinceEpoch: 0), clock: .gnss)
        let p = FleetEvent.payload(id: "x.0001.000000000001", seq: 1, body: e.body)
        let v = try JSONValue.parse(p)
        #expect(v["v"]?.int64 == 1 && v["seq"]?.int64 == 1 && v["id"]?.string == "x.0001.000000000001")
        #expect(v["type"]?.string == "response" && v["source"]?.string == "button" && v["at"]?.string == "1970-01-01T00:00:00Z")
        let gap = FleetGap(from: 5, to: 9, dropped: [("transition", 4)], refused: [("delivery", 1)])
        let g = try JSONValue.parse(FleetEvent.payload(id: "i", seq: 10, body: gap.body))
        #expect(g["type"]?.string == "gap" && g["from"]?.int64 == 5 && g["to"]?.int64 == 9)
        #expect(g["dropped"]?["transition"]?.int64 == 4 && g["refused"]?["delivery"]?.int64 == 1)
    }

    @Test("desired documents: versioned, apply's shapes, unknown keys and bad types refused with the key named")
    func desired() throws {
        let ok = try FleetDesiredDocument(parsing: Array(#"{"v":1,"version":3,"requests":{"inline":[{"id":"a"}]},"categories":[]}"#.utf8))
        #expect(ok.version == 3 && ok.requestCount == 1)
        #expect(ok.applyParameters["categories"] != nil)
        let bare = try FleetDesiredDocument(parsing: Array(#"{"version":4,"requests":[]}"#.utf8))
        #expect(bare.applyParameters["categories"] == nil)
        // A request list as a blob: JSON Lines, named by its hash; a zone set's format is refused there.
        let sha = String(repeating: "c0", count: 32)
        let blob = try FleetDesiredDocument(parsing: Array(#"{"version":5,"requests":{"blob":{"sha256":"\#(sha)","size":900,"encoding":"gzip","format":"jsonl","fleet":"acme"}}}"#.utf8))
        #expect(blob.requestsBlob == BlobReference(sha256: sha, size: 900, fleet: try FleetName("acme"), format: .jsonl) && blob.requestCount == 0)
        #expect(blob.requestsBlob?.json["format"]?.string == "jsonl" && blob.zoneSet == nil)
        for (bad, word) in [(#"{"version":5,"requests":{"blob":{"sha256":"\#(sha)","size":9,"format":"geojson","fleet":"a"}}}"#, "\"requests.blob.format\" is \"geojson\"; this agent reads \"jsonl\" there"),
                            (#"{"version":5,"requests":{"blob":{"sha256":"\#(sha)","size":9,"fleet":"a"},"inline":[]}}"#, "{\"blob\": {...}}"),
                            (#"{"version":5,"zoneSet":{"sha256":"\#(sha)","size":9,"format":"jsonl","fleet":"a"}}"#, "\"zoneSet.format\" is \"jsonl\"")] {
            do { _ = try FleetDesiredDocument(parsing: Array(bad.utf8)); Issue.record("\(bad) accepted") } catch {
                #expect(error.description.contains(word), "\(bad): \(error)")
            }
        }
        for (bad, word) in [(#"{"requests":[]}"#, "version"), (#"{"version":0}"#, "version"), (#"{"version":1,"request":[]}"#, "unknown key \"request\""),
                            (#"{"version":1,"requests":"x"}"#, "requests"), (#"{"version":1,"categories":{}}"#, "categories"),
                            (#"{"version":1,"v":2}"#, "\"v\""), ("[1]", "object"), ("{", "not JSON"),
                            (#"{"version":1,"issuedAt":"yesterday"}"#, "issuedAt"), (#"{"version":1,"requests":{"blob":{}}}"#, "blob")] {
            do { _ = try FleetDesiredDocument(parsing: Array(bad.utf8)); Issue.record("\(bad) accepted") } catch {
                #expect(error.description.contains(word), "\(bad): \(error)")
            }
        }
    }

    @Test("commands: expiresAt mandatory; expired or unknown-clock commands refused; ids remembered, bounded")
    func commands() throws {
        let text = #"{"v":1,"id":"op-1","name":"ack","args":{"delivery":"d1"},"expiresAt":"2026-11-26T08:00:00Z"}"#
        guard case .success(let c) = FleetCommand.parse(Array(text.utf8)) else { Issue.record("refused"); return }
        #expect(c.name == .ack && c.args["delivery"]?.string == "d1")
        let exp = c.expiresAt.secondsSinceEpoch
        #expect(c.check(now: WallInstant(secondsSinceEpoch: exp - 1)) == nil)
        #expect(c.check(now: WallInstant(secondsSinceEpoch: exp))?.code == "command.expired")
        #expect(c.check(now: nil)?.code == "command.clockUntrusted")
        if case .failure(let f) = FleetCommand.parse(Array(#"{"id":"op-2","name":"ack"}"#.utf8)) {
            #expect(f.id == "op-2" && f.error.message.contains("expiresAt"))
        } else { Issue.record("a command without expiresAt was accepted") }
        if case .failure(let f) = FleetCommand.parse(Array(#"{"id":"op-3","name":"reboot","expiresAt":"2026-11-26T08:00:00Z"}"#.utf8)) {
            #expect(f.error.code == "command.unknown")
        } else { Issue.record("an unknown command was accepted") }
        var recent = RecentMemory<String, Void>(capacity: 3)
        let answers = ["a", "b", "a", "c", "d", "a", "d"].map { recent.insertIfNew($0) }
        #expect(answers == [true, true, false, true, true, true, false])   // "a" falls out at "d"
    }

    @Test("status and Will carry bdSeq; a retained offline is recognised")
    func status() {
        let off = FleetStatus.offline(bdSeq: 17)
        #expect(FleetStatus.isOffline(off) == (true, 17))
        let on = FleetStatus.online(bdSeq: 18, since: WallInstant(secondsSinceEpoch: 0), agent: "t", boot: "b")
        #expect(FleetStatus.isOffline(on).offline == false)
    }

    @Test("outbox bounds: admits within both, low water at 90 %")
    func bounds() {
        let b = FleetOutboxBounds(maximumRows: 100, maximumBytes: 1 << 20, window: 8)
        #expect(b.admits(rows: 99, bytes: 0, adding: 10))
        #expect(!b.admits(rows: 100, bytes: 0, adding: 10))
        #expect(!b.admits(rows: 0, bytes: (1 << 20) - 5, adding: 10))
        #expect(b.lowWaterRows == 90)
    }
}

/// The certificate expiry the health reports, read from PEM by a DER walk: checked against
/// openssl's own reading for a UTCTime (before 2050) and a GeneralizedTime (2050 on) notAfter;
/// anything else gives nil, never a wrong date.
@Suite(.processes) struct FleetCertificateTests {
    @Test(arguments: [2, 12_000])
    func notAfterAsOpensslSaysIt(days: Int) throws {
        guard FleetTools.all() else { return }
        let dir = "/tmp/fp-cert-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let made = try FleetTools.run(["/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                       "-days", String(days), "-subj", "/CN=van-1", "-keyout", dir + "/k.pem", "-out", dir + "/c.pem"])
        #expect(made.status == 0, "\(made.output)")
        let end = try FleetTools.run(["/usr/bin/openssl", "x509", "-noout", "-enddate", "-in", dir + "/c.pem"]).output
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "MMM d HH:mm:ss yyyy 'GMT'"
        let text = end.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "notAfter=", with: "").replacingOccurrences(of: "  ", with: " ")
        let expected = try #require(f.date(from: text), "openssl said \(end)")
        let pem = Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/c.pem")))
        #expect(FleetCertificate.notAfter(pem: pem)?.secondsSinceEpoch == Int64(expected.timeIntervalSince1970), "openssl: \(end)")
        // Cut anywhere inside, or not a certificate: nil.
        let der = try #require(FleetCertificate.firstCertificateDER(pem))
        for cut in stride(from: 0, to: der.count, by: 7) { #expect(FleetCertificate.notAfter(der: Array(der[..<cut])) == nil) }
        #expect(FleetCertificate.notAfter(pem: Array("-----BEGIN CERTIFICATE-----\nMIIB!\n-----END CERTIFICATE-----\n".utf8)) == nil)
        #expect(FleetCertificate.notAfter(pem: Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/k.pem")))) == nil)
    }
}
