// Size: the download of one blob (either kind) and the link's side of it — holding a desired
// document until its blobs are in force, then applying it — are one sequence over the link's
// state; split, each half would reach into the other's.
//
// Blobs from the fleet: a desired document names a zone set (gzip GeoJSON) or a request list
// (gzip JSON Lines) by SHA-256, or both. The link holds the document back, downloads each blob
// with the pure state machine (Fleet/FleetBlob.swift), then hands it on — a zone set to the
// daemon's build (a child process gunzips and compiles, the SIGHUP path swaps it in atomically,
// the old set kept on failure), a request list to the daemon's reader (a thread gunzips, parses
// and checks every request) — and applies the document when both are in force, all or nothing,
// by the control socket's `apply`. A zone set comes first, then the request list. `reported`
// says downloading (have/of), verifying, building or loading, applied, or failed with the reason.
//
// Files next to the state file STATE:
//   STATE.zones.download               a zone set's blob, preallocated, written chunk by chunk (pwrite)
//   STATE.zones.fleet-<sha16>.geojson  the gunzipped GeoJSON of a set from the fleet (the build
//                                      child writes it; the set in force keeps its own as source)
//   STATE.requests.download            a request list's blob, as above
//   STATE.requests.fleet.gz            the blob of the request list in force, kept: a later
//                                      version naming the same list (new categories, a zone set)
//                                      is applied from it without fetching it again
// State-file meta: per kind, the blob being downloaded, its chunk count and a bitmap of the chunks
// held (fleet.blob*, fleet.requestsBlob*: a restart resumes from it); fleet.zoneSet and
// fleet.zoneSet.source (the set from the fleet in force and its GeoJSON); fleet.requests (the
// hash of the kept request list).
//
// Loop turns stay short: a chunk is at most 64 KiB, hashed and written in the turn it arrives;
// the read-back check hashes at most `verifyBudget` per turn; gunzip and compile run in the
// child, gunzip and parse on the reader's thread; the apply is the socket's, one transaction.
import CivilTime
import Fleet
import FencepostJSON
import FencepostLinux
import LocalNotifications

/// What each kind of blob is called and where it lives.
extension BlobFormat {
    /// For messages: "zone set", "request list".
    var noun: String { self == .geojson ? "zone set" : "request list" }
    /// The prefix of the error codes in `reported`: `zoneset.disk`, `requests.disk`.
    var codePrefix: String { self == .geojson ? "zoneset" : "requests" }
    /// The state file's meta keys of a download: KEY (the blob), KEY.chunks, KEY.have.
    var metaKey: String { self == .geojson ? "fleet.blob" : "fleet.requestsBlob" }
    /// The stem of its files next to the state file.
    var fileStem: String { self == .geojson ? ".zones" : ".requests" }
    /// The word in `reported` once the blob is verified.
    var handOnStage: String { self == .geojson ? "building" : "loading" }
}

/// The download of one blob named by a desired document, and its hand-on once verified.
///
/// Stored properties: what is fetched and for which document (reference, document, kept), its
/// three files' paths and the open file, the download's state machine and stage, the store and
/// log it writes to, and the link's five hooks (subscribe, unsubscribe, build, progressed, failed).
final class FleetBlobRollout {
    enum Stage: Equatable { case downloading, verifying, building, failed }

    let reference: BlobReference
    var kind: BlobFormat { reference.format }
    /// The desired document waiting for the blob (a newer one naming the same blob replaces it).
    var document: FleetDesiredDocument
    /// The verified blob: the download, or the kept request list (``kept``).
    let downloadPath: String
    /// A zone set's gunzipped GeoJSON (the build child writes it).
    let geojsonPath: String
    /// Whether the blob is the kept request list, in force already: nothing to fetch.
    let kept: Bool
    private(set) var stage: Stage = .downloading
    private(set) var download: BlobDownload<SHA256>
    private var file: BlobFile?
    private let store: NotificationStore
    private let statePath: String
    private let log: DaemonLog
    /// Bytes of chunks read back and hashed per loop turn: under 1 ms here (SHA-NI), about 7 ms on
    /// a Cortex-A72 without the ARMv8 crypto extensions (~150 MB/s).
    static let verifyBudget = 1 << 20

