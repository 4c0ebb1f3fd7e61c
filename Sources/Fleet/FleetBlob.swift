// Size: the manifest, its topics and the download state machine that checks chunks against it
// are one concern, tested as one (BlobDownloadTests); apart, each would expose the other's internals.
//
// Blobs through the broker: a zone set (gzip-compressed GeoJSON) travels content-addressed, as
// retained chunks under the fleet's topic, pulled by each board with a bounded window of
// subscriptions. Only broker features are used (retained messages, subscribe): no blob server.
//
//   F = fencepost/v1/fleet/<fleet>
//   F/blob/<sha256>/m    ↓ retained, QoS 1   the manifest (BlobManifest)
//   F/blob/<sha256>/<n>  ↓ retained, QoS 1   chunk n (n = 0 ..< chunks): chunkSize bytes, the last shorter
//
// A board's download (BlobDownload), as a state machine that returns actions:
//
//   manifest    subscribe …/m → the retained manifest, checked against the hash the desired
//               document names (another hash is refused) → allocate the file (size known)
//   fetching    at most `window` chunk subscriptions at once, lowest needed chunk first; a chunk
//               arrives → its SHA-256 checked against the manifest → written at n × chunkSize →
//               recorded → unsubscribed → the next subscribed. A bad chunk is asked for again
//               (a new subscription sends the retained message again), at most `attempts` times.
//               Resuming after a cut or a restart starts from the recorded set: only missing
//               chunks are asked for (those in flight at a cut may arrive twice).
//   verifying   one chunk per step, read back from the file: its hash again (what the disk
//               holds, not what was received) and the whole file's SHA-256. A chunk that does
//               not match is forgotten and fetched again; the whole must equal the blob's name.
//   complete / failed(reason)
//
// Sizing: chunks ≤ 64 KiB (an MQTT message most brokers pass; a loop turn hashes one in well under
// a millisecond); at most `maximumChunks` chunks (1 GiB at 64 KiB, a manifest under 1.1 MiB).
import CivilTime
import FencepostJSON

/// SHA-256 over bytes given in pieces. The agent's comes from libcrypto (FencepostLinux); the
/// core only calls it.
public protocol SHA256Hashing {
    /// Adds bytes to the digest under way.
    mutating func update(_ bytes: UnsafeRawBufferPointer)
    /// The 32-byte digest of everything added since the last `finish`; the next update starts a new one.
    mutating func finish() -> [UInt8]
}

extension SHA256Hashing {
    /// The digest of `bytes` alone (after any update under way is finished and dropped).
    public mutating func digest(of bytes: [UInt8]) -> [UInt8] {
        _ = finish()
        bytes.withUnsafeBytes { update($0) }
        return finish()
    }
}

