import FencepostJSON
import FencepostLinux
import FencepostTestSupport
import Fleet
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The operator's view of a roll-out: where each board stands (`fleet devices`), following it
/// (`fleet push --wait`), and removing the blobs nobody uses (`fleet gc`) — the pure decisions
/// checked alone, then the CLI against a real mosquitto with boards played by sessions.
@Suite(.serialized, .processes) struct FleetOperationsTests {
    static let second: UInt64 = 1_000_000_000

    /// The size of the retained payload on `topic` (binary chunks too), nil when none.
    func retainedLength(_ broker: MosquittoBroker, _ topic: String) throws -> Int? {
        let out = try FleetTools.run(["/usr/bin/mosquitto_sub", "--unix", broker.socketPath, "-t", topic, "-C", "1", "-W", "1", "-F", "%l"])
        guard out.status == 0 else { return nil }
        return Int(out.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func json(_ text: String) -> JSONValue { (try? JSONValue.parse(text)) ?? .null }

    // MARK: Pure

    @Test func standingFromReported() {
        let downloading = Self.json(#"{"desiredVersion":5,"appliedVersion":4,"state":"downloading","zoneSet":{"pending":{"sha256":"x","have":3,"of":12}}}"#)
        #expect(RolloutStanding(reported: downloading, version: 5) == .downloading(have: 3, of: 12))
        #expect(RolloutStanding(reported: downloading, version: 5).text == "downloading 3/12 (25 %)")
        #expect(RolloutStanding(reported: downloading, version: 6) == .silent, "a report about an older version says nothing of this one")
        #expect(RolloutStanding(reported: downloading, version: 4) == .applied, "version 4 is in force while 5 downloads")
        let failed = Self.json(#"{"desiredVersion":5,"appliedVersion":4,"state":"failed","error":{"code":"zoneset.space","message":"needs 12 MB more"}}"#)
        #expect(RolloutStanding(reported: failed, version: 5) == .failed(reason: "needs 12 MB more"))
        #expect(RolloutStanding(reported: Self.json(#"{"desiredVersion":5,"state":"building"}"#), version: 5) == .building(stage: "building"))
        #expect(RolloutStanding(reported: Self.json(#"{"desiredVersion":5,"appliedVersion":5,"state":"applied"}"#), version: 5) == .applied)
        #expect(RolloutStanding(reported: nil, version: 5) == .silent)
        #expect(RolloutStanding(reported: Self.json(#"{"desiredVersion":2,"state":"applied"}"#), version: nil) == .applied)
        // A request list on its way: its chunks are the progress (no zone set pending).
        let list = Self.json(#"{"desiredVersion":6,"appliedVersion":5,"state":"downloading","zoneSet":{"active":"x","pending":null},"requests":{"pending":{"sha256":"y","have":7,"of":40}}}"#)
        #expect(RolloutStanding(reported: list, version: 6) == .downloading(have: 7, of: 40))
        #expect(RolloutStanding(reported: Self.json(#"{"desiredVersion":6,"state":"loading"}"#), version: 6) == .building(stage: "loading"))
        let summary = RolloutSummary([.applied, .applied, .downloading(have: 1, of: 2), .building(stage: "verifying"), .failed(reason: "x"), .silent])
        #expect(summary.text == "2 applied, 2 downloading, 1 failed, 1 silent")
    }

    @Test func inventoryKeepsWhatABoardNames() {
        let a = String(repeating: "a", count: 64), b = String(repeating: "b", count: 64), c = String(repeating: "c", count: 64)
        let d = String(repeating: "d", count: 64)
        var inventory = BlobInventory()
        var notes: [String: Bool] = [:]
        func note(_ topic: String, _ bytes: Int) { notes[topic] = inventory.note(topic: topic, bytes: bytes) }
        for (sha, fleet) in [(a, "acme"), (b, "acme"), (c, "other")] {
            note("fencepost/v1/fleet/\(fleet)/blob/\(sha)/m", 300)
            for n in 0..<3 { note("fencepost/v1/fleet/\(fleet)/blob/\(sha)/\(n)", 1000) }
        }
        note("fencepost/v1/fleet/acme/blob/\(d)/0", 1000)   // chunks without a manifest
        #expect(notes.values.allSatisfy { $0 } && notes.count == 13)
        notes = [:]
        note("fencepost/v1/fleet/acme/blob/\(a)/01", 5)   // no leading zeros
        note("fencepost/v1/fleet/acme/blob/xyz/m", 5)
        note("fencepost/v1/fleet/acme/blob/\(a)/m", 0)    // an empty retained message is no message
        note("fencepost/v1/dev/van-1/desired", 5)
        #expect(notes.values.allSatisfy { !$0 } && notes.count == 4, "\(notes)")
        inventory.noteDesired(Self.json(#"{"version":3,"zoneSet":{"sha256":"\#(a)","size":1,"fleet":"acme"}}"#))
        inventory.noteReported(Self.json(#"{"state":"downloading","zoneSet":{"active":null,"pending":{"sha256":"\#(c)","have":1,"of":3}}}"#))
        #expect(inventory.unused(incomplete: false).map(\.sha256) == [b])
        #expect(inventory.unused(incomplete: true).map(\.sha256) == [b, d])
        // A request list named by a desired document, or reported in force or on its way, is in use too.
        for (doc, desired) in [(#"{"version":4,"requests":{"blob":{"sha256":"\#(b)","size":1,"format":"jsonl","fleet":"acme"}}}"#, true),
                               (#"{"state":"applied","requests":{"count":3,"blob":"\#(b)"}}"#, false),
                               (#"{"state":"downloading","requests":{"pending":{"sha256":"\#(b)","have":1,"of":3}}}"#, false)] {
            var copy = inventory
            if desired { copy.noteDesired(Self.json(doc)) } else { copy.noteReported(Self.json(doc)) }
            #expect(copy.unused(incomplete: false).isEmpty, "\(doc)")
        }
        #expect(inventory.used.map(\.sha256) == [a, c])
        let removed = inventory.unused(incomplete: false)[0]
        #expect(removed.bytes == 3300)
        #expect(removed.retainedTopics.first == "fencepost/v1/fleet/acme/blob/\(b)/m", "the manifest first")
        #expect(removed.retainedTopics.count == 4)
    }

    // MARK: fleet devices

    @Test func devicesShowsTheRolloutAcrossTheFleet() throws {
        guard FleetTools.all() else { return }
        let broker = try MosquittoBroker()
        let sha = String(repeating: "9f", count: 32)
        for d in ["van-a", "van-b", "van-c", "van-d"] {
            try broker.publish("fencepost/v1/dev/\(d)/desired", #"{"v":1,"version":5,"zoneSet":{"sha256":"\#(sha)","size":100,"fleet":"acme"}}"#, retain: true)
        }
        try broker.publish("fencepost/v1/dev/van-a/reported", #"{"v":1,"desiredVersion":5,"appliedVersion":5,"state":"applied","zoneSet":{"active":"\#(sha)","zones":10,"pending":null},"error":null}"#, retain: true)
        try broker.publish("fencepost/v1/dev/van-b/reported", #"{"v":1,"desiredVersion":5,"appliedVersion":4,"state":"downloading","zoneSet":{"active":null,"pending":{"sha256":"\#(sha)","have":30,"of":120}},"error":null}"#, retain: true)
        try broker.publish("fencepost/v1/dev/van-c/reported", #"{"v":1,"desiredVersion":5,"appliedVersion":4,"state":"failed","error":{"code":"zoneset.space","message":"needs 40 MB more disk"}}"#, retain: true)
        try broker.publish("fencepost/v1/dev/van-d/reported", #"{"v":1,"desiredVersion":4,"appliedVersion":4,"state":"applied","error":null}"#, retain: true)
        let out = try broker.fleet(["devices"])
        #expect(out.status == 0, "\(out)")
        let lines = out.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 6, "\(out.stdout)")
        guard lines.count == 6 else { return }
        #expect(lines[0].hasPrefix("DEVICE  STATUS  DESIRED") && lines[0].contains("ROLL-OUT"), "\(lines[0])")
        #expect(lines[1].contains("van-a") && lines[1].contains("v5 9f9f9f9f9f9f…") && lines[1].contains(" applied "), "\(lines[1])")
        #expect(lines[2].contains("van-b") && lines[2].contains("downloading 30/120 (25 %)"), "\(lines[2])")
        #expect(lines[3].contains("van-c") && lines[3].contains("failed: needs 40 MB more disk"), "\(lines[3])")
        #expect(lines[4].contains("van-d") && lines[4].contains(" silent "), "\(lines[4])")
        #expect(lines[5] == "4 boards: 1 applied, 1 downloading, 1 failed, 1 silent", "\(lines[5])")
        let json = try broker.fleet(["devices", "--json", "--device", "van-b"])
        let b = try JSONValue.parse(json.stdout)
        #expect(b["rollout"]?.string == "downloading" && b["desired"]?["version"]?.int64 == 5, "\(json)")
    }

    /// Boards that keep publishing (progress, health) while the operator reads what is retained:
    /// the read ends when the retained documents have come, not when the broker falls silent.
    @Test func devicesAnswersWhileBoardsKeepReporting() throws {
        guard FleetTools.all() else { return }
        let broker = try MosquittoBroker()
        try broker.publish("fencepost/v1/dev/van-a/reported", #"{"v":1,"desiredVersion":2,"appliedVersion":2,"state":"applied"}"#, retain: true)
        final class Chatty: @unchecked Sendable { let session: MQTTBlockingSession; init(_ s: MQTTBlockingSession) { session = s } }
        let chatty = Chatty(try MQTTBlockingSession(MQTTOptions(broker: .unix(path: broker.socketPath), clientID: "chatty")))
        try chatty.session.connect(timeout: 5 * Self.second)
        let stop = DispatchSemaphore(value: 0), stopped = DispatchSemaphore(value: 0)
        Thread {
            let board = chatty.session
            var n = 0
            while stop.wait(timeout: .now() + 0.05) == .timedOut {
                n += 1
                let p = #"{"v":1,"desiredVersion":3,"appliedVersion":2,"state":"downloading","zoneSet":{"pending":{"sha256":"x","have":\#(n),"of":100000}}}"#
                _ = try? board.publish(topic: "fencepost/v1/dev/van-b/reported", payload: Array(p.utf8), qos: 0, retain: false, timeout: Self.second)
            }
            board.close()
            stopped.signal()
        }.start()
        defer { stop.signal(); _ = stopped.wait(timeout: .now() + 5) }
        usleep(300_000)
        let start = Date()
        let out = try broker.fleet(["devices"])
        let took = Date().timeIntervalSince(start)
        #expect(out.status == 0 && out.stdout.contains("van-a"), "\(out)")
        #expect(took < 4, "fleet devices took \(took) s while a board kept reporting")
    }

    // MARK: fleet push --wait

    /// Boards played by one session on a thread: each answers the desired version it sees with
    /// the reports `script` gives for it (none: silent).
    final class Boards: @unchecked Sendable {
        let session: MQTTBlockingSession
        let script: [String: [String]]
        var sawDesired: [String: Date] = [:]
        let done = DispatchSemaphore(value: 0)
        init(_ broker: MosquittoBroker, script: [String: [String]]) throws {
            session = try MQTTBlockingSession(MQTTOptions(broker: .unix(path: broker.socketPath), clientID: "boards-\(getpid())"))
            self.script = script
            try session.connect(timeout: 5 * FleetOperationsTests.second)
            try session.subscribe("fencepost/v1/dev/+/desired", qos: 1, timeout: 5 * FleetOperationsTests.second)
        }
        func start(for seconds: Double) {
            Thread {
                let end = SystemClocks.boottimeNow().nanosecondsSinceBoot + UInt64(seconds * 1e9)
                while let m = self.session.nextMessage(until: end) {
                    guard let device = FleetTopics.device(of: m.topic, .desired)?.text,
                          let version = (try? JSONValue.parse(m.payload))?["version"]?.int64 else { continue }
                    self.sawDesired[device] = Date()
                    for report in self.script[device] ?? [] {
                        let payload = report.replacingOccurrences(of: "VERSION", with: String(version))
                        _ = try? self.session.publish(topic: "fencepost/v1/dev/\(device)/reported", payload: Array(payload.utf8), qos: 1, retain: true,
                                                      timeout: 5 * FleetOperationsTests.second)
                        usleep(50_000)
                    }
                }
                self.session.close()
                self.done.signal()
            }.start()
        }
    }

    @Test func pushWaitFollowsEveryBoardAtOnce() throws {
        guard FleetTools.all() else { return }
        let broker = try MosquittoBroker()
        let config = broker.folder.appendingPathComponent("van.toml").path
        try "[[request]]\nid = \"x\"\ncontent.title = \"X\"\ntrigger.interval.seconds = 60\n".write(toFile: config, atomically: true, encoding: .utf8)
        let progress = { (have: Int) in #"{"v":1,"desiredVersion":VERSION,"appliedVersion":null,"state":"downloading","zoneSet":{"active":null,"pending":{"sha256":"x","have":\#(have),"of":40}},"error":null}"# }
        let boards = try Boards(broker, script: [
            "van-a": [progress(1), progress(2), progress(20), progress(40), #"{"v":1,"desiredVersion":VERSION,"state":"building"}"#,
                      #"{"v":1,"desiredVersion":VERSION,"appliedVersion":VERSION,"state":"applied","error":null}"#],
            "van-b": [#"{"v":1,"desiredVersion":VERSION,"appliedVersion":null,"state":"failed","error":{"code":"zoneset.invalid","message":"feature 7: polygon not closed"}}"#],
        ])
        boards.start(for: 12)
        let start = Date()
        var out = try broker.fleet(["push", "van-a", "van-b", "van-c", config, "--wait", "3"])
        #expect(out.status == 65, "\(out)")
        #expect(out.stderr.contains("van-b failed version 1: feature 7: polygon not closed"), "\(out.stderr)")
        #expect(out.stderr.contains("van-c did not report version 1 within 3 s"), "\(out.stderr)")
        let lines = out.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("van-a: version 1 downloading 1/40 (2 %)"), "\(out.stdout)")
        #expect(lines.contains("van-a: version 1 downloading 20/40 (50 %)"), "\(out.stdout)")
        #expect(!lines.contains("van-a: version 1 downloading 2/40 (5 %)"), "a line every tenth of the way: \(out.stdout)")
        #expect(lines.contains("van-a: version 1 building") && lines.contains("van-a: version 1 applied"), "\(out.stdout)")
        #expect(lines.contains("van-b: version 1 failed: feature 7: polygon not closed"), "\(out.stdout)")
        #expect(lines.last == "3 boards: 1 applied, 0 downloading, 1 failed, 1 silent", "\(out.stdout)")
        // Every board got its document before any answer was waited for.
        let a = try #require(boards.sawDesired["van-a"]), b = try #require(boards.sawDesired["van-b"])
        #expect(abs(a.timeIntervalSince(b)) < 1.5, "van-b's document waited for van-a's answers")
        #expect(Date().timeIntervalSince(start) < 6)

        // Two silent boards: one deadline for both, not one each.
        let silentStart = Date()
        out = try broker.fleet(["push", "van-y", "van-z", config, "--wait", "2"])
        let took = Date().timeIntervalSince(silentStart)
        #expect(out.status == 75 && out.stderr.contains("van-y did not report version 1 within 2 s")
                && out.stderr.contains("van-z did not report version 1 within 2 s"), "\(out)")
        #expect(took < 3.8, "took \(took) s for a 2 s wait")

        // All applied: exit 0.
        out = try broker.fleet(["push", "van-a", config, "--wait", "5"])
        #expect(out.status == 0 && out.stdout.hasSuffix("1 boards: 1 applied, 0 downloading, 0 failed, 0 silent\n"), "\(out)")
        #expect(boards.done.wait(timeout: .now() + 15) == .success)
    }

    // MARK: fleet gc

    @Test func gcRemovesOnlyTheBlobsNoBoardUses() throws {
        guard FleetTools.all() else { return }
        let broker = try MosquittoBroker()
        func zones(_ name: String, _ n: Int) throws -> String {
            let path = broker.folder.appendingPathComponent(name).path
            var features: [String] = []
            for i in 0..<n {
                features.append(#"{"type":"Feature","id":"\#(name)-\#(i)","geometry":{"type":"Point","coordinates":[\#(Double(i) * 0.01),\#(45.0 + Double(i) * 0.001)]},"properties":{"radius":\#(100 + i)}}"#)
            }
            try #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        func push(_ device: String, _ file: String) throws -> (sha: String, size: Int) {
            let out = try broker.fleet(["push", device, "--zones", file, "--fleet", "acme", "--chunk-size", "1024", "--json"])
            #expect(out.status == 0, "\(out)")
            let z = try JSONValue.parse(out.stdout)["zoneSet"]
            return (z?["sha256"]?.string ?? "", Int(z?["size"]?.int64 ?? 0))
        }
        let inUse = try push("van-a", try zones("a", 400))
        let unused = try push("van-b", try zones("b", 300))
        // van-b moves on to van-a's set; a third board still downloads a set its desired no longer names.
        _ = try push("van-b", try zones("a", 400))
        let downloading = try push("van-c", try zones("c", 200))
        try broker.publish("fencepost/v1/dev/van-c/desired", #"{"v":1,"version":9}"#, retain: true)
        try broker.publish("fencepost/v1/dev/van-c/reported", #"{"v":1,"desiredVersion":8,"state":"downloading","zoneSet":{"active":null,"pending":{"sha256":"\#(downloading.sha)","have":1,"of":3}}}"#, retain: true)
        #expect(Set([inUse.sha, unused.sha, downloading.sha]).count == 3)
        let root = { (sha: String) in "fencepost/v1/fleet/acme/blob/\(sha)" }
        let unusedChunks = (unused.size + 1023) / 1024
        #expect(unusedChunks > 1)

        var out = try broker.fleet(["gc", "--dry-run"])
        #expect(out.status == 0, "\(out)")
        #expect(out.stdout.contains("would remove acme \(unused.sha) (\(unusedChunks) chunks"), "\(out.stdout)")
        #expect(!out.stdout.contains("remove acme \(inUse.sha)") && !out.stdout.contains("remove acme \(downloading.sha)"), "\(out.stdout)")
        #expect(out.stdout.contains("dry run: 1 blob unused"), "\(out.stdout)")
        #expect(try broker.retainedText(root(unused.sha) + "/m") != nil, "a dry run removes nothing")
        #expect(try retainedLength(broker, root(unused.sha) + "/0") == 1024)

        out = try broker.fleet(["gc"])
        #expect(out.status == 0, "\(out)")
        let freedLine = try #require(out.stdout.split(separator: "\n").last.map(String.init))
        #expect(freedLine.hasPrefix("1 blob removed, "), "\(out.stdout)")
        let freed = Int(freedLine.split(separator: " ")[3]) ?? 0
        #expect(freed > unused.size && freed < unused.size + 8192, "freed \(freed): the blob's \(unused.size) bytes and its manifest")
        #expect(try broker.retainedText(root(unused.sha) + "/m") == nil)
        for n in [0, unusedChunks - 1] { #expect(try retainedLength(broker, root(unused.sha) + "/\(n)") == nil, "chunk \(n)") }
        for kept in [inUse.sha, downloading.sha] {
            #expect(try broker.retainedText(root(kept) + "/m") != nil, "\(kept) is in use")
            #expect(try retainedLength(broker, root(kept) + "/0") == 1024)
        }
        out = try broker.fleet(["gc"])
        #expect(out.status == 0 && out.stdout.hasSuffix("0 blobs removed, 0 bytes freed\n"), "\(out)")
    }
}