    /// Disk needed besides the compressed blob: the gunzipped text (`rawSize`, else this many
    /// times the blob) and as much again: the compiled set (at most the GeoJSON's size: a circle
    /// is ~60 bytes of GeoJSON and ~48 compiled), or the kept copy and the state file's growth of
    /// a request list.
    static let rawPerCompressed = 10

    /// What the state file records of a download: the blob, its chunk count and the chunks held
    /// (BlobChunkRecord). The link reads it once at start and keeps it, so that starting a
    /// download never reads the state file in a loop turn.
    struct Record: Equatable {
        var sha256: String
        var chunks: Int
        var have: String
    }

    /// The record of this download now (for the next rollout of the same blob in this process).
    var record: Record? {
        guard let m = download.manifest else { return nil }
        return Record(sha256: reference.sha256, chunks: m.chunks, have: BlobChunkRecord.encode(download.have, chunks: m.chunks))
    }

    /// The kept request list of a kind: its file (next to the state file at `statePath`).
    static func keptPath(statePath: String) -> String { statePath + ".requests.fleet.gz" }

    /// A download of `reference` (resumed from `record` when it is of the same blob), or — with
    /// `kept` — the kept request list, verified when it was fetched, handed on at ``start(now:)``.
    init(document: FleetDesiredDocument, reference: BlobReference, recorded record: Record?, kept: Bool = false, statePath: String,
         store: NotificationStore, log: DaemonLog, window: Int) throws(FleetError) {
        self.document = document
        self.reference = reference
        self.statePath = statePath
        self.store = store
        self.log = log
        self.kept = kept
        let kind = reference.format
        downloadPath = kept ? Self.keptPath(statePath: statePath) : statePath + kind.fileStem + ".download"
        geojsonPath = statePath + ".zones.fleet-" + String(reference.sha256.prefix(16)) + ".geojson"
        var recorded: Set<Int> = []
        if kept {
            stage = .building
        } else if let record, record.sha256 == reference.sha256 {
            recorded = BlobChunkRecord.decode(record.have, chunks: record.chunks)
        } else {
            BlobFile.remove(downloadPath)
            do {
                try store.apply([.setMeta(key: kind.metaKey, value: reference.sha256), .removeMeta(key: kind.metaKey + ".have"),
                                 .removeMeta(key: kind.metaKey + ".chunks")], sync: false)
            } catch { throw FleetError(kind.codePrefix + ".state", "the state file could not be written: \(error)") }
        }
        let hashers: (SHA256, SHA256)
        do { hashers = (try SHA256(), try SHA256()) } catch { throw FleetError(kind.codePrefix + ".sha256", error.message) }
        download = BlobDownload(reference: reference, recorded: recorded, hasher: hashers.0, wholeHasher: hashers.1, window: window)
        if !recorded.isEmpty { log.info("fleet: \(name): resuming with \(recorded.count) chunks held") }
    }

    /// "zone set 9f2c1a…" for the log.
    var name: String { "\(kind.noun) \(reference.sha256.prefix(12))…" }

    /// What the link does with the download's actions: subscribe, unsubscribe (the link's client).
    /// Chunk subscriptions are QoS 0: a resumed session then sends nothing twice by itself; a
    /// chunk that does not come is asked for again (the download's patience).
    var subscribe: (String) -> Void = { _ in }
    var unsubscribe: (String) -> Void = { _ in }
    /// The verified blob is ready: build the zone set or read the request list (the daemon).
    /// Called once.
    var build: (FleetBlobRollout) -> Void = { _ in }
    /// Progress worth a `reported`.
    var progressed: () -> Void = {}
    /// The download failed (the reason in `error`).
    var failed: (FleetError) -> Void = { _ in }