/// Lowercase hexadecimal, as blob names and chunk hashes are written.
public enum FleetHex {
    public static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 0xF)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `text` when it is exactly `count` bytes in lowercase hex; nil otherwise.
    public static func decode(_ text: String, count: Int) -> [UInt8]? {
        let u = Array(text.utf8)
        guard u.count == count * 2 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(count)
        var i = 0
        while i < u.count {
            guard let hi = value(u[i]), let lo = value(u[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }
}

/// A fleet's name: letters, digits and `-`, 1 to 64 characters (one topic level).
public struct FleetName: Hashable, Sendable, CustomStringConvertible {
    public let text: String
    public static let maximumLength = 64

    public init(_ text: String) throws(FleetError) {
        guard !text.isEmpty, text.utf8.count <= Self.maximumLength else {
            throw FleetError("fleet.invalid", "the fleet name \"\(text)\" must have 1 to \(Self.maximumLength) characters")
        }
        for (i, c) in text.utf8.enumerated() {
            let ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D
            guard ok else {
                throw FleetError("fleet.invalid", "the fleet name \"\(text)\" has a character that is not a letter, digit or - at position \(i + 1)")
            }
        }
        self.text = text
    }

    public var description: String { text }
}

/// The topics of one blob: `fencepost/v1/fleet/<fleet>/blob/<sha256>/m` and `…/<n>`.
public struct BlobTopics: Hashable, Sendable {
    public let root: String

    public static let prefix = "fencepost/v1/fleet/"

    public init(fleet: FleetName, sha256: String) {
        root = Self.prefix + fleet.text + "/blob/" + sha256
    }

    public var manifest: String { root + "/m" }
    public func chunk(_ n: Int) -> String { root + "/" + String(n) }

    public enum Kind: Hashable, Sendable { case manifest, chunk(Int) }

    /// Which of this blob's topics `topic` is, if any.
    public func classify(_ topic: String) -> Kind? {
        let t = Array(topic.utf8), r = Array(root.utf8)
        guard t.count > r.count + 1, t[r.count] == UInt8(ascii: "/"), Array(t[0..<r.count]) == r else { return nil }
        let tail = t[(r.count + 1)...]
        if tail.count == 1 && tail.first == UInt8(ascii: "m") { return .manifest }
        guard tail.count <= 6, tail.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        if tail.count > 1 && tail.first == 0x30 { return nil }   // no leading zeros: one name per chunk
        var n = 0
        for d in tail { n = n * 10 + Int(d - 0x30) }
        return .chunk(n)
    }
}

/// What a blob holds once gunzipped: a zone set (GeoJSON) or a request list (JSON Lines, one
/// request of the control socket's `apply` per line).
public enum BlobFormat: String, Hashable, Sendable {
    case geojson, jsonl
}

/// A desired document's `zoneSet` or `requests.blob`: `{"sha256":"…","size":n,"encoding":"gzip",
/// "format":"geojson","fleet":"acme"}` — the blob by its hash (of the compressed bytes) and size,
/// what it holds, and the fleet whose topics hold it.
public struct BlobReference: Hashable, Sendable {
    public var sha256: String
    public var size: Int
    public var fleet: FleetName
    public var format: BlobFormat

    public init(sha256: String, size: Int, fleet: FleetName, format: BlobFormat = .geojson) {
        self.sha256 = sha256; self.size = size; self.fleet = fleet; self.format = format
    }

    /// Reads `value` (the member `key` of a document, for the messages), which must hold `format`
    /// (absent: that format).
    public init(parsing value: JSONValue, key: String, format expected: BlobFormat = .geojson) throws(FleetError) {
        guard let members = value.object else {
            throw FleetError("desired.invalid", "\"\(key)\" must be an object, got \(value.kindDescription)")
        }
        for m in members where !["sha256", "size", "encoding", "format", "fleet"].contains(m.key) {
            throw FleetError("desired.invalid", "\"\(key)\" has an unknown key \"\(m.key)\"")
        }
        guard let sha = value["sha256"]?.string, FleetHex.decode(sha, count: 32) != nil else {
            throw FleetError("desired.invalid", "\"\(key).sha256\" must be 64 lowercase hex digits")
        }
        guard let size = value["size"]?.int64, size > 0, size <= Int64(BlobManifest.maximumSize) else {
            throw FleetError("desired.invalid", "\"\(key).size\" must be an integer from 1 to \(BlobManifest.maximumSize)")
        }
        if let e = value["encoding"], e.string != "gzip" {
            throw FleetError("desired.unsupported", "\"\(key).encoding\" is \(e.serialized()); this agent reads \"gzip\"")
        }
        if let f = value["format"], f.string != expected.rawValue {
            throw FleetError("desired.unsupported", "\"\(key).format\" is \(f.serialized()); this agent reads \"\(expected.rawValue)\" there")
        }
        guard let fleetText = value["fleet"]?.string else {
            throw FleetError("desired.invalid", "\"\(key).fleet\" must name the fleet whose topics hold the blob")
        }
        self.sha256 = sha
        self.size = Int(size)
        self.fleet = try FleetName(fleetText)
        self.format = expected
    }

    public var json: JSONValue {
        .object([("sha256", .string(sha256)), ("size", .integer(Int64(size))), ("encoding", "gzip"),
                 ("format", .string(format.rawValue)), ("fleet", .string(fleet.text))])
    }

    public var topics: BlobTopics { BlobTopics(fleet: fleet, sha256: sha256) }
}

/// A blob's manifest (retained on `…/m`):
///
///     {"v":1,"sha256":"9f2c…","size":23456789,"encoding":"gzip","chunkSize":65536,"chunks":358,
///      "chunkSha256":["…",…],"rawSize":61234567}
///
/// `rawSize` (optional) is the size after gunzip, for the board's disk check.
public struct BlobManifest: Hashable, Sendable {
    public var sha256: String
    public var size: Int
    public var chunkSize: Int
    public var chunkSHA256: [[UInt8]]
    public var rawSize: Int?

    public static let maximumChunkSize = 65536
    public static let minimumChunkSize = 1024
    public static let maximumChunks = 16384
    public static let maximumSize = maximumChunkSize * maximumChunks
    public static let maximumBytes = 64 + maximumChunks * 67 + 4096

    public var chunks: Int { chunkSHA256.count }

    public init(sha256: String, size: Int, chunkSize: Int, chunkSHA256: [[UInt8]], rawSize: Int?) {
        self.sha256 = sha256; self.size = size; self.chunkSize = chunkSize
        self.chunkSHA256 = chunkSHA256; self.rawSize = rawSize
    }

    /// The number of chunks of `size` bytes cut in `chunkSize` pieces.
    public static func chunkCount(size: Int, chunkSize: Int) -> Int { (size + chunkSize - 1) / chunkSize }

    /// Reads and checks a manifest retained for `reference`: every size, count and hash, and that
    /// it names the blob it was asked for (a manifest for another hash is refused).
    public init(parsing payload: [UInt8], for reference: BlobReference) throws(FleetError) {
        let at = "the manifest of blob \(reference.sha256.prefix(12))…"
        guard payload.count <= Self.maximumBytes else {
            throw FleetError("blob.manifest", "\(at) has \(payload.count) bytes; at most \(Self.maximumBytes)")
        }
        let doc: JSONValue
        do { doc = try JSONValue.parse(payload) } catch {
            throw FleetError("blob.manifest", "\(at) is not JSON: \(error)")
        }
        guard let members = doc.object else {
            throw FleetError("blob.manifest", "\(at) must be an object, got \(doc.kindDescription)")
        }
        for m in members where !["v", "sha256", "size", "encoding", "chunkSize", "chunks", "chunkSha256", "rawSize"].contains(m.key) {
            throw FleetError("blob.manifest", "\(at) has an unknown key \"\(m.key)\"")
        }
        guard doc["v"]?.int64 == 1 else {
            throw FleetError("blob.manifest", "\(at): \"v\" must be 1, got \(doc["v"]?.serialized() ?? "nothing")")
        }
        guard let sha = doc["sha256"]?.string, FleetHex.decode(sha, count: 32) != nil else {
            throw FleetError("blob.manifest", "\(at): \"sha256\" must be 64 lowercase hex digits")
        }
        guard sha == reference.sha256 else {
            throw FleetError("blob.manifestMismatch", "\(at) names blob \(sha): another hash; refused")
        }
        guard doc["encoding"]?.string == "gzip" else {
            throw FleetError("blob.manifest", "\(at): \"encoding\" must be \"gzip\", got \(doc["encoding"]?.serialized() ?? "nothing")")
        }
        guard let size = doc["size"]?.int64, size > 0, size <= Int64(Self.maximumSize) else {
            throw FleetError("blob.manifest", "\(at): \"size\" must be an integer from 1 to \(Self.maximumSize)")
        }
        guard Int(size) == reference.size else {
            throw FleetError("blob.manifestMismatch", "\(at) says \(size) bytes; the desired document says \(reference.size)")
        }
        guard let chunkSize = doc["chunkSize"]?.int64, chunkSize >= Int64(Self.minimumChunkSize), chunkSize <= Int64(Self.maximumChunkSize) else {
            throw FleetError("blob.manifest", "\(at): \"chunkSize\" must be an integer from \(Self.minimumChunkSize) to \(Self.maximumChunkSize)")
        }
        let expected = Self.chunkCount(size: Int(size), chunkSize: Int(chunkSize))
        guard expected <= Self.maximumChunks else {
            throw FleetError("blob.manifest", "\(at): \(expected) chunks; at most \(Self.maximumChunks)")
        }
        guard doc["chunks"]?.int64 == Int64(expected) else {
            throw FleetError("blob.manifest", "\(at): \"chunks\" must be \(expected) (\(size) bytes in chunks of \(chunkSize)), got \(doc["chunks"]?.serialized() ?? "nothing")")
        }
        guard let list = doc["chunkSha256"]?.array, list.count == expected else {
            throw FleetError("blob.manifest", "\(at): \"chunkSha256\" must be an array of \(expected) hashes, got \(doc["chunkSha256"]?.array?.count ?? 0)")
        }
        var hashes: [[UInt8]] = []
        hashes.reserveCapacity(expected)
        for (i, v) in list.enumerated() {
            guard let s = v.string, let h = FleetHex.decode(s, count: 32) else {
                throw FleetError("blob.manifest", "\(at): \"chunkSha256\"[\(i)] must be 64 lowercase hex digits")
            }
            hashes.append(h)
        }
        if let r = doc["rawSize"] {
            guard let raw = r.int64, raw >= 0 else {
                throw FleetError("blob.manifest", "\(at): \"rawSize\" must be an integer of 0 or more")
            }
            rawSize = Int(raw)
        }
        self.sha256 = sha
        self.size = Int(size)
        self.chunkSize = Int(chunkSize)
        self.chunkSHA256 = hashes
    }

    /// Where chunk `n` lies in the blob.
    public func range(of n: Int) -> (offset: Int, length: Int) {
        precondition(n >= 0 && n < chunks, "chunk \(n) of \(chunks)")
        let offset = n * chunkSize
        return (offset, min(chunkSize, size - offset))
    }

    public var payload: [UInt8] {
        var m: [(key: String, value: JSONValue)] = [
            ("v", 1), ("sha256", .string(sha256)), ("size", .integer(Int64(size))), ("encoding", "gzip"),
            ("chunkSize", .integer(Int64(chunkSize))), ("chunks", .integer(Int64(chunks))),
            ("chunkSha256", .array(chunkSHA256.map { .string(FleetHex.encode($0)) })),
        ]
        if let rawSize { m.append(("rawSize", .integer(Int64(rawSize)))) }
        return Array(JSONValue.object(m).serialized().utf8)
    }
}

/// Which chunks a board holds, as text for its state file: a bitmap in lowercase hex, chunk n
/// in bit n % 8 of byte n / 8. Bounded by BlobManifest.maximumChunks (4 KiB of text).
public enum BlobChunkRecord {
    public static func encode(_ have: Set<Int>, chunks: Int) -> String {
        var bytes = [UInt8](repeating: 0, count: (chunks + 7) / 8)
        for n in have where n >= 0 && n < chunks { bytes[n / 8] |= 1 << UInt8(n % 8) }
        return FleetHex.encode(bytes)
    }

    /// The chunks set in `text`; an unreadable record is an empty one (the chunks are fetched again).
    public static func decode(_ text: String, chunks: Int) -> Set<Int> {
        guard let bytes = FleetHex.decode(text, count: (chunks + 7) / 8) else { return [] }
        var have: Set<Int> = []
        for n in 0..<chunks where bytes[n / 8] & (1 << UInt8(n % 8)) != 0 { have.insert(n) }
        return have
    }
}

/// The download of one blob by one board (see the top of the file). Times are monotonic
/// nanoseconds, given by the caller.
/// Stored properties: the manifest, the window of chunks in flight with their times, the chunks
/// had, retries and the read-back position are one resumable state, changed together by each event.
public struct BlobDownload<Hasher: SHA256Hashing> {
    public enum Phase: Hashable, Sendable { case manifest, fetching, verifying, complete, failed }

    public enum Action: Hashable, Sendable {
        case subscribe(String)
        case unsubscribe(String)
        /// The manifest is in: make the file `size` bytes (preallocated), after checking the disk.
        case allocate(size: Int, rawSize: Int?)
        /// Write the payload just received at `offset`, then record chunk `chunk` as held.
        case write(chunk: Int, offset: Int)
        /// Chunk `chunk` did not survive on disk: drop it from the record (it is fetched again).
        case forget(chunk: Int)
        /// Every chunk is held: read them back, one per step (``nextVerification``/``verified``).
        case verify
        case complete
        case failed(FleetError)
    }

    public let reference: BlobReference
    public let topics: BlobTopics
    public let window: Int
    /// Deliveries of one chunk that fail their hash (or do not come) before the download fails.
    public let attempts: Int
    /// How long a subscribed chunk may take before it is asked for again.
    public let patience: UInt64

    public private(set) var phase: Phase = .manifest
    public private(set) var manifest: BlobManifest?
    public private(set) var have: Set<Int> = []
    public private(set) var error: FleetError?

    /// Chunk payload bytes received (whatever became of them), chunks that failed their hash,
    /// deliveries of chunks not asked for (in flight at a cut), and chunks asked for again.
    public private(set) var receivedBytes = 0
    public private(set) var badChunks = 0
    public private(set) var duplicates = 0
    public private(set) var retries = 0

    /// Chunk → when it was subscribed.
    private var inflight: [Int: UInt64] = [:]
    private var tries: [Int: Int] = [:]
    private var cursor = 0
    private var verifyNext = 0
    private var bad: [Int] = []
    private var chunkHasher: Hasher
    private var wholeHasher: Hasher

    public init(reference: BlobReference, recorded: Set<Int> = [], hasher: Hasher, wholeHasher: Hasher,
                window: Int = 8, attempts: Int = 5, patience: UInt64 = 30_000_000_000) {
        self.reference = reference
        topics = reference.topics
        self.window = max(1, window)
        self.attempts = max(1, attempts)
        self.patience = patience
        have = recorded
        chunkHasher = hasher
        self.wholeHasher = wholeHasher
    }

    /// Chunks held and chunks in all (0 of 0 before the manifest).
    public var progress: (have: Int, of: Int) { (manifest == nil ? 0 : have.count, manifest?.chunks ?? 0) }
    public var inFlight: Int { inflight.count }

    /// The first actions: the manifest's subscription.
    public mutating func start(now: UInt64) -> [Action] {
        precondition(phase == .manifest, "start once")
        inflight[-1] = now
        return [.subscribe(topics.manifest)]
    }

    /// The link came back. Without its session, the broker forgot the subscriptions: they are made
    /// again (the chunks in flight come again).
    public mutating func reconnected(sessionPresent: Bool, now: UInt64) -> [Action] {
        guard !sessionPresent else { return [] }
        var out: [Action] = []
        for (n, _) in inflight.sorted(by: { $0.key < $1.key }) {
            inflight[n] = now
            out.append(.subscribe(n < 0 ? topics.manifest : topics.chunk(n)))
        }
        return out
    }

    /// A message on one of the blob's topics (others: no action).
    public mutating func receive(topic: String, payload: [UInt8], now: UInt64) -> [Action] {
        switch topics.classify(topic) {
        case .manifest?: return receiveManifest(payload, now: now)
        case .chunk(let n)?: return receiveChunk(n, payload, now: now)
        case nil: return []
        }
    }

    private mutating func receiveManifest(_ payload: [UInt8], now: UInt64) -> [Action] {
        guard phase == .manifest, !payload.isEmpty else { return [] }   // empty: a deleted retained manifest
        inflight[-1] = nil
        let m: BlobManifest
        do { m = try BlobManifest(parsing: payload, for: reference) } catch {
            return fail(error, [.unsubscribe(topics.manifest)])
        }
        manifest = m
        have = have.filter { $0 >= 0 && $0 < m.chunks }
        var out: [Action] = [.unsubscribe(topics.manifest), .allocate(size: m.size, rawSize: m.rawSize)]
        phase = .fetching
        out += fill(now: now)
        return out
    }

    private mutating func receiveChunk(_ n: Int, _ payload: [UInt8], now: UInt64) -> [Action] {
        guard phase == .fetching, let m = manifest, n < m.chunks else { return [] }
        receivedBytes += payload.count
        guard inflight[n] != nil else { duplicates += 1; return [] }
        let (offset, length) = m.range(of: n)
        let hash = chunkHasher.digest(of: payload)
        guard payload.count == length, hash == m.chunkSHA256[n] else {
            badChunks += 1
            let why = payload.count != length ? "\(payload.count) bytes, not \(length)" : "its SHA-256 does not match the manifest"
            return askAgain(n, why: why, now: now)
        }
        inflight[n] = nil
        tries[n] = nil
        have.insert(n)
        var out: [Action] = [.write(chunk: n, offset: offset), .unsubscribe(topics.chunk(n))]
        out += fill(now: now)
        return out
    }

    /// Chunk `n` came bad or not at all: a new subscription, up to `attempts` in all.
    private mutating func askAgain(_ n: Int, why: String, now: UInt64) -> [Action] {
        let count = (tries[n] ?? 0) + 1
        tries[n] = count
        guard count < attempts else {
            inflight[n] = now   // let go with the others
            return fail(FleetError("blob.chunk", "chunk \(n) of blob \(reference.sha256.prefix(12))…: \(why), \(count) times; the retained chunk at \(topics.chunk(n)) is wrong or missing"))
        }
        retries += 1
        inflight[n] = now
        return [.unsubscribe(topics.chunk(n)), .subscribe(topics.chunk(n))]
    }

    /// Subscriptions up to the window, lowest needed chunk first; `.verify` once every chunk is held.
    private mutating func fill(now: UInt64) -> [Action] {
        guard phase == .fetching, let m = manifest else { return [] }
        var out: [Action] = []
        while inflight.count < window && cursor < m.chunks {
            if !have.contains(cursor) && inflight[cursor] == nil {
                inflight[cursor] = now
                out.append(.subscribe(topics.chunk(cursor)))
            }
            cursor += 1
        }
        if inflight.isEmpty && have.count == m.chunks {
            phase = .verifying
            verifyNext = 0
            bad = []
            _ = wholeHasher.finish()
            out.append(.verify)
        }
        return out
    }

    /// Subscriptions that went unanswered for `patience` are made again (a lost SUBACK, a chunk
    /// the broker does not hold); the manifest's too.
    public mutating func tick(now: UInt64) -> [Action] {
        guard phase == .manifest || phase == .fetching else { return [] }
        var out: [Action] = []
        for (n, since) in inflight.sorted(by: { $0.key < $1.key }) where now &- since >= patience {
            if n < 0 {
                inflight[n] = now
                out += [.unsubscribe(topics.manifest), .subscribe(topics.manifest)]
            } else {
                out += askAgain(n, why: "no message in \(patience / 1_000_000_000) s", now: now)
                if phase == .failed { return out }
            }
        }
        return out
    }

    /// The next chunk to read back while verifying, or nil.
    public var nextVerification: (chunk: Int, offset: Int, length: Int)? {
        guard phase == .verifying, let m = manifest, verifyNext < m.chunks else { return nil }
        let (offset, length) = m.range(of: verifyNext)
        return (verifyNext, offset, length)
    }

    /// Chunk `chunk`'s bytes as read back from the file.
    public mutating func verified(chunk: Int, bytes: [UInt8], now: UInt64) -> [Action] {
        guard phase == .verifying, let m = manifest else { return [] }
        precondition(chunk == verifyNext, "chunks are verified in order: \(verifyNext) expected, \(chunk) given")
        let (_, length) = m.range(of: chunk)
        if bytes.count != length || chunkHasher.digest(of: bytes) != m.chunkSHA256[chunk] {
            bad.append(chunk)
        }
        bytes.withUnsafeBytes { wholeHasher.update($0) }
        verifyNext += 1
        guard verifyNext == m.chunks else { return [] }
        let whole = FleetHex.encode(wholeHasher.finish())
        if !bad.isEmpty {
            var out: [Action] = []
            for n in bad { have.remove(n); out.append(.forget(chunk: n)) }
            badChunks += bad.count
            bad = []
            phase = .fetching
            cursor = 0
            out += fill(now: now)
            return out
        }
        guard whole == reference.sha256 else {
            return fail(FleetError("blob.hash", "blob \(reference.sha256): every chunk matches its manifest, but the whole file's SHA-256 is \(whole): the manifest does not describe this blob"), [])
        }
        phase = .complete
        return [.complete]
    }

    /// Ends the download (a write failed, the disk is short): the subscriptions are let go.
    public mutating func fail(_ e: FleetError) -> [Action] {
        var out: [Action] = []
        for (n, _) in inflight.sorted(by: { $0.key < $1.key }) {
            out.append(.unsubscribe(n < 0 ? topics.manifest : topics.chunk(n)))
        }
        return fail(e, out)
    }

    private mutating func fail(_ e: FleetError, _ before: [Action]) -> [Action] {
        inflight = [:]
        phase = .failed
        error = e
        return before + [.failed(e)]
    }
}

/// `reported` while a desired document's blobs are on their way, and once they are in force:
///
///     {"v":1,"desiredVersion":43,"appliedVersion":42,"state":"downloading","at":"…",
///      "zoneSet":{"active":"9f2c…","pending":{"sha256":"a11e…","have":120,"of":358}},"error":null,"agent":"…"}
///     {"v":1,"desiredVersion":44,"appliedVersion":43,"state":"downloading","at":"…",
///      "zoneSet":{"active":"a11e…","pending":null},
///      "requests":{"pending":{"sha256":"c0de…","have":3,"of":40}},"error":null,"agent":"…"}
///
/// `state` is `downloading` (have/of chunks), `verifying`, then `building` (a zone set is compiled
/// in a child process) or `loading` (a request list is read and checked on a thread), then
/// `applied` or `failed` (FleetReported.failed, with the reason). A document naming both blobs
/// has its zone set fetched and put in force first, then its request list.
extension FleetReported {
    /// A blob being fetched: its hash and the chunks held.
    public struct BlobProgress: Hashable, Sendable {
        public var sha256: String
        public var have: Int
        public var of: Int
        public init(sha256: String, have: Int, of: Int) { self.sha256 = sha256; self.have = have; self.of = of }
        var json: JSONValue { .object([("sha256", .string(sha256)), ("have", .integer(Int64(have))), ("of", .integer(Int64(of)))]) }
    }

    /// `reported` with `state` while a blob of desired `version` is on its way: the zone set's
    /// (with the set in force) or the request list's.
    public static func blobProgress(version: Int64, applied: Int64?, state: String, at: WallInstant, activeZoneSet: String?,
                                    zoneSet: BlobProgress?, requests: BlobProgress?, agent: String) -> [UInt8] {
        var m: [(key: String, value: JSONValue)] = [
            ("v", 1), ("desiredVersion", .integer(version)), ("appliedVersion", applied.map { .integer($0) } ?? .null),
            ("state", .string(state)), ("at", .string(at.description)),
            ("zoneSet", .object([("active", activeZoneSet.map { .string($0) } ?? .null), ("pending", zoneSet?.json ?? .null)])),
        ]
        if let requests { m.append(("requests", .object([("pending", requests.json)]))) }
        m += [("error", .null), ("agent", .string(agent))]
        return bytes(.object(m))
    }
}

