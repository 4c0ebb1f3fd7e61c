import Fleet
import FencepostJSON
import FencepostLinux
import Foundation
import SeededRandom
import Testing

/// The blob download's state machine against a simulated broker that holds the retained chunks
/// and a link with seeded faults; the codecs (libcrypto's SHA-256, zlib's gzip) on real files.
struct BlobDownloadTests {
    static func blob(_ count: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    static func reference(_ m: BlobManifest) throws -> BlobReference {
        BlobReference(sha256: m.sha256, size: m.size, fleet: try FleetName("acme"))
    }

    @Test("SHA-256 from libcrypto: the FIPS 180-2 vectors, in pieces and at once; the context is reusable")
    func sha256Vectors() throws {
        var h = try SHA256()
        #expect(FleetHex.encode(h.digest(of: Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(FleetHex.encode(h.digest(of: [])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        for piece in stride(from: 0, to: million.count, by: 4096) {
            million.withUnsafeBytes { h.update(UnsafeRawBufferPointer(rebasing: $0[piece..<min(piece + 4096, million.count)])) }
        }
        #expect(FleetHex.encode(h.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("manifests: sizes, counts and hex checked, a manifest for another hash refused, the field named")
    func manifestValidation() throws {
        let data = Self.blob(200_000, seed: 1)
        let m = try BlobPacking.manifest(of: data, rawSize: 900_000)
        #expect(m.chunks == 4 && m.range(of: 3) == (196_608, 3392))
        let ref = try Self.reference(m)
        let back = try BlobManifest(parsing: m.payload, for: ref)
        #expect(back == m)
        func edited(_ change: (inout [(key: String, value: JSONValue)]) -> Void) -> [UInt8] {
            var o = try! JSONValue.parse(m.payload).object!
            change(&o)
            return Array(JSONValue.object(o).serialized().utf8)
        }
        func set(_ key: String, _ v: JSONValue) -> [UInt8] {
            edited { o in if let i = o.firstIndex(where: { $0.key == key }) { o[i].value = v } else { o.append((key, v)) } }
        }
        let other = String(repeating: "ab", count: 32)
        let cases: [([UInt8], String)] = [
            (set("sha256", .string(other)), "another hash"),
            (set("size", 199_999), "the desired document says 200000"),
            (set("chunks", 5), "\"chunks\" must be 4"),
            (set("chunkSize", 100), "\"chunkSize\""),
            (set("encoding", "zstd"), "\"encoding\""),
            (set("v", 2), "\"v\""),
            (set("extra", 1), "unknown key \"extra\""),
            (set("chunkSha256", .array([.string("00")])), "array of 4"),
            (set("chunkSha256", .array(Array(repeating: .string(String(repeating: "A", count: 64)), count: 4))), "chunkSha256\"[0]"),
            (set("rawSize", -1), "rawSize"),
            (Array("[]".utf8), "object"),
            (Array("{".utf8), "not JSON"),
        ]
        for (payload, word) in cases {
            do { _ = try BlobManifest(parsing: payload, for: ref); Issue.record("accepted: \(word)") } catch {
                #expect(error.description.contains(word), "\(word): \(error)")
            }
        }
        // A download refuses a manifest for another hash and fails with the reason.
        var d = BlobDownload(reference: ref, hasher: try SHA256(), wholeHasher: try SHA256())
        _ = d.start(now: 0)
        let out = d.receive(topic: ref.topics.manifest, payload: set("sha256", .string(other)), now: 1)
        #expect(d.phase == .failed && out.contains(.unsubscribe(ref.topics.manifest)))
        #expect(d.error?.code == "blob.manifestMismatch")
    }

    @Test("zoneSet references and topics: hash, size and fleet checked; chunk topics classified without leading zeros")
    func referencesAndTopics() throws {
        let sha = String(repeating: "0f", count: 32)
        let r = try BlobReference(parsing: .object([("sha256", .string(sha)), ("size", 10), ("encoding", "gzip"), ("format", "geojson"), ("fleet", "acme")]), key: "zoneSet")
        #expect(r.topics.manifest == "fencepost/v1/fleet/acme/blob/\(sha)/m")
        #expect(r.topics.classify(r.topics.chunk(12)) == .chunk(12))
        #expect(r.topics.classify(r.topics.root + "/012") == nil && r.topics.classify(r.topics.root + "/x") == nil)
        #expect(r.topics.classify("fencepost/v1/fleet/acme/blob/\(String(repeating: "1f", count: 32))/0") == nil)
        for (bad, word) in [(JSONValue.object([("sha256", "x"), ("size", 1), ("fleet", "a")]), "sha256"),
                            (.object([("sha256", .string(sha)), ("size", 0), ("fleet", "a")]), "size"),
                            (.object([("sha256", .string(sha)), ("size", 1), ("fleet", "a/b")]), "position 2"),
                            (.object([("sha256", .string(sha)), ("size", 1)]), "fleet"),
                            (.object([("sha256", .string(sha)), ("size", 1), ("fleet", "a"), ("encoding", "br")]), "encoding"),
                            (.object([("sha256", .string(sha)), ("size", 1), ("fleet", "a"), ("url", "x")]), "unknown key \"url\"")] {
            do { _ = try BlobReference(parsing: bad, key: "zoneSet"); Issue.record("accepted: \(word)") } catch {
                #expect(error.description.contains(word), "\(word): \(error)")
            }
        }
        let have: Set<Int> = [0, 3, 8, 9, 4000]
        #expect(BlobChunkRecord.decode(BlobChunkRecord.encode(have, chunks: 4001), chunks: 4001) == have)
        #expect(BlobChunkRecord.decode("zz", chunks: 10) == [])
    }

    /// A broker holding the retained chunks, a link with faults, a board that writes into a
    /// "file", records, restarts, and whose "disk" may lose a write. Returns the chunk payload
    /// bytes the board received.
    struct Simulation {
        var rng: SplitMix64
        let data: [UInt8]
        let manifest: BlobManifest
        let reference: BlobReference
        var file: [UInt8]
        var recorded: Set<Int> = []
        var corruptions = 0, cuts = 0, restarts = 0, drops = 0, diskLosses = 0
        var received = 0

        init(seed: UInt64, size: Int) throws {
            rng = SplitMix64(seed: seed)
            data = BlobDownloadTests.blob(size, seed: seed ^ 0x5eed)
            manifest = try BlobPacking.manifest(of: data, chunkSize: 4096, rawSize: nil)
            reference = try BlobDownloadTests.reference(manifest)
            file = [UInt8](repeating: 0, count: size)
        }

        func retained(_ topic: String) -> [UInt8]? {
            switch reference.topics.classify(topic) {
            case .manifest?: return manifest.payload
            case .chunk(let n)?:
                let (o, l) = manifest.range(of: n)
                return Array(data[o..<o + l])
            case nil: return nil
            }
        }

        /// Runs the download to its end; faults with the given chances per delivery.
        mutating func run(window: Int, fault: Double) throws -> BlobDownload<SHA256> {
            var now: UInt64 = 0
            var d = BlobDownload(reference: reference, recorded: recorded, hasher: try SHA256(), wholeHasher: try SHA256(), window: window, attempts: 50, patience: 5_000_000_000)
            var deliveries: [String] = []
            func perform(_ actions: [BlobDownload<SHA256>.Action], payload: [UInt8]?, sim: inout Simulation) {
                for a in actions {
                    switch a {
                    case .subscribe(let t): deliveries.append(t)
                    case .unsubscribe(let t): deliveries.removeAll { $0 == t }
                    case .allocate: break
                    case .write(let n, let offset):
                        sim.file.replaceSubrange(offset..<offset + payload!.count, with: payload!)
                        if sim.rng.chance(fault / 4) {   // the disk lost the write (a power cut before fsync)
                            sim.file[offset] ^= 0xFF
                            sim.diskLosses += 1
                        }
                        sim.recorded.insert(n)
                    case .forget(let n): sim.recorded.remove(n)
                    case .verify, .complete, .failed: break
                    }
                }
            }
            perform(d.start(now: now), payload: nil, sim: &self)
            var steps = 0
            while d.phase != .complete && d.phase != .failed {
                steps += 1
                precondition(steps < 1_000_000, "no progress")
                now += 10_000_000
                if d.phase == .verifying {
                    let v = d.nextVerification!
                    let out = d.verified(chunk: v.chunk, bytes: Array(file[v.offset..<v.offset + v.length]), now: now)
                    perform(out, payload: nil, sim: &self)
                    continue
                }
                if rng.chance(fault / 10) {   // the board restarts: a new machine from the record
                    restarts += 1
                    d = BlobDownload(reference: reference, recorded: recorded, hasher: try SHA256(), wholeHasher: try SHA256(), window: window, attempts: 50, patience: 5_000_000_000)
                    deliveries = []
                    perform(d.start(now: now), payload: nil, sim: &self)
                    continue
                }
                if rng.chance(fault / 5) {   // the link is cut: what was in flight is lost; a new session
                    cuts += 1
                    deliveries = []
                    perform(d.reconnected(sessionPresent: false, now: now), payload: nil, sim: &self)
                    continue
                }
                guard !deliveries.isEmpty else {
                    now += 5_000_000_000   // nothing comes: patience runs out
                    perform(d.tick(now: now), payload: nil, sim: &self)
                    continue
                }
                let topic = deliveries.removeFirst()
                guard var payload = retained(topic) else { continue }
                if rng.chance(fault) { drops += 1; continue }   // lost: the tick asks again
                if rng.chance(fault), reference.topics.classify(topic) != .manifest {
                    payload[rng.int(0 ... payload.count - 1)] ^= UInt8(1 << rng.int(0 ... 7))
                    corruptions += 1
                }
                if reference.topics.classify(topic) != .manifest { received += payload.count }
                if rng.chance(fault / 2) { deliveries.append(topic) }   // delivered twice
                perform(d.receive(topic: topic, payload: payload, now: now), payload: payload, sim: &self)
                if rng.chance(0.3) { perform(d.tick(now: now), payload: nil, sim: &self) }
            }
            return d
        }
    }

    @Test("download with seeded faults (corrupt, lost and duplicated chunks, cuts, restarts, lost writes): the blob arrives whole")
    func seededFaults() throws {
        let base = ProcessInfo.processInfo.environment["FENCEPOST_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1 ... 1_000_000)
        print("BlobDownloadTests.seededFaults: seed \(base) (FENCEPOST_SEED=\(base) repeats it)")
        var totals = (corruptions: 0, cuts: 0, restarts: 0, drops: 0, diskLosses: 0)
        for k in 0..<40 {
            let seed = base &+ UInt64(k)
            var rng = SplitMix64(seed: seed)
            var sim = try Simulation(seed: seed, size: rng.int(1 ... 200_000))
            let window = rng.int(1 ... 12)
            let fault = [0.0, 0.02, 0.1, 0.25][k % 4]
            let d = try sim.run(window: window, fault: fault)
            #expect(d.phase == .complete, "seed \(seed): \(d.error?.description ?? "")")
            #expect(sim.file == sim.data, "seed \(seed): the file differs from the blob")
            #expect(sim.recorded.count == sim.manifest.chunks, "seed \(seed)")
            if fault == 0 {
                // No faults: every chunk exactly once.
                #expect(sim.received == sim.data.count, "seed \(seed): \(sim.received) bytes received for \(sim.data.count)")
            }
            totals.corruptions += sim.corruptions; totals.cuts += sim.cuts; totals.restarts += sim.restarts
            totals.drops += sim.drops; totals.diskLosses += sim.diskLosses
        }
        print("BlobDownloadTests.seededFaults: \(totals)")
        #expect(totals.corruptions > 0 && totals.cuts > 0 && totals.restarts > 0 && totals.drops > 0 && totals.diskLosses > 0, "seed \(base): the faults were exercised")
    }

    @Test("a chunk that stays bad fails the download after `attempts`, naming the chunk and its topic")
    func persistentlyBadChunk() throws {
        let data = Self.blob(10_000, seed: 7)
        let m = try BlobPacking.manifest(of: data, chunkSize: 4096, rawSize: nil)
        let ref = try Self.reference(m)
        var d = BlobDownload(reference: ref, hasher: try SHA256(), wholeHasher: try SHA256(), window: 2, attempts: 3)
        _ = d.start(now: 0)
        let out = d.receive(topic: ref.topics.manifest, payload: m.payload, now: 0)
        #expect(out == [.unsubscribe(ref.topics.manifest), .allocate(size: 10_000, rawSize: nil), .subscribe(ref.topics.chunk(0)), .subscribe(ref.topics.chunk(1))])
        var bad = Array(data[0..<4096]); bad[17] ^= 1
        #expect(d.receive(topic: ref.topics.chunk(0), payload: bad, now: 1) == [.unsubscribe(ref.topics.chunk(0)), .subscribe(ref.topics.chunk(0))])
        _ = d.receive(topic: ref.topics.chunk(0), payload: bad, now: 2)
        let last = d.receive(topic: ref.topics.chunk(0), payload: bad, now: 3)
        #expect(d.phase == .failed)
        #expect(last.contains(.unsubscribe(ref.topics.chunk(1))) && last.contains(.unsubscribe(ref.topics.chunk(0))))
        #expect(d.error?.message.contains("chunk 0") == true && d.error?.message.contains(ref.topics.chunk(0)) == true, "\(String(describing: d.error))")
        #expect(d.badChunks == 3 && d.retries == 2)
    }

    @Test("gzip through zlib: round trip on a real file; a file that is not gzip, cut short or corrupt is refused")
    func gzipFiles() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-gz-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var text = ""
        for i in 0..<20_000 { text += "{\"type\":\"Feature\",\"id\":\"z-\(i)\"}\n" }
        try text.write(toFile: "\(dir)/a.json", atomically: true, encoding: .utf8)
        let raw = try Gzip.compress("\(dir)/a.json", to: "\(dir)/a.json.gz")
        #expect(raw == text.utf8.count)
        let gz = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/a.json.gz"))
        #expect(gz.count < raw / 5 && gz.prefix(2) == Data([0x1f, 0x8b]))
        #expect(try Gzip.decompress("\(dir)/a.json.gz", to: "\(dir)/b.json") == raw)
        #expect(try String(contentsOfFile: "\(dir)/b.json", encoding: .utf8) == text)
        do { try Gzip.decompress("\(dir)/a.json", to: "\(dir)/c.json"); Issue.record("plain text accepted") } catch {
            #expect(error.description.contains("not a gzip file"), "\(error)")
        }
        try gz.prefix(gz.count / 2).write(to: URL(fileURLWithPath: "\(dir)/short.gz"))
        do { try Gzip.decompress("\(dir)/short.gz", to: "\(dir)/c.json"); Issue.record("a cut gzip accepted") } catch {
            #expect(error.description.contains("short.gz"), "\(error)")
        }
        var bad = gz; bad[bad.count / 2] ^= 0x55
        try bad.write(to: URL(fileURLWithPath: "\(dir)/bad.gz"))
        do { try Gzip.decompress("\(dir)/bad.gz", to: "\(dir)/c.json"); Issue.record("a corrupt gzip accepted") } catch {
            #expect(error.description.contains("bad.gz"), "\(error)")
        }
        do { try Gzip.decompress("\(dir)/a.json.gz", to: "\(dir)/c.json", maximumBytes: 1000); Issue.record("the bound was not kept") } catch {
            #expect(error.description.contains("more than 1000"), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/c.json"))
        // The download file: preallocated, written and read back by chunk.
        let f = try BlobFile(path: "\(dir)/blob", size: 10_000)
        try f.write([1, 2, 3], at: 9_997)
        #expect(try f.read(3, at: 9_997) == [1, 2, 3])
        #expect(try FileManager.default.attributesOfItem(atPath: "\(dir)/blob")[.size] as? Int == 10_000)
    }
}