    var error: FleetError? { download.error }
    /// Whether the next loop turn has work here (the read-back check).
    var wantsTurn: Bool { stage == .verifying && download.nextVerification != nil }

    func start(now: UInt64) {
        if kept {
            log.info("fleet: \(name) is the list in force, kept: read again from \(downloadPath)")
            build(self)
            return
        }
        perform(download.start(now: now), payload: [])
    }

    /// The link is up again: subscriptions in flight are made again (a lost SUBSCRIBE is never
    /// sent again by the library; QoS 0 means nothing of the old one is resent).
    func connected(now: UInt64) { perform(download.reconnected(sessionPresent: false, now: now), payload: []) }

    /// A message on a blob topic; false when it is not this blob's.
    func receive(_ m: MQTTMessage, now: UInt64) -> Bool {
        guard let kind = reference.topics.classify(m.topic) else { return false }
        let bad = download.badChunks
        perform(download.receive(topic: m.topic, payload: m.payload, now: now), payload: m.payload)
        if download.badChunks > bad, case .chunk(let n) = kind {
            log.warning("fleet: \(name): chunk \(n) arrived with a wrong SHA-256 or size; asking for it again")
        }
        return true
    }

    /// Once a second: unanswered subscriptions asked again.
    func tick(now: UInt64) { perform(download.tick(now: now), payload: []) }

    /// A loop turn's share of the read-back check.
    func turn(now: UInt64) {
        var budget = Self.verifyBudget
        while budget > 0, stage == .verifying, let v = download.nextVerification, let file {
            let bytes: [UInt8]
            do { bytes = try file.read(v.length, at: v.offset) } catch {
                perform(download.fail(FleetError(kind.codePrefix + ".disk", error.message)), payload: [])
                return
            }
            budget -= v.length
            perform(download.verified(chunk: v.chunk, bytes: bytes, now: now), payload: [])
        }
    }

    /// Lets go of subscriptions and the file (a newer document names another set).
    func abandon() {
        if stage == .downloading || stage == .verifying {
            perform(download.fail(FleetError(kind.codePrefix + ".replaced", "replaced by a newer desired document")), payload: [], quiet: true)
        }
        file = nil
    }

    /// The daemon's build or read ended: the files this rollout made that are no longer needed
    /// go. A request list in force is kept (``keptPath(statePath:)``), its hash in
    /// `fleet.requests`.
    func finished(applied: Bool) {
        file = nil
        guard !kept else { return }
        if applied {
            var changes: [StoreChange] = [.removeMeta(key: kind.metaKey), .removeMeta(key: kind.metaKey + ".have"),
                                          .removeMeta(key: kind.metaKey + ".chunks")]
            if kind == .jsonl, BlobFile.rename(downloadPath, to: Self.keptPath(statePath: statePath)) {
                changes.append(.setMeta(key: "fleet.requests", value: reference.sha256))
            } else {
                BlobFile.remove(downloadPath)
            }
            try? store.apply(changes, sync: false)
        } else if kind == .geojson {
            BlobFile.remove(geojsonPath)
        }
    }

