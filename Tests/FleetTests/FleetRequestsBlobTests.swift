@testable import FencepostAgent
import FencepostJSON
import FencepostTestSupport
import Fleet
import FencepostLinux
import Foundation
import SeededRandom
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A request list too large for a desired document, rolled out as a blob: `fencepost fleet push`
/// checks and publishes it, a real agent behind the fault proxy fetches it through a cut and a
/// kill, reads it on its thread and applies it all or nothing; a later version naming the same
/// list is applied from the kept copy; a list with a bad line is refused naming the line, and
/// nothing of it is applied.
@Suite(.serialized, .processes) struct FleetRequestsBlobTests {
    static let device = "van-1"

    /// `count` requests, seeded: customer sites (circles around Europe) and, every 50th, a
    /// weekday reminder; as JSON Lines.
    static func requestList(_ count: Int, seed: UInt64, prefix: String = "site") -> String {
        var rng = SplitMix64(seed: seed)
        var out = ""
        for i in 0..<count {
            if i % 50 == 49 {
                out += #"{"id":"\#(prefix)-\#(i)","content":{"title":"Vehicle check \#(i)"},"trigger":{"calendar":{"match":{"hour":7,"minute":\#(i % 60)},"repeats":true}}}"# + "\n"
            } else {
                let lat = rng.uniform(36, 60), lon = rng.uniform(-10, 30), r = rng.int(50 ... 2000)
                out += #"{"id":"\#(prefix)-\#(i)","content":{"title":"Customer \#(i)","body":"Deliver to site \#(i)"},"trigger":{"location":{"region":{"circle":{"lat":\#(String(format: "%.5f", lat)),"lon":\#(String(format: "%.5f", lon)),"radius":\#(r)}},"notifyOnEntry":true}}}"# + "\n"
            }
        }
        return out
    }

    static func reported(_ broker: MosquittoBroker) -> JSONValue? { FleetRolloutTests.reported(broker) }

    static func pendingTotal(_ agent: AgentProcess) -> Int64? {
        (try? agent.call("pending", #"{"limit":1}"#))?["result"]?["total"]?.int64
    }

    @Test func aLargeRequestListArrivesAsABlobThroughACutAndAKill() throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let seed = ProcessInfo.processInfo.environment["FENCEPOST_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1 ... 1_000_000)
        print("aLargeRequestListArrivesAsABlobThroughACutAndAKill: seed \(seed) (FENCEPOST_SEED=\(seed) repeats it)")
        let broker = try MosquittoBroker(.init(plainTCP: true))
        let proxy = try FaultProxy(target: "127.0.0.1:\(broker.plainPort!)")
        let agent = try AgentProcess()
        #expect(try agent.startOnFleet("mqtt://127.0.0.1:\(proxy.port)", device: Self.device, online: broker), "never online: \(agent.log)")

        // 5,000 requests (about 1.1 MB of JSON Lines; FENCEPOST_LIST_SIZE sets another count): far
        // more than a document holds (a few hundred).
        let count = ProcessInfo.processInfo.environment["FENCEPOST_LIST_SIZE"].flatMap { Int($0) } ?? 5_000
        let list = agent.dir.appendingPathComponent("sites.jsonl").path
        try Self.requestList(count, seed: seed).write(toFile: list, atomically: true, encoding: .utf8)
        try proxy.command("throttle 60000")
        _ = try proxy.command("zero")
        let push = try Binaries.run(["fleet", "push", Self.device, list, "--fleet", "acme", "--chunk-size", "1024", "--json", "--broker", broker.address])
        #expect(push.status == 0, "\(push)")
        let pushed = try JSONValue.parse(push.stdout)
        let sha = try #require(pushed["requestsBlob"]?["sha256"]?.string, "\(push)")
        let size = try #require(pushed["requestsBlob"]?["size"]?.int64.map(Int.init))
        let desired = try #require(try FleetTools.run(["/usr/bin/mosquitto_sub", "--unix", broker.socketPath, "-t", "fencepost/v1/dev/\(Self.device)/desired",
                                                       "-C", "1", "-W", "2"]).output.split(separator: "\n").first.map { try JSONValue.parse(String($0)) })
        #expect(desired["requests"]?["blob"]?["format"]?.string == "jsonl" && desired["requests"]?["blob"]?["sha256"]?.string == sha, "\(desired.serialized())")
        // The manifest as the broker holds it: its topic sizes each chunk's framing.
        let held = try FleetTools.run(["/usr/bin/mosquitto_sub", "--unix", broker.socketPath, "-t", "fencepost/v1/fleet/+/blob/\(sha)/m", "-v", "-C", "1", "-W", "2"]).output
        let manifest = (topic: String(held.prefix { $0 != " " }), bytes: held.trimmingCharacters(in: .newlines).utf8.count - held.prefix { $0 != " " }.utf8.count - 1)
        #expect(manifest.topic.hasSuffix("/\(sha)/m") && manifest.bytes > 64 * size / 1024, "no manifest for \(sha): \(held.prefix(300))")

