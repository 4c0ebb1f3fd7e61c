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

/// A zone set rolled out through the broker end to end: `fencepost fleet push --zones` publishes
/// the blob, a real agent behind the fault proxy downloads it while its link is cut twice, a byte
/// of a chunk is flipped on the wire, and the agent is killed once; the set must arrive, verify
/// and apply, with the bytes on the wire within 5 % of the compressed size.
@Suite(.serialized, .processes) struct FleetRolloutTests {
    static let device = "van-1"

    /// `count` circles around Europe, seeded, as GeoJSON.
    static func circles(_ count: Int, seed: UInt64) -> String {
        var rng = SplitMix64(seed: seed)
        var out = #"{"type":"FeatureCollection","features":["#
        for i in 0..<count {
            if i > 0 { out += ",\n" }
            let lon = rng.uniform(-10, 30), lat = rng.uniform(36, 60), r = rng.int(50 ... 2000)
            out += #"{"type":"Feature","id":"z-\#(i)","geometry":{"type":"Point","coordinates":[\#(String(format: "%.5f", lon)),\#(String(format: "%.5f", lat))]},"properties":{"radius":\#(r)}}"#
        }
        return out + "]}\n"
    }

    static func reported(_ broker: MosquittoBroker) -> JSONValue? {
        guard let out = try? FleetTools.run(["/usr/bin/mosquitto_sub", "--unix", broker.socketPath, "-t", "fencepost/v1/dev/\(device)/reported",
                                             "-C", "1", "-W", "1"]),
              let line = out.output.split(separator: "\n").first else { return nil }
        return try? JSONValue.parse(String(line))
    }

