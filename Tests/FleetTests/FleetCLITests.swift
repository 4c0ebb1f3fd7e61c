import FencepostJSON
import FencepostLinux
import FencepostTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `fencepost fleet` against a real mosquitto, with the boards played by mosquitto_pub and
/// MQTTBlockingSession: what it publishes is the documented shape, what it prints is what the
/// broker held, each event once.
@Suite(.serialized, .processes) struct FleetCLITests {
    static let second: UInt64 = 1_000_000_000

    @Test func pushPublishesTheNextVersionRetainedWithTheConfigsRequests() throws {
        guard FleetTools.all() else { return }
        let broker = try MosquittoBroker()
        let config = broker.folder.appendingPathComponent("van.toml").path
        try """
            [[category]]
            id = "arrival"
            actions = [{ id = "ok", title = "OK" }]

            [[request]]
            id = "break"
            content.title = "Take a break"
            content.categoryIdentifier = "arrival"
            trigger.interval.seconds = 7200
            trigger.interval.repeats = true
            """.write(toFile: config, atomically: true, encoding: .utf8)

        // Nothing retained: version 1.
        var out = try broker.fleet(["push", "van-1", config])
        #expect(out.status == 0 && out.stdout == "van-1: desired version 1 published (1 requests, 1 categories)\n", "\(out)")
        var doc = try #require(try broker.retainedJSON("fencepost/v1/dev/van-1/desired"))
        #expect(doc["version"]?.int64 == 1)
        #expect(doc["requests"]?[0]?["id"]?.string == "break")
        #expect(doc["requests"]?[0]?["trigger"]?["interval"]?["seconds"]?.int64 == 7200)
        #expect(doc["categories"]?[0]?["id"]?.string == "arrival")
        #expect(doc["issuedAt"]?.string?.hasSuffix("Z") == true)

        // The board reported a later version than the retained one (another operator's tool): after it.
        try broker.publish("fencepost/v1/dev/van-1/reported", #"{"v":1,"desiredVersion":7,"state":"applied"}"#, retain: true)
        out = try broker.fleet(["push", "van-1", config, "--json"])
        #expect(out.status == 0, "\(out)")
        #expect(try JSONValue.parse(out.stdout)["version"]?.int64 == 8)
        doc = try #require(try broker.retainedJSON("fencepost/v1/dev/van-1/desired"))
        #expect(doc["version"]?.int64 == 8)

        // An older version is refused before anything is published.
        out = try broker.fleet(["push", "van-1", config, "--version", "8"])
        #expect(out.status == 64 && out.stderr.contains("not newer than 8"), "\(out)")
        // A bad device id, a bad file: named.
        out = try broker.fleet(["push", "van/1", config])
        #expect(out.status == 64 && out.stderr.contains("device id"), "\(out)")
        try "[[request]]\nid = 3\n".write(toFile: config, atomically: true, encoding: .utf8)
        out = try broker.fleet(["push", "van-1", config])
        #expect(out.status == 65 && out.stderr.contains("van.toml:2"), "\(out)")
        #expect(try broker.retainedJSON("fencepost/v1/dev/van-1/desired")?["version"]?.int64 == 8)

        // --wait: a board that does not answer.
        try "[[request]]\nid = \"x\"\ncontent.title = \"X\"\ntrigger.interval.seconds = 60\n".write(toFile: config, atomically: true, encoding: .utf8)
        out = try broker.fleet(["push", "van-1", config, "--wait", "1"])
        #expect(out.status == 75 && out.stderr.contains("van-1 did not report version 9 within 1 s"), "\(out)")
    }

    /// A push to many boards reads what the broker retains for all of them at once: each board
    /// still gets one above its own retained or reported version and keeps its own requests, and
    /// the reading waits for the broker once, not once a board (a settle of 0.3 s each way made a
    /// push to 50 boards take 31 s, most of a fleet's roll-out of a 100k-zone set).
    @Test func pushToManyBoardsReadsTheirRetainedDocumentsTogether() throws {
        guard FleetTools.all() else { return }
        let broker = try MosquittoBroker()
        let boards = 40
        for i in 0 ..< boards {
            let desired = #"{"v":1,"version":\#(i + 1),"requests":[{"id":"r-\#(i)","content":{"title":"R"},"trigger":{"interval":{"seconds":600}}}]}"#
            #expect(try broker.publish("fencepost/v1/dev/bus-\(i)/desired", desired, retain: true) == 0)
            if i % 3 == 0 {
                #expect(try broker.publish("fencepost/v1/dev/bus-\(i)/reported", #"{"v":1,"desiredVersion":\#(i + 5),"state":"applied"}"#, retain: true) == 0)
            }
        }
        let zones = broker.folder.appendingPathComponent("z.geojson").path
        try #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[6.8,51.2]},"properties":{"radius":100}}]}"#
            .write(toFile: zones, atomically: true, encoding: .utf8)
        let start = Date()
        let out = try broker.fleet(["push"] + (0 ..< boards).map { "bus-\($0)" } + ["--zones", zones, "--fleet", "t", "--json"])
        let seconds = Date().timeIntervalSince(start)
        print("pushToManyBoardsReadsTheirRetainedDocumentsTogether: push to \(boards) boards in \(String(format: "%.2f", seconds)) s")
        #expect(out.status == 0, "\(out)")
        for i in 0 ..< boards {
            let doc = try broker.retainedJSON("fencepost/v1/dev/bus-\(i)/desired")
            #expect(doc?["version"]?.int64 == Int64(i % 3 == 0 ? i + 6 : i + 2), "bus-\(i): \(doc?.serialized() ?? "nothing")")
            #expect(doc?["requests"]?[0]?["id"]?.string == "r-\(i)" && doc?["zoneSet"]?["sha256"]?.string != nil, "bus-\(i): \(doc?.serialized() ?? "nothing")")
        }
        // One wait for the broker's retained messages, not one a board (40 × 0.6 s before).
        #expect(seconds < 8, "push to \(boards) boards took \(seconds) s")
    }

    /// Events out of order, resent, from two boards, one not JSON, one announced gap: each printed
    /// once, in seq order per board; the bad one named on standard error.
    @Test func eventsComeOutOnceInSeqOrder() throws {
        guard FleetTools.all() else { return }
        let broker = try MosquittoBroker()
        func event(_ device: String, _ seq: Int, _ extra: String = #","type":"delivery","delivery":"d""#) -> String {
            #"{"v":1,"id":"\#(device).0001.\#(seq)","seq":\#(seq)\#(extra)}"#
        }
        let input = broker.folder.appendingPathComponent("events").path
        var lines: [String] = []
        for seq in [1, 2, 4, 3, 3, 2, 5] { lines.append("fencepost/v1/dev/van-a/evt " + event("van-a", seq)) }
        for seq in [10, 11] { lines.append("fencepost/v1/dev/van-b/evt " + event("van-b", seq)) }
        lines.append("fencepost/v1/dev/van-b/evt " + event("van-b", 20, #","type":"gap","reason":"outbox-full","from":12,"to":19,"dropped":{"transition":8}"#))
        lines.append("fencepost/v1/dev/van-b/evt not-json")
        lines.append("fencepost/v1/dev/van-b/evt " + event("van-b", 21))
        try lines.joined(separator: "\n").write(toFile: input, atomically: true, encoding: .utf8)

        // A durable session, so the events published before the command runs wait for it.
        var out = try broker.fleet(["events", "--session", "ops-test", "--idle", "1"])
        #expect(out.status == 0, "\(out)")
        for line in lines {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            try broker.publish(parts[0], parts[1])
        }
        out = try broker.fleet(["events", "--session", "ops-test", "--json", "--idle", "2"])
        #expect(out.status == 0, "\(out)")
        let printed = out.stdout.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
        let seqs = printed.map { "\($0["device"]?.string ?? "?"):\($0["seq"]?.int64 ?? -1)" }
        #expect(seqs.filter { $0.hasPrefix("van-a") } == ["van-a:1", "van-a:2", "van-a:3", "van-a:4", "van-a:5"], "\(out.stdout)")
        #expect(seqs.filter { $0.hasPrefix("van-b") } == ["van-b:10", "van-b:11", "van-b:20", "van-b:21"], "\(out.stdout)")
        #expect(out.stderr.contains("fencepost/v1/dev/van-b/evt: not JSON"), "\(out.stderr)")
        #expect(!out.stderr.contains("not received"), "the gap was announced: \(out.stderr)")

        // The human lines.
        try broker.publish("fencepost/v1/dev/van-c/evt", event("van-c", 1, #","type":"response","at":"2026-11-26T07:12:03.120Z","delivery":"depot/3/12","action":"snooze","source":"button""#))
        out = try broker.fleet(["events", "--session", "ops-test", "--idle", "1"])
        #expect(out.stdout == "2026-11-26T07:12:03.120Z  van-c  #1  response  depot/3/12 snooze from button\n", "\(out)")
    }

    @Test func devicesShowsStatusAppliedVersionAndHealth() throws {
        guard FleetTools.all() else { return }
        let broker = try MosquittoBroker()
        try broker.publish("fencepost/v1/dev/van-a/status", #"{"online":true,"bdSeq":3,"since":"2026-11-26T06:00:00Z","agent":"0.9.0","boot":"b"}"#, retain: true)
        try broker.publish("fencepost/v1/dev/van-a/reported", #"{"v":1,"desiredVersion":4,"appliedVersion":4,"state":"applied","error":null}"#, retain: true)
        try broker.publish("fencepost/v1/dev/van-a/health", #"{"v":1,"at":"2026-11-26T06:00:00Z","clock":"gnss","fix":{"ageSeconds":2.0,"error":6.5},"pending":12,"outbox":{"depth":3,"bytes":900,"oldestSeconds":125.0,"failed":0}}"#, retain: true)
        try broker.publish("fencepost/v1/dev/van-b/status", #"{"online":false,"bdSeq":9}"#, retain: true)
        try broker.publish("fencepost/v1/dev/van-b/reported", #"{"v":1,"desiredVersion":5,"appliedVersion":4,"state":"failed","error":{"code":"desired.invalid","message":"requests[0]: no trigger"}}"#, retain: true)
        var out = try broker.fleet(["devices"])
        #expect(out.status == 0, "\(out)")
        let lines = out.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(out.stdout)")
        #expect(lines.last == "2 boards: 1 applied, 0 downloading, 1 failed, 0 silent", "\(out.stdout)")
        #expect(lines[0].hasPrefix("DEVICE  STATUS"))
        #expect(lines[1].contains("van-a") && lines[1].contains("online since 2026-11-26T06:00:00Z") && lines[1].contains("v4 applied")
                && lines[1].contains("3 (oldest 2min 5s)") && lines[1].contains("gnss") && lines[1].contains("2s ago ±7 m")
                && lines[1].contains(" 12 "), "\(lines[1])")
        #expect(lines[2].contains("van-b") && lines[2].contains("offline") && lines[2].contains("v5 failed: requests[0]: no trigger"), "\(lines[2])")
        out = try broker.fleet(["devices", "--json", "--device", "van-b"])
        let b = try JSONValue.parse(out.stdout)
        #expect(b["device"]?.string == "van-b" && b["status"]?["bdSeq"]?.int64 == 9 && b["health"]?.isNull == true, "\(out)")
    }

    /// A board played by a session that answers commands: the CLI waits for the answer with its
    /// id (ignoring another's), prints it, and exits 0, 65 (refused) or 75 (no answer in time).
    @Test func commandWaitsForItsAnswerUntilItExpires() throws {
        guard FleetTools.all() else { return }
        let broker = try MosquittoBroker()
        let board = try MQTTBlockingSession(MQTTOptions(broker: .unix(path: broker.socketPath), clientID: "van-a"))
        try board.connect(timeout: 5 * Self.second)
        try board.subscribe("fencepost/v1/dev/van-a/cmd", qos: 1, timeout: 5 * Self.second)
        let answered = DispatchSemaphore(value: 0)
        /// The board's side, on a thread of its own; read after `answered`.
        final class Board: @unchecked Sendable {
            let session: MQTTBlockingSession
            var seen: [JSONValue] = []
            var expiries: [UInt32?] = []
            init(_ s: MQTTBlockingSession) { session = s }
        }
        let played = Board(board)
        let thread = Thread {
            let board = played.session
            let end = SystemClocks.boottimeNow().nanosecondsSinceBoot + 30 * Self.second
            while played.seen.count < 2, let m = board.nextMessage(until: end) {
                guard let cmd = try? JSONValue.parse(String(decoding: m.payload, as: UTF8.self)), let id = cmd["id"]?.string else { continue }
                played.seen.append(cmd)
                played.expiries.append(m.messageExpiry)
                let ok = cmd["name"]?.string == "status"
                // Another tool's answer first: not ours.
                _ = try? board.publish(topic: "fencepost/v1/dev/van-a/cmd/res", payload: Array(#"{"v":1,"id":"other","ok":true}"#.utf8), qos: 1, retain: false, timeout: 5 * Self.second)
                let res = ok ? #"{"v":1,"id":"\#(id)","ok":true,"result":{"pending":3}}"#
                    : #"{"v":1,"id":"\#(id)","ok":false,"error":{"code":"delivery.unknown","message":"no delivery depot/9"}}"#
                _ = try? board.publish(topic: "fencepost/v1/dev/van-a/cmd/res", payload: Array(res.utf8), qos: 1, retain: false, timeout: 5 * Self.second)
            }
            answered.signal()
        }
        thread.start()
        var out = try broker.fleet(["command", "van-a", "status", "--expires", "90s", "--json"])
        #expect(out.status == 0, "\(out)")
        #expect(try JSONValue.parse(out.stdout)["result"]?["pending"]?.int64 == 3, "\(out)")
        out = try broker.fleet(["command", "van-a", "ack", "depot/9", "--action", "ok"])
        #expect(out.status == 65 && out.stdout.contains("van-a: ack refused: no delivery depot/9"), "\(out)")
        #expect(answered.wait(timeout: .now() + 10) == .success)
        board.close()
        let seen = played.seen, expiries = played.expiries
        #expect(seen.count == 2)
        if seen.count == 2 {
            #expect(seen[0]["name"]?.string == "status" && seen[0]["expiresAt"]?.string?.hasSuffix("Z") == true)
            #expect(seen[1]["args"]?["delivery"]?.string == "depot/9" && seen[1]["args"]?["action"]?.string == "ok")
            let expiry = try #require(expiries[0])
            #expect(expiry > 80 && expiry <= 90, "Message Expiry mirrors --expires")
        }
        // Nobody answers: the command gives up at its expiry, saying so.
        let start = Date()
        out = try broker.fleet(["command", "van-z", "resync", "--expires", "2s"])
        #expect(out.status == 75 && out.stderr.contains("did not answer resync") && out.stderr.contains("refuses it after that"), "\(out)")
        #expect(Date().timeIntervalSince(start) >= 2)
    }

    /// The operator over TLS with a certificate; the wrong CA and a key others can read are refused
    /// with a message that says what to do.
    @Test func theOperatorsTLSConnection() throws {
        guard FleetTools.all() else { return }
        let folder = URL(fileURLWithPath: "/tmp/fp-pki-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pki = try FleetPKI.make(in: folder, clients: ["operator", "van-a"])
        let broker = try MosquittoBroker(.init(tls: pki))
        try broker.publish("fencepost/v1/dev/van-a/status", #"{"online":true,"bdSeq":1}"#, retain: true)
        let tls = ["--broker", broker.tlsAddress!, "--cert", pki.cert("operator"), "--key", pki.key("operator")]
        var out = try Binaries.run(["fleet", "devices", "--json", "--ca", pki.caFile] + tls)
        #expect(out.status == 0 && out.stdout.contains(#""device":"van-a""#), "\(out)")

        out = try Binaries.run(["fleet", "devices", "--ca", pki.wrongCAFile, "--timeout", "5"] + tls)
        #expect(out.status == 69, "\(out)")
        #expect(out.stderr.contains("cannot connect to \(broker.tlsAddress!)"), "\(out)")
        #expect(out.stderr.lowercased().contains("certificate verify failed"), "the reason, in OpenSSL's words: \(out.stderr)")

        chmod(pki.key("operator"), 0o644)
        out = try Binaries.run(["fleet", "devices", "--ca", pki.caFile] + tls)
        #expect(out.status == 77 && out.stderr.contains("by others (mode 644): chmod 600"), "\(out)")

        // The same from a [fleet] section (paths relative to the file).
        chmod(pki.key("operator"), 0o600)
        let file = folder.appendingPathComponent("operator.toml").path
        try "[fleet]\nbroker = \"\(broker.tlsAddress!)\"\nca = \"ca.crt\"\ncert = \"operator.crt\"\nkey = \"operator.key\"\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        out = try Binaries.run(["fleet", "devices", "--json", "--config", file])
        #expect(out.status == 0 && out.stdout.contains(#""device":"van-a""#), "\(out)")
        // The agent's [fleet] reader: a typo is named with its line, a group-readable key refused.
        try "[fleet]\nbroker = \"\(broker.tlsAddress!)\"\nbrokr = \"x\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        out = try Binaries.run(["fleet", "devices", "--config", file])
        #expect(out.status == 65 && out.stderr.contains("line 3") && out.stderr.contains("did you mean `broker`"), "\(out)")
        chmod(pki.key("operator"), 0o640)
        out = try Binaries.run(["fleet", "devices", "--ca", pki.caFile] + tls)
        #expect(out.status == 77 && out.stderr.contains("by others (mode 640): chmod 600"), "\(out)")
        chmod(pki.key("operator"), 0o600)
    }
}