    private func perform(_ actions: [BlobDownload<SHA256>.Action], payload: [UInt8], quiet: Bool = false) {
        let code = kind.codePrefix, haveKey = kind.metaKey + ".have"
        for a in actions {
            switch a {
            case .subscribe(let topic): subscribe(topic)
            case .unsubscribe(let topic): unsubscribe(topic)
            case .allocate(let size, let rawSize):
                if let e = allocate(size: size, rawSize: rawSize) {
                    perform(download.fail(e), payload: [])
                    return
                }
                progressed()
            case .write(let n, let offset):
                var failure: String?
                if let file {
                    do throws(BlobCodecError) { try file.write(payload, at: offset) } catch { failure = error.message }
                } else {
                    failure = "\(downloadPath): not open"
                }
                if failure == nil {
                    do throws(StoreError) {
                        try store.apply([.setMeta(key: haveKey, value: BlobChunkRecord.encode(download.have, chunks: download.manifest?.chunks ?? 0))], sync: false)
                    } catch { failure = "the state file: \(error)" }
                }
                if let failure {
                    perform(download.fail(FleetError(code + ".disk", "chunk \(n): \(failure)")), payload: [])
                    return
                }
                if download.have.count % 16 == 0 { progressed() }
            case .forget(let n):
                log.warning("fleet: \(name): chunk \(n) read back wrong from \(downloadPath); fetching it again")
                try? store.apply([.setMeta(key: haveKey, value: BlobChunkRecord.encode(download.have, chunks: download.manifest?.chunks ?? 0))], sync: false)
                stage = .downloading
            case .verify:
                do { try file?.synchronize() } catch {
                    perform(download.fail(FleetError(code + ".disk", error.message)), payload: [])
                    return
                }
                stage = .verifying
                progressed()
            case .complete:
                stage = .building
                log.info("fleet: \(name) downloaded and verified (\(download.manifest?.chunks ?? 0) chunks, \(download.receivedBytes) bytes received, \(download.badChunks) bad, \(download.retries) asked again); \(kind.handOnStage)")
                progressed()
                build(self)
            case .failed(let e):
                stage = .failed
                file = nil
                if !quiet {
                    log.warning("fleet: \(name): \(e)")
                    failed(e)
                }
            }
        }
    }

    /// Checks the disk (the blob, the gunzipped text and the compiled set or kept copy must fit),
    /// then opens and preallocates the download file; the refusal names the shortfall.
    private func allocate(size: Int, rawSize: Int?) -> FleetError? {
        let code = kind.codePrefix
        guard let m = download.manifest else { return FleetError(code + ".state", "no manifest") }
        do {
            try store.apply([.setMeta(key: kind.metaKey + ".chunks", value: String(m.chunks))], sync: false)
        } catch { return FleetError(code + ".state", "the state file could not be written: \(error)") }
        let raw = rawSize ?? size * Self.rawPerCompressed
        let held = BlobFile.allocatedBytes(downloadPath)
        let need = max(0, size - held) + raw + raw
        let folder = statePath.contains("/") ? String(statePath[..<statePath.lastIndex(of: "/")!]) : "."
        if let free = FileSystemSpace.available(at: folder.isEmpty ? "/" : folder), Int64(need) > free {
            let text = kind == .geojson ? "GeoJSON, about as much compiled" : "JSON Lines, about as much in the state file"
            return FleetError(code + ".disk", "\(name) needs \(Self.megabytes(need)) on \(folder) "
                              + "(\(Self.megabytes(size)) compressed, \(Self.megabytes(raw)) \(text)): "
                              + "\(Self.megabytes(Int(free))) free, \(Self.megabytes(need - Int(free))) short")
        }
        do { file = try BlobFile(path: downloadPath, size: size) } catch { return FleetError(code + ".disk", error.message) }
        return nil
    }

    static func megabytes(_ bytes: Int) -> String {
        let tenths = (bytes + 52_428) / 104_858
        return "\(tenths / 10).\(tenths % 10) MB"
    }

    /// `reported` for the stage the rollout is in.
    func progressReport(version: Int64, applied: Int64?, active: String?, at: WallInstant, agent: String) -> [UInt8] {
        let state: String
        switch stage {
        case .downloading: state = "downloading"
        case .verifying: state = "verifying"
        case .building, .failed: state = kind.handOnStage
        }
        let p = download.progress
        let progress = FleetReported.BlobProgress(sha256: reference.sha256, have: kept ? 1 : p.have, of: kept ? 1 : p.of)
        return FleetReported.blobProgress(version: version, applied: applied, state: state, at: at, activeZoneSet: active,
                                          zoneSet: kind == .geojson ? progress : nil, requests: kind == .jsonl ? progress : nil, agent: agent)
    }
}

// MARK: The link's side