    @Test func zoneSetArrivesThroughCutsAKillAndAFlippedByte() throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let seed = ProcessInfo.processInfo.environment["FENCEPOST_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1 ... 1_000_000)
        print("zoneSetArrivesThroughCutsAKillAndAFlippedByte: seed \(seed) (FENCEPOST_SEED=\(seed) repeats it)")
        let broker = try MosquittoBroker(.init(plainTCP: true))
        let proxy = try FaultProxy(target: "127.0.0.1:\(broker.plainPort!)")
        let agent = try AgentProcess()
        #expect(try agent.startOnFleet("mqtt://127.0.0.1:\(proxy.port)", device: Self.device, online: broker), "never online: \(agent.log)")

        // The set: 150,000 circles, gzipped by the operator's push; chunks of 16 KiB. The link is
        // stalled until the byte to flip is chosen (from the chunks the broker then holds).
        let zones = 150_000
        let geojson = agent.dir.appendingPathComponent("zones.geojson").path
        try Self.circles(zones, seed: seed).write(toFile: geojson, atomically: true, encoding: .utf8)
        try proxy.command("throttle 500000")
        try proxy.command("mode stall")
        _ = try proxy.command("zero")
        let push = try Binaries.run(["fleet", "push", Self.device, "--zones", geojson, "--fleet", "acme", "--chunk-size", "16384", "--json",
                                     "--broker", broker.address])
        #expect(push.status == 0, "\(push)")
        let pushed = try JSONValue.parse(push.stdout)
        let sha = try #require(pushed["zoneSet"]?["sha256"]?.string, "\(push)")
        let size = try #require(pushed["zoneSet"]?["size"]?.int64.map(Int.init))
        // The retained manifest and a chunk in the middle (its bytes: the pattern to flip).
        let root = "fencepost/v1/fleet/acme/blob/\(sha)"
        let manifestOut = try FleetTools.run(["/usr/bin/mosquitto_sub", "--unix", broker.socketPath, "-t", "\(root)/m", "-C", "1", "-W", "2"])
        let manifest = try JSONValue.parse(String(manifestOut.output.split(separator: "\n").first ?? ""))
        let chunks = try #require(manifest["chunks"]?.int64.map(Int.init), "\(manifestOut)")
        #expect(manifest["size"]?.int64 == Int64(size) && chunks == (size + 16383) / 16384)
        let flipChunk = chunks / 4
        let chunkBytes = try FleetTools.run(["/bin/sh", "-c", "mosquitto_sub --unix \(broker.socketPath) -t \(root)/\(flipChunk) -C 1 -W 2 -N | od -An -tx1 -v | tr -d ' \\n'"])
        let hex = chunkBytes.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(hex.count == 16384 * 2, "chunk \(flipChunk): \(hex.count / 2) bytes")
        let pattern = String(hex.dropFirst(8000 * 2).prefix(32))
        try proxy.command("flip \(pattern)")
        try proxy.command("mode pass")

        func progress() -> (have: Int, of: Int, state: String) {
            let r = Self.reported(broker)
            return (Int(r?["zoneSet"]?["pending"]?["have"]?.int64 ?? 0), Int(r?["zoneSet"]?["pending"]?["of"]?.int64 ?? 0), r?["state"]?.string ?? "")
        }
        func waitHave(_ fraction: Double) -> Bool {
            SpawnedProcess.wait(timeout: 60) { let p = progress(); return (p.of > 0 && Double(p.have) >= fraction * Double(p.of)) || p.state == "applied" || p.state == "failed" }
        }
        // Cut twice (RST mid-chunk), then kill the agent (a power cut), each at a point of the download.
        #expect(waitHave(0.15), "no progress: \(progress()) \(agent.log.suffix(3000))")
        try proxy.command("cut \(rngBytes(seed, 1)) rst")
        #expect(waitHave(0.35), "no progress after the first cut: \(progress()) \(agent.log.suffix(3000))")
        try proxy.command("cut \(rngBytes(seed, 2)) rst")
        #expect(waitHave(0.55), "no progress after the second cut: \(progress()) \(agent.log.suffix(3000))")
        agent.powerCut()
        try agent.start(agent: true)
        #expect(agent.waitUntilRunning(), "\(agent.log.suffix(3000))")

        var final: JSONValue?
        let arrived = SpawnedProcess.wait(timeout: 180) {
            final = Self.reported(broker)
            return final?["state"]?.string == "applied" || final?["state"]?.string == "failed"
        }
        #expect(arrived && final?["state"]?.string == "applied", "\(final?.serialized() ?? "nothing") \(agent.log.suffix(4000))")
        #expect(final?["zoneSet"]?["active"]?.string == sha && final?["zoneSet"]?["zones"]?.int64 == Int64(zones), "\(final?.serialized() ?? "")")
        let stats = try proxy.stats
        let ratio = Double(stats.down) / Double(size)
        print("zoneSetArrivesThroughCutsAKillAndAFlippedByte: \(size) bytes gzipped in \(chunks) chunks; \(stats.down) bytes down the link (\(String(format: "%.3f", ratio))×), \(stats.resets) resets, \(stats.flipped ?? 0) byte flipped")
        #expect(stats.flipped == 1, "the flip pattern was never seen")
        #expect(ratio <= 1.05, "\(stats.down) bytes on the wire for \(size) compressed")
        let log = agent.log
        for line in log.split(separator: "\n") where line.contains("downloaded and verified") || line.contains("resuming with") || line.contains("zone set rebuilt") {
            print("zoneSetArrivesThroughCutsAKillAndAFlippedByte: \(line)")
        }
        #expect(log.contains("chunk \(flipChunk) arrived with a wrong SHA-256"), "the flipped chunk was not detected: \(log.suffix(3000))")
        #expect(log.contains("resuming with"), "no resume after the kill: \(log.suffix(3000))")
        // The set is in force: the agent's status counts its zones; a restart keeps it (the source is the fleet's GeoJSON).
        agent.stop()
        try agent.start(agent: true)
        #expect(agent.waitUntilRunning(), "\(agent.log.suffix(2000))")
        #expect(agent.log.components(separatedBy: "--- restart ---").last?.contains("\(zones) zones") == true, "\(agent.log.suffix(2000))")
        // No turn over 50 ms of the agent's own work (CPU time: a turn that waited off the CPU on
        // a loaded machine is logged, not the agent's doing), whatever it did: a chunk received,
        // hashed, written and recorded; the read-back check; the new set's structure check
        // before the swap (in slices sized by their CPU time); deliveries meanwhile.
        let turns = agent.ownSlowTurns(printing: "zoneSetArrivesThroughCutsAKillAndAFlippedByte")
        #expect(turns.isEmpty, "loop turns over 50 ms: \(turns)")
    }

