// A roll-out seen from the operator's side, pure: where one board stands with the version it was
// given (from its retained `reported`), the count over a fleet, and which retained blobs no board
// uses any more. The CLI reads the broker; everything it decides is here.
import FencepostJSON

/// Where a board stands with the desired version it was given, from its retained `reported`.
public enum RolloutStanding: Hashable, Sendable {
    /// The version (or a newer one) is in force.
    case applied
    /// Fetching the chunks of a blob (the zone set's or the request list's): `have` of `of`.
    case downloading(have: Int, of: Int)
    /// Verifying the whole blob, building the zone set or loading the request list (`stage` is
    /// the board's word).
    case building(stage: String)
    /// The board refused the version, or its zone set: `reason` says why.
    case failed(reason: String)
    /// No word from the board about this version (off, offline, or not yet reached).
    case silent

    /// `reported` (nil: none retained) against the desired `version` (nil: any version counts,
    /// the board has no retained desired document to compare with).
    ///
    /// A report about an older version is silence about this one; one about a newer version
    /// than `version` counts as applied only when it says applied (the operator's number is old).
    public init(reported: JSONValue?, version: Int64?) {
        guard let reported, let state = reported["state"]?.string else { self = .silent; return }
        let about = reported["desiredVersion"]?.int64
        if let version {
            let appliedVersion = reported["appliedVersion"]?.int64 ?? (state == "applied" ? about : nil)
            if let a = appliedVersion, a >= version, state == "applied" || about.map({ $0 > version }) == true {
                self = .applied
                return
            }
            guard about == version else { self = .silent; return }
        }
        switch state {
        case "applied": self = .applied
        case "downloading":
            let zoneSet = reported["zoneSet"]?["pending"]
            let pending = zoneSet?.object != nil ? zoneSet : reported["requests"]?["pending"]
            self = .downloading(have: pending?["have"]?.int ?? 0, of: pending?["of"]?.int ?? 0)
        case "failed", "rejected":
            let e = reported["error"]
            self = .failed(reason: e?["message"]?.string ?? e?["code"]?.string ?? e?.string ?? "no reason given")
        default: self = .building(stage: state)
        }
    }

    /// Applied or failed: nothing more will happen for this version without a new one.
    public var isFinal: Bool {
        switch self {
        case .applied, .failed: return true
        default: return false
        }
    }

    /// `applied`, `downloading 120/358 (33 %)`, `building`, `failed: <reason>`, `silent`.
    public var text: String {
        switch self {
        case .applied: return "applied"
        case .downloading(let have, let of):
            let percent = of > 0 ? " (\(have * 100 / of) %)" : ""
            return "downloading \(have)/\(of)" + percent
        case .building(let stage): return stage
        case .failed(let reason): return "failed: " + reason
        case .silent: return "silent"
        }
    }

    /// The summary's bucket: applied, downloading (verifying and building count here), failed, silent.
    public var bucket: RolloutSummary.Bucket {
        switch self {
        case .applied: return .applied
        case .downloading, .building: return .downloading
        case .failed: return .failed
        case .silent: return .silent
        }
    }
}

/// The count of boards per standing: `3 applied, 1 downloading, 0 failed, 2 silent`.
public struct RolloutSummary: Hashable, Sendable {
    public enum Bucket: String, Hashable, Sendable, CaseIterable { case applied, downloading, failed, silent }
    public private(set) var counts: [Bucket: Int] = [:]
    public init() {}
    public init(_ standings: [RolloutStanding]) { for s in standings { add(s) } }
    public mutating func add(_ s: RolloutStanding) { counts[s.bucket, default: 0] += 1 }
    public subscript(b: Bucket) -> Int { counts[b] ?? 0 }
    public var total: Int { counts.values.reduce(0, +) }
    public var text: String {
        Bucket.allCases.map { "\(self[$0]) \($0.rawValue)" }.joined(separator: ", ")
    }
}

/// The blobs the broker retains under `fencepost/v1/fleet/<fleet>/blob/<sha256>/…` (each topic's
/// payload size), and which of them no board names.
///
/// A blob is in use when its SHA-256 is named by any board's retained `desired` (`zoneSet`,
/// `requests.blob`) or `reported` (`zoneSet.active`, `zoneSet.pending`, `requests.blob`,
/// `requests.pending`): a board still downloading names it in both. The fleet is not compared (`active` does not name it): a hash in use keeps
/// the blob in every fleet.
public struct BlobInventory: Sendable {
    public struct Blob: Hashable, Sendable {
        public var fleet: String
        public var sha256: String
        /// The manifest's size in bytes, nil when the broker holds none (a push under way, or one
        /// that stopped before its manifest).
        public var manifestBytes: Int?
        /// Chunk number → its size in bytes.
        public var chunks: [Int: Int]