        func progress() -> (have: Int, of: Int, state: String) {
            let r = Self.reported(broker)
            return (Int(r?["requests"]?["pending"]?["have"]?.int64 ?? 0), Int(r?["requests"]?["pending"]?["of"]?.int64 ?? 0), r?["state"]?.string ?? "")
        }
        func waitHave(_ fraction: Double) -> Bool {
            SpawnedProcess.wait(timeout: 60) { let p = progress(); return (p.of > 0 && Double(p.have) >= fraction * Double(p.of)) || p.state == "applied" || p.state == "failed" }
        }
        #expect(waitHave(0.25), "no progress: \(progress()) \(agent.log.suffix(3000))")
        var rng = SplitMix64.stream(seed: seed, index: 1)
        try proxy.command("cut \(rng.int(4_000 ... 12_000)) rst")
        #expect(SpawnedProcess.wait(timeout: 30) { ((try? proxy.stats.resets) ?? 0) >= 1 }, "the link was never cut")
        #expect(waitHave(0.5), "no progress after the cut: \(progress()) \(agent.log.suffix(3000))")
        agent.powerCut()
        #expect(Self.pendingTotal(agent) == nil)
        try agent.start(agent: true)
        #expect(agent.waitUntilRunning(), "\(agent.log.suffix(3000))")