    /// Blobs the board must refuse, each named in `reported`: a manifest for another hash, a set
    /// that does not fit the disk (its manifest says a GeoJSON of a petabyte), a blob whose
    /// chunks match but which is not gzip (the build child refuses it; no zone set comes in).
    @Test func refusedBlobsAreReportedWithTheReason() throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let broker = try MosquittoBroker()
        let agent = try AgentProcess()
        #expect(try agent.startOnFleet(broker.address, device: Self.device, online: broker), "never online: \(agent.log)")

        let blob = Array("not gzip at all, but hashed and chunked as a blob must be\n".utf8)
        let sha = try SHA256.hex(blob)
        let root = "fencepost/v1/fleet/acme/blob/\(sha)"
        let chunk = agent.dir.appendingPathComponent("chunk0").path
        try Data(blob).write(to: URL(fileURLWithPath: chunk))
        #expect(try FleetTools.run(["/usr/bin/mosquitto_pub", "--unix", broker.socketPath, "-q", "1", "-r", "-t", "\(root)/0", "-f", chunk]).status == 0)
        func manifest(sha field: String, rawSize: Int) throws -> String {
            try BlobManifest(sha256: field, size: blob.count, chunkSize: 65536, chunkSHA256: [FleetHex.decode(sha, count: 32)!], rawSize: rawSize)
                .payload.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
        }
        func desired(_ version: Int) -> String {
            #"{"v":1,"version":\#(version),"requests":[],"zoneSet":{"sha256":"\#(sha)","size":\#(blob.count),"encoding":"gzip","format":"geojson","fleet":"acme"}}"#
        }
        func waitFailed(_ version: Int) -> JSONValue? {
            var r: JSONValue?
            _ = SpawnedProcess.wait(timeout: 30) {
                r = Self.reported(broker)
                return r?["desiredVersion"]?.int64 == Int64(version) && r?["state"]?.string == "failed"
            }
            return r
        }
        // 1. The manifest names another blob.
        let other = String(repeating: "ab", count: 32)
        #expect(try broker.publish("\(root)/m", try manifest(sha: other, rawSize: 10), retain: true) == 0)
        #expect(try broker.publish("fencepost/v1/dev/\(Self.device)/desired", desired(1), retain: true) == 0)
        var r = waitFailed(1)
        #expect(r?["error"]?["code"]?.string == "blob.manifestMismatch" && r?["error"]?["message"]?.string?.contains(other) == true, "\(r?.serialized() ?? "nothing") \(agent.log.suffix(2000))")
        // 2. It does not fit the disk: the shortfall is named.
        #expect(try broker.publish("\(root)/m", try manifest(sha: sha, rawSize: 1 << 50), retain: true) == 0)
        #expect(try broker.publish("fencepost/v1/dev/\(Self.device)/desired", desired(2), retain: true) == 0)
        r = waitFailed(2)
        let message = r?["error"]?["message"]?.string ?? ""
        #expect(r?["error"]?["code"]?.string == "zoneset.disk" && message.contains("free") && message.contains("short"), "\(r?.serialized() ?? "nothing") \(agent.log.suffix(2000))")
        // 3. Verified, but not gzip: the build refuses it; the board has no zone set from the fleet.
        #expect(try broker.publish("\(root)/m", try manifest(sha: sha, rawSize: 100), retain: true) == 0)
        #expect(try broker.publish("fencepost/v1/dev/\(Self.device)/desired", desired(3), retain: true) == 0)
        r = waitFailed(3)
        #expect(r?["error"]?["code"]?.string == "zoneset.build" && r?["error"]?["message"]?.string?.contains("gunzipped") == true, "\(r?.serialized() ?? "nothing") \(agent.log.suffix(2000))")
        #expect(agent.log.contains("not a gzip file"), "\(agent.log.suffix(2000))")
        // The retained document is not tried again at each reconnect; the agent still answers.
        #expect(try agent.cli(["status", "--json"]).status == 0)
    }

    /// Bytes before the k-th cut: 60–200 KB after the command, seeded.
    func rngBytes(_ seed: UInt64, _ k: UInt64) -> Int {
        var rng = SplitMix64.stream(seed: seed, index: k)
        return rng.int(60_000 ... 200_000)
    }
}