        public var topics: BlobTopics { BlobTopics(root: BlobTopics.prefix + fleet + "/blob/" + sha256) }
        /// Every byte retained for this blob.
        public var bytes: Int { (manifestBytes ?? 0) + chunks.values.reduce(0, +) }
        /// The topics holding it, the manifest first (a board that no longer sees it starts no download).
        public var retainedTopics: [String] {
            (manifestBytes == nil ? [] : [topics.manifest]) + chunks.keys.sorted().map { topics.chunk($0) }
        }
    }

    /// By `fleet/sha256`.
    public private(set) var blobs: [String: Blob] = [:]
    /// Hashes named by the boards' documents.
    public private(set) var named: Set<String> = []

    public init() {}

    /// The filter that brings every retained blob topic.
    public static let filter = BlobTopics.prefix + "+/blob/#"

    /// Notes a retained message; false when `topic` is no blob topic (or its payload is empty:
    /// nothing retained).
    @discardableResult
    public mutating func note(topic: String, bytes: Int) -> Bool {
        guard bytes > 0, topic.hasPrefix(BlobTopics.prefix) else { return false }
        let levels = topic.dropFirst(BlobTopics.prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard levels.count == 4, levels[1] == "blob", (try? FleetName(levels[0])) != nil,
              FleetHex.decode(levels[2], count: 32) != nil else { return false }
        let t = BlobTopics(root: BlobTopics.prefix + levels[0] + "/blob/" + levels[2])
        let key = levels[0] + "/" + levels[2]
        switch t.classify(topic) {
        case .manifest?:
            blobs[key, default: Blob(fleet: levels[0], sha256: levels[2], manifestBytes: nil, chunks: [:])].manifestBytes = bytes
        case .chunk(let n)?:
            blobs[key, default: Blob(fleet: levels[0], sha256: levels[2], manifestBytes: nil, chunks: [:])].chunks[n] = bytes
        case nil: return false
        }
        return true
    }

    /// Notes the hashes a retained `desired` document names.
    public mutating func noteDesired(_ doc: JSONValue) {
        if let s = doc["zoneSet"]?["sha256"]?.string { named.insert(s) }
        if let s = doc["requests"]?["blob"]?["sha256"]?.string { named.insert(s) }
    }

    /// Notes the hashes a retained `reported` document names: the zone set and request list in
    /// force and those on their way.
    public mutating func noteReported(_ doc: JSONValue) {
        if let s = doc["zoneSet"]?["active"]?.string { named.insert(s) }
        if let s = doc["zoneSet"]?["pending"]?["sha256"]?.string { named.insert(s) }
        if let s = doc["requests"]?["blob"]?.string { named.insert(s) }
        if let s = doc["requests"]?["pending"]?["sha256"]?.string { named.insert(s) }
    }

    /// The blobs to remove: complete (with a manifest) or, with `incomplete`, also those without
    /// one; never one a board names. Sorted by fleet and hash.
    public func unused(incomplete: Bool) -> [Blob] {
        blobs.values.filter { !named.contains($0.sha256) && ($0.manifestBytes != nil || incomplete) }
            .sorted { ($0.fleet, $0.sha256) < ($1.fleet, $1.sha256) }
    }

    /// Blobs in use, sorted.
    public var used: [Blob] {
        blobs.values.filter { named.contains($0.sha256) }.sorted { ($0.fleet, $0.sha256) < ($1.fleet, $1.sha256) }
    }

    /// Blobs without a manifest that no board names (kept unless asked).
    public var incompleteUnused: [Blob] {
        blobs.values.filter { !named.contains($0.sha256) && $0.manifestBytes == nil }.sorted { ($0.fleet, $0.sha256) < ($1.fleet, $1.sha256) }
    }
}

extension BlobTopics {
    /// The topics under `root` (a blob's `fencepost/v1/fleet/<fleet>/blob/<sha256>`).
    init(root: String) { self.root = root }
}