extension FleetLink {
    /// A desired document: true when it is held for a blob it names (or is the one already
    /// held), false when every blob it names is in force and it can be applied now. The zone set
    /// comes first; the request list once the set is in force (``zoneSetBuilt(zones:error:)``).
    func holdForBlobs(_ doc: FleetDesiredDocument) -> Bool {
        var wanted: BlobReference?
        var kept = false
        if let z = doc.zoneSet, z.sha256 != activeZoneSet {
            wanted = z
        } else if let q = doc.requestsBlob {
            wanted = q
            kept = q.sha256 == keptRequests && BlobFile.allocatedBytes(FleetBlobRollout.keptPath(statePath: store.path)) > 0
        }
        guard let wanted else {
            if let r = rollout { r.abandon(); rollout = nil }
            return false
        }
        let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
        if let r = rollout, r.reference == wanted, r.stage != .failed {
            if doc.version > r.document.version { r.document = doc }
            return true
        }
        if let old = rollout {
            old.abandon()
            if let record = old.record { blobRecords[old.kind] = record }
        }
        rollout = nil
        let r: FleetBlobRollout
        do {
            r = try FleetBlobRollout(document: doc, reference: wanted, recorded: blobRecords[wanted.format], kept: kept, statePath: store.path,
                                     store: store, log: log, window: configuration.outbox.window)
        } catch {
            blobFailed(doc, error)
            return true
        }
        // A new download started over: the file and record are its own.
        if !kept && blobRecords[wanted.format]?.sha256 != wanted.sha256 { blobRecords[wanted.format] = nil }
        r.subscribe = { [client, log] topic in
            do throws(MQTTError) { _ = try client.subscribe(topic, qos: 0) } catch { log.debug("fleet: subscribe \(topic): \(error)") }
        }
        r.unsubscribe = { [client] topic in _ = try? client.unsubscribe(topic) }
        r.progressed = { [self] in self.reportRollout() }
        r.failed = { [self] e in
            guard let r = self.rollout else { return }
            self.blobFailed(r.document, e)
        }
        r.build = { [self] r in
            if r.kind == .geojson { self.buildZoneSet(r) } else { self.readRequests(r) }
        }
        rollout = r
        if !kept {
            log.info("fleet: desired version \(doc.version) names \(r.name) (\(wanted.size) bytes from fleet \(wanted.fleet)): downloading")
        }
        reportRollout()
        r.start(now: now)   // not connected: the subscription is made at the connection (connected(now:))
        return true
    }

    func publishRetained(_ topic: String, _ payload: [UInt8]) {
        do { _ = try client.publish(topic: topic, payload: payload, qos: 1, retain: true) } catch {
            log.debug("fleet: not published to \(topic): \(error)")
        }
    }

    func reportRollout() {
        guard let r = rollout else { return }
        publishRetained(topics.reported, r.progressReport(version: r.document.version, applied: appliedVersion, active: activeZoneSet, at: readClock().wall, agent: Self.agentVersion))
    }

    /// A blob of `doc` failed (its download, build or reading): the version is not applied, nor
    /// tried again; `reported` says why.
    func blobFailed(_ doc: FleetDesiredDocument, _ e: FleetError) {
        log.warning("fleet: desired version \(doc.version) not applied: \(e)")
        if let r = rollout, let record = r.record { blobRecords[r.kind] = record }
        rollout?.finished(applied: false)
        rollout = nil
        failedBlobVersion = doc.version
        publishRetained(topics.reported, FleetReported.failed(version: doc.version, applied: appliedVersion, at: readClock().wall, error: e, agent: Self.agentVersion))
    }