        // The rest of the download at the proxy's 60 kB/s (twice over: a loaded machine), the
        // read and the apply: 120 s covers the default list; a larger one (FENCEPOST_LIST_SIZE)
        // gets its own download time and a millisecond a request on top.
        let applyWait = 120 + 2 * Double(size) / 60_000 + Double(count) / 1_000
        var final: JSONValue?
        let arrived = SpawnedProcess.wait(timeout: applyWait) {
            final = Self.reported(broker)
            return final?["state"]?.string == "applied" || final?["state"]?.string == "failed"
        }
        #expect(arrived && final?["state"]?.string == "applied", "\(final?.serialized() ?? "nothing") \(agent.log.suffix(4000))")
        #expect(final?["requests"]?["count"]?.int64 == Int64(count) && final?["requests"]?["blob"]?.string == sha
                && final?["requests"]?["added"]?.int64 == Int64(count) && final?["result"] == nil, "\(final?.serialized() ?? "")")
        #expect(Self.pendingTotal(agent) == Int64(count), "\(agent.log.suffix(2000))")
        let stats = try proxy.stats
        let ratio = Double(stats.down) / Double(size)
        print("aLargeRequestListArrivesAsABlobThroughACutAndAKill: \(count) requests, \(size) bytes gzipped; \(stats.down) bytes down the link (\(String(format: "%.3f", ratio))×), \(stats.resets) resets")
        // Each chunk once with its MQTT framing (a PUBLISH of its topic, a SUBACK and an UNSUBACK:
        // the topic plus at most 24 bytes), the manifest (a hash per chunk) once per connection (3:
        // the first, after the cut, after the kill), the chunks in flight at the cut and at the
        // kill (a window of 16 each) twice, and 8 KiB a connection for the rest (CONNACK, the
        // desired document, the status).
        let chunks = (size + 1023) / 1024
        let framing = manifest.topic.utf8.count + 24
        let bound = size + chunks * framing + 3 * (manifest.bytes + framing) + 2 * 16 * (1024 + framing) + 3 * 8192
        #expect(stats.down <= bound, "\(stats.down) bytes on the wire for \(size) compressed in \(chunks) chunks; at most \(bound): \(chunks) × \(framing) of framing, a manifest of \(manifest.bytes) bytes 3 times, 2 windows, 3 × 8 KiB")
        #expect(agent.log.contains("resuming with"), "no resume after the kill: \(agent.log.suffix(3000))")
        if let pid = agent.pid, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
           let peak = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) {
            print("aLargeRequestListArrivesAsABlobThroughACutAndAKill: agent after the apply: \(peak.split(separator: " ", omittingEmptySubsequences: true).dropFirst().joined(separator: " ")) resident at its peak")
        }
        for line in agent.log.split(separator: "\n") where line.contains("read and checked") || line.contains("applied with request list") || line.contains("in parts") || line.contains("loop turns") || line.contains("regions: index") {
            print("aLargeRequestListArrivesAsABlobThroughACutAndAKill: \(line)")
        }

        // A new version naming the same list with new categories: applied from the kept copy,
        // nothing fetched; the requests are left as they are.
        _ = try proxy.command("zero")
        let again = #"{"v":1,"version":2,"requests":{"blob":\#(desired["requests"]!["blob"]!.serialized())},"categories":[{"id":"site","actions":[{"id":"done","title":"Delivered"}]}]}"#
        #expect(try broker.publish("fencepost/v1/dev/\(Self.device)/desired", again, retain: true) == 0)
        var second: JSONValue?
        #expect(SpawnedProcess.wait(timeout: 60) {
            second = Self.reported(broker)
            return second?["desiredVersion"]?.int64 == 2 && (second?["state"]?.string == "applied" || second?["state"]?.string == "failed")
        })
        #expect(second?["state"]?.string == "applied" && second?["requests"]?["unchanged"]?.int64 == Int64(count), "\(second?.serialized() ?? "nothing") \(agent.log.suffix(2000))")
        let downAgain = try proxy.stats.down
        #expect(downAgain < 20_000, "the kept list was fetched again: \(downAgain) bytes")
        #expect(agent.log.contains("is the list in force, kept"), "\(agent.log.suffix(2000))")
        #expect(try agent.call("categories")["result"]?[0]?["id"]?.string == "site")

        // No turn over 50 ms of the agent's own work: chunks, the read-back check, the list's
        // apply in parts; the index of its regions is built on a thread.
        #expect(agent.log.contains("regions: index built in"), "\(agent.log.suffix(2000))")
        let turns = agent.ownSlowTurns(printing: "aLargeRequestListArrivesAsABlobThroughACutAndAKill")
        #expect(turns.isEmpty, "loop turns over 50 ms: \(turns)")
        // And on the CPU, from the summary the agent logs at its stop (its life since the kill:
        // the rest of the download, the read, both applies).
        agent.stop()
        let most = agent.mostCPUInOneTurn
        print("aLargeRequestListArrivesAsABlobThroughACutAndAKill: the most CPU in one turn: \(most.map { "\($0.milliseconds) ms (\($0.what))" } ?? "no summary")")
        #expect(agent.turnsOverBudgetOnTheCPU?.count == 0, "\(agent.turnsOverBudgetOnTheCPU?.summary ?? "no summary of the loop turns") \(agent.log.suffix(2000))")
    }

    /// A list the board must refuse, whole: a bad line (published by hand, past the CLI's check),
    /// a list that is not gzip. `reported` names the line; nothing of it is applied.
    @Test func aBadListIsRefusedNamingItsLineAndNothingIsApplied() throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let broker = try MosquittoBroker()
        let agent = try AgentProcess()
        #expect(try agent.startOnFleet(broker.address, device: Self.device, online: broker), "never online: \(agent.log)")
        _ = try agent.call("add", #"{"request":{"id":"mine","content":{"title":"T"},"trigger":{"interval":{"seconds":3600,"repeats":true}}}}"#)

        /// Publishes `text` gzipped as a blob in one chunk, and a desired document naming it.
        func publishList(_ text: String, version: Int, gzip: Bool = true) throws {
            let raw = agent.dir.appendingPathComponent("list-\(version).jsonl").path
            try text.write(toFile: raw, atomically: true, encoding: .utf8)
            let blobPath = gzip ? raw + ".gz" : raw
            if gzip { _ = try Gzip.compress(raw, to: blobPath) }
            let blob = [UInt8](try Data(contentsOf: URL(fileURLWithPath: blobPath)))
            let m = try BlobPacking.manifest(of: blob, chunkSize: 65536, rawSize: text.utf8.count)
            let root = "fencepost/v1/fleet/acme/blob/\(m.sha256)"
            #expect(try FleetTools.run(["/usr/bin/mosquitto_pub", "--unix", broker.socketPath, "-q", "1", "-r", "-t", "\(root)/0", "-f", blobPath]).status == 0)
            #expect(try broker.publish("\(root)/m", String(decoding: m.payload, as: UTF8.self), retain: true) == 0)
            let ref = BlobReference(sha256: m.sha256, size: m.size, fleet: try FleetName("acme"), format: .jsonl)
            #expect(try broker.publish("fencepost/v1/dev/\(Self.device)/desired", #"{"v":1,"version":\#(version),"requests":{"blob":\#(ref.json.serialized())}}"#, retain: true) == 0)
        }
        func waitFinal(_ version: Int) -> JSONValue? {
            var r: JSONValue?
            _ = SpawnedProcess.wait(timeout: 30) {
                r = Self.reported(broker)
                return r?["desiredVersion"]?.int64 == Int64(version) && (r?["state"]?.string == "failed" || r?["state"]?.string == "applied")
            }
            return r
        }
        // Line 4 breaks a rule (a negative interval); lines 1-3 are fine; a blank line counts.
        let good = Self.requestList(3, seed: 7, prefix: "ok")
        try publishList(good + "\n" + #"{"id":"bad","content":{"title":"T"},"trigger":{"interval":{"seconds":-5}}}"# + "\n", version: 1)
        var r = waitFinal(1)
        let message = r?["error"]?["message"]?.string ?? ""
        #expect(r?["state"]?.string == "failed" && r?["error"]?["code"]?.string == "desired.rejected" && message.hasPrefix("line 5:") && message.contains("interval"),
                "\(r?.serialized() ?? "nothing") \(agent.log.suffix(2000))")
        // Two requests with one id: both lines named.
        try publishList(good + #"{"id":"ok-1","content":{"title":"again"},"trigger":{"interval":{"seconds":60}}}"# + "\n", version: 2)
        r = waitFinal(2)
        #expect(r?["error"]?["message"]?.string == "line 4: id \"ok-1\" is given twice (first at line 2)", "\(r?.serialized() ?? "nothing")")
        // Not gzip: the hashes match, the reading refuses it.
        try publishList(good, version: 3, gzip: false)
        r = waitFinal(3)
        #expect(r?["state"]?.string == "failed" && r?["error"]?["message"]?.string?.contains("gunzipped") == true, "\(r?.serialized() ?? "nothing")")
        // Nothing of the refused lists came in; the request added by hand is still there.
        let pending = try agent.call("pending")
        #expect(pending["result"]?.array?.compactMap { $0["request"]?["id"]?.string } == ["mine"], "\(pending.serialized())")
        // The good list applies (apply removes nothing it did not add: "mine" stays).
        try publishList(good, version: 4)
        r = waitFinal(4)
        #expect(r?["state"]?.string == "applied" && r?["requests"]?["added"]?.int64 == 3, "\(r?.serialized() ?? "nothing") \(agent.log.suffix(2000))")
        #expect(Self.pendingTotal(agent) == 4)
    }

    /// A board's own file and the fleet's desired state install requests apart: the board's
    /// start and a SIGHUP apply its file, which does not name the fleet's requests, and must leave
    /// them (they removed them all, and the retained document, applied already, was not applied
    /// again: a reboot lost every reminder the fleet had set).
    @Test func theFleetsRequestsSurviveARestartAndASIGHUP() throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let broker = try MosquittoBroker()
        let agent = try AgentProcess()
        let own = """
            [[request]]
            id = "own"
            content.title = "Own"
            trigger.interval.seconds = 3600
            trigger.interval.repeats = true

            """
        #expect(try agent.startOnFleet(broker.address, device: Self.device, online: broker, extra: own), "never online: \(agent.log)")
        let list = Self.requestList(3, seed: 11, prefix: "f").split(separator: "\n").joined(separator: ",")
        #expect(try broker.publish("fencepost/v1/dev/\(Self.device)/desired", #"{"v":1,"version":1,"requests":[\#(list)]}"#, retain: true) == 0)
        #expect(SpawnedProcess.wait(timeout: 20) { Self.reported(broker)?["state"]?.string == "applied" }, "\(agent.log.suffix(2000))")
        func ids() -> [String] {
            ((try? agent.call("pending"))?["result"]?.array ?? []).compactMap { $0["request"]?["id"]?.string }.sorted()
        }
        #expect(ids() == ["f-0", "f-1", "f-2", "own"])
        agent.stop()
        try agent.start(agent: true)
        #expect(agent.waitUntilRunning(), "\(agent.log.suffix(2000))")
        #expect(ids() == ["f-0", "f-1", "f-2", "own"], "after a restart: \(agent.log.suffix(2000))")
        // The file drops its request: a SIGHUP removes that one only.
        try agent.writeFleetConfig(fleet: "broker = \"\(broker.address)\"\ndevice = \"\(Self.device)\"\nkeepalive = 5\n")
        agent.signal(SIGHUP)
        #expect(agent.wait(timeout: 20) { ids() == ["f-0", "f-1", "f-2"] }, "after a SIGHUP: \(ids()) \(agent.log.suffix(2000))")
    }

    /// One apply in parts at a time: a SIGHUP while the fleet's list is applied in parts applies
    /// its settings at once and its requests once the fleet's apply has ended (the two owners'
    /// plans share one engine: its categories, its caps); both end applied, each list whole.
    @Test func aSIGHUPsRequestsWaitForTheFleetsApplyUnderWay() throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let broker = try MosquittoBroker()
        let agent = try AgentProcess()
        let fleet = "broker = \"\(broker.address)\"\ndevice = \"\(Self.device)\"\nkeepalive = 5\n"
        #expect(try agent.startOnFleet(broker.address, device: Self.device, online: broker), "never online: \(agent.log)")
        let count = 5_000
        let list = agent.dir.appendingPathComponent("sites.jsonl").path
        try Self.requestList(count, seed: 3).write(toFile: list, atomically: true, encoding: .utf8)
        let push = try Binaries.run(["fleet", "push", Self.device, list, "--fleet", "acme", "--json", "--broker", broker.address])
        #expect(push.status == 0, "\(push)")
        #expect(agent.waitForLog("applying \(count) requests in parts", timeout: 60), "\(agent.log.suffix(2000))")
        try agent.writeFleetConfig(fleet: fleet, extra: """
            [[request]]
            id = "own"
            content.title = "Own"
            trigger.interval.seconds = 3600
            trigger.interval.repeats = true

            """)
        agent.signal(SIGHUP)
        #expect(agent.waitForLog("configuration: its 1 requests wait for the apply under way (fleet: ", timeout: 20), "\(agent.log.suffix(2000))")
        #expect(agent.waitForLog("configuration applied: 1 added (own)", timeout: 60), "\(agent.log.suffix(2000))")
        #expect(SpawnedProcess.wait(timeout: 20) { Self.reported(broker)?["state"]?.string == "applied" }, "\(agent.log.suffix(2000))")
        let log = agent.log
        let fleetApplied = log.range(of: " loop turns, ")
        let ownBegins = log.range(of: "configuration: applying 1 requests in parts")
        #expect(fleetApplied != nil && ownBegins != nil && fleetApplied!.lowerBound < ownBegins!.lowerBound,
                "the configuration's apply began before the fleet's ended: \(log.suffix(3000))")
        #expect(Self.pendingTotal(agent) == Int64(count + 1), "\(agent.log.suffix(2000))")
        for line in log.split(separator: "\n") where line.contains("in parts") || line.contains("loop turns") || line.contains("wait for") {
            print("aSIGHUPsRequestsWaitForTheFleetsApplyUnderWay: \(line)")
        }
    }

    /// The reader, pure: blank lines skipped and counted, the first bad line named, two of one id
    /// named both, `apply`'s "requests[i]" said as the line.
    @Test func theReaderNamesTheLine() throws {
        let good = Self.requestList(3, seed: 5, prefix: "a")
        let list = try FleetRequestList.parse(Array(("\n" + good + "  \n").utf8))
        #expect(list.requests.map(\.identifier) == ["a-0", "a-1", "a-2"] && list.lines == [2, 3, 4] && list.fingerprints.count == 3)
        #expect(list.locate("requests[2]: trigger.interval.seconds must be greater than 0") == "line 4: trigger.interval.seconds must be greater than 0")
        #expect(list.locate("categories: x") == "categories: x")
        for (text, message) in [(good + "{\"id\":\n", "line 4: not JSON"),
                                (good + "[1]\n", "line 4: "),
                                (good + #"{"id":"a-1","content":{"title":"T"},"trigger":{"interval":{"seconds":60}}}"#, "line 4: id \"a-1\" is given twice (first at line 2)")] {
            do { _ = try FleetRequestList.parse(Array(text.utf8)); Issue.record("accepted: \(text.suffix(40))") } catch {
                #expect(error.code == "requests.invalid" && error.message.hasPrefix(message), "\(error)")
            }
        }
        #expect(try FleetRequestList.parse([]).requests.isEmpty)
    }

    /// The operator's side: a list the board would refuse stops the push before anything is
    /// published, naming the line in the operator's file; a small list goes inline unless asked.
    @Test func pushChecksTheListAndNamesTheLineInTheFile() throws {
        guard FleetTools.all() else { return }
        let broker = try MosquittoBroker()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-reqblob-\(getpid())-\(UInt32.random(in: 0 ... .max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("vans.toml").path
        try """
            [[request]]
            id = "a"
            content.title = "A"
            trigger.interval.seconds = 600

            [[request]]
            id = "a"
            content.title = "B"
            trigger.calendar.match.hour = 7
            """.write(toFile: config, atomically: true, encoding: .utf8)
        var out = try Binaries.run(["fleet", "push", Self.device, config, "--requests-blob", "--broker", broker.address])
        #expect(out.status == 65 && out.stderr.contains("\(config):6:") && out.stderr.contains("\"a\""), "\(out)")
        let published = try FleetTools.run(["/usr/bin/mosquitto_sub", "--unix", broker.socketPath, "-v", "-t", "fencepost/v1/#", "-C", "1", "-W", "1"])
        #expect(!published.output.contains("fencepost/v1/"), "something was published: \(published)")
        // Fixed: a small list goes inline; with --requests-blob, as a blob.
        try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(of: "id = \"a\"\ncontent.title = \"B\"", with: "id = \"b\"\ncontent.title = \"B\"").write(toFile: config, atomically: true, encoding: .utf8)
        out = try Binaries.run(["fleet", "push", Self.device, config, "--broker", broker.address, "--json"])
        let inline = try JSONValue.parse(out.stdout)
        #expect(out.status == 0 && inline["requestsBlob"]?.isNull == true, "\(out)")
        out = try Binaries.run(["fleet", "push", Self.device, config, "--requests-blob", "--broker", broker.address])
        #expect(out.status == 0 && out.stdout.contains("request list (the requests of \(config))") && out.stdout.contains("in request list"), "\(out)")
        let doc = try FleetTools.run(["/usr/bin/mosquitto_sub", "--unix", broker.socketPath, "-t", "fencepost/v1/dev/\(Self.device)/desired", "-C", "1", "-W", "2"])
        #expect(doc.output.contains(#""blob":{"sha256":"#) && doc.output.contains(#""format":"jsonl""#), "\(doc)")
    }
}