    /// The daemon's build of the rollout's set ended: applied (with its zone count) or why not.
    func zoneSetBuilt(zones: Int?, error: String?) {
        guard let r = rollout, r.kind == .geojson, r.stage == .building else { return }
        let doc = r.document
        guard let zones else {
            blobFailed(doc, FleetError("zoneset.build", error ?? "the zone set did not build"))
            return
        }
        rollout = nil
        blobRecords[.geojson] = nil
        let old = zoneSetSource
        activeZoneSet = r.reference.sha256
        activeZoneCount = zones
        zoneSetSource = r.geojsonPath
        do {
            try store.apply([.setMeta(key: "fleet.zoneSet", value: r.reference.sha256), .setMeta(key: "fleet.zoneSet.source", value: r.geojsonPath)], sync: false)
        } catch { log.error("fleet: \(error)") }
        r.finished(applied: true)
        if let old, old != r.geojsonPath { BlobFile.remove(old) }
        log.info("fleet: zone set \(r.reference.sha256.prefix(12))… in force (\(zones) zones)")
        // The document's request list, when it names one, comes next.
        if doc.requestsBlob != nil, holdForBlobs(doc) { return }
        let now = readClock().wall
        switch callControl("apply", doc.applyParameters) {
        case .success(let result):
            recordApplied(doc)
            log.info("fleet: desired version \(doc.version) applied with zone set \(r.reference.sha256.prefix(12))… (\(zones) zones)")
            publishRetained(topics.reported, FleetReported.applied(version: doc.version, at: now, requests: doc.requestCount, result: result,
                                                                   zoneSet: (r.reference.sha256, zones), agent: Self.agentVersion))
        case .failure(let e):
            log.warning("fleet: desired version \(doc.version): zone set in force, requests not applied: \(e.message)")
            publishRetained(topics.reported, FleetReported.failed(version: doc.version, applied: appliedVersion, at: now,
                                                                  error: FleetError("desired.rejected", e.message), agent: Self.agentVersion))
        }
    }

    /// The daemon's reading of the rollout's request list ended: applied with the document's
    /// categories, all or nothing, by the socket's `apply`; or why not. A result for a rollout
    /// that a newer document replaced meanwhile is dropped.
    func requestsRead(_ finished: FleetBlobRollout, _ result: Result<FleetRequestList, FleetError>) {
        guard let r = rollout, r === finished, r.stage == .building else {
            log.info("fleet: \(finished.name) was read, but a newer desired document replaced it meanwhile")
            return
        }
        let doc = r.document
        let list: FleetRequestList
        switch result {
        case .success(let l): list = l
        case .failure(let e):
            blobFailed(doc, e)
            return
        }
        var categories: [NotificationCategory]?
        if let given = doc.applyParameters["categories"]?.array {
            do throws(RPCError) { categories = try ControlService.decodeCategories(given, path: "categories") } catch {
                blobFailed(doc, FleetError("desired.rejected", error.message))
                return
            }
        }
        applyRequests(r, list, categories)
    }

    /// The daemon's apply of the rollout's list ended (``applyRequests``): the version is in
    /// force, or why not.
    func requestsApplied(_ finished: FleetBlobRollout, _ list: FleetRequestList, _ outcome: Result<ApplyResult, FleetError>) {
        guard let r = rollout, r === finished else {
            log.info("fleet: \(finished.name) was applied, but a newer desired document replaced it meanwhile")
            return
        }
        let doc = r.document
        switch outcome {
        case .success(let applied):
            rollout = nil
            blobRecords[.jsonl] = nil
            r.finished(applied: true)
            keptRequests = r.reference.sha256
            recordApplied(doc)
            log.info("fleet: desired version \(doc.version) applied with \(r.name) (\(list.requests.count) requests: \(applied.summary()))")
            let zoneSet = doc.zoneSet.flatMap { z in activeZoneCount.map { (z.sha256, $0) } }
            publishRetained(topics.reported, FleetReported.applied(version: doc.version, at: readClock().wall, requests: list.requests.count,
                                                                   result: nil, requestsBlob: (r.reference.sha256, applied.counts), zoneSet: zoneSet,
                                                                   agent: Self.agentVersion))
        case .failure(let e):
            blobFailed(doc, FleetError(e.code, list.locate(e.message)))
        }
    }

    /// `doc` is in force: its version is the one applied, here and in the state file.
    func recordApplied(_ doc: FleetDesiredDocument) {
        appliedVersion = doc.version
        do { try store.apply([.setMeta(key: "fleet.appliedVersion", value: String(doc.version))], sync: false) } catch { log.error("fleet: \(error)") }
    }
}
