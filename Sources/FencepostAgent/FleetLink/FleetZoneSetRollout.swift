// A zone set from the fleet: a desired document names a blob (gzip GeoJSON, by SHA-256) that is
// not the set in force. The link holds the document back, downloads the blob with the pure state
// machine (Fleet/FleetBlob.swift), has the daemon build it (a child process gunzips and compiles,
// the existing SIGHUP path swaps it in atomically, the old set kept on failure), then applies the
// document's requests and records its version. `reported` says downloading (have/of), verifying,
// building, applied, or failed with the reason.
//
// Files next to the state file STATE:
//   STATE.zones.download              the blob, preallocated, written chunk by chunk (pwrite)
//   STATE.zones.fleet-<sha16>.geojson the gunzipped GeoJSON of a set from the fleet (the build
//                                     child writes it; the set in force keeps its own as source)
// State-file meta: fleet.blob (the blob being downloaded), fleet.blob.chunks, fleet.blob.have (a
// bitmap of the chunks held: a restart resumes from it), fleet.zoneSet and fleet.zoneSet.source
// (the set from the fleet in force and its GeoJSON).
//
// Loop turns stay short: a chunk is at most 64 KiB, hashed and written in the turn it arrives;
// the read-back check hashes at most `verifyBudget` per turn; gunzip and compile run in the child.
import CivilTime
import Fleet
import FencepostJSON
import FencepostLinux
import LocalNotifications

/// The download and build of one zone set named by a desired document.
final class FleetZoneSetRollout {
    enum Stage: Equatable { case downloading, verifying, building, failed }

    let reference: BlobReference
    /// The desired document waiting for the set (a newer one with the same set replaces it).
    var document: FleetDesiredDocument
    let downloadPath: String
    let geojsonPath: String
    private(set) var stage: Stage = .downloading
    private(set) var download: BlobDownload<SHA256>
    private var file: BlobFile?
    private let store: NotificationStore
    private let statePath: String
    private let log: DaemonLog
    /// Bytes of chunks read back and hashed per loop turn: under 1 ms here (SHA-NI), about 7 ms on
    /// a Cortex-A72 without the ARMv8 crypto extensions (~150 MB/s).
    static let verifyBudget = 1 << 20

    /// Disk needed besides the compressed blob: the GeoJSON (`rawSize`, else this many times the
    /// blob) and the compiled set (at most the GeoJSON's size: a circle is ~60 bytes of GeoJSON
    /// and ~48 compiled).
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

    init(document: FleetDesiredDocument, reference: BlobReference, recorded record: Record?, statePath: String, store: NotificationStore,
         log: DaemonLog, window: Int) throws(FleetError) {
        self.document = document
        self.reference = reference
        self.statePath = statePath
        self.store = store
        self.log = log
        downloadPath = statePath + ".zones.download"
        geojsonPath = statePath + ".zones.fleet-" + String(reference.sha256.prefix(16)) + ".geojson"
        var recorded: Set<Int> = []
        if let record, record.sha256 == reference.sha256 {
            recorded = BlobChunkRecord.decode(record.have, chunks: record.chunks)
        } else {
            _ = BlobFile.remove(downloadPath)
            do {
                try store.apply([.setMeta(key: "fleet.blob", value: reference.sha256), .removeMeta(key: "fleet.blob.have"),
                                 .removeMeta(key: "fleet.blob.chunks")], sync: false)
            } catch { throw FleetError("zoneset.state", "the state file could not be written: \(error)") }
        }
        let hashers: (SHA256, SHA256)
        do { hashers = (try SHA256(), try SHA256()) } catch { throw FleetError("zoneset.sha256", error.message) }
        download = BlobDownload(reference: reference, recorded: recorded, hasher: hashers.0, wholeHasher: hashers.1, window: window)
        if !recorded.isEmpty { log.info("fleet: zone set \(reference.sha256.prefix(12))…: resuming with \(recorded.count) chunks held") }
    }

    /// What the link does with the download's actions: subscribe, unsubscribe (the link's client).
    /// Chunk subscriptions are QoS 0: a resumed session then sends nothing twice by itself; a
    /// chunk that does not come is asked for again (the download's patience).
    var subscribe: (String) -> Void = { _ in }
    var unsubscribe: (String) -> Void = { _ in }
    /// The verified blob is ready: build it (the daemon). Called once.
    var build: (FleetZoneSetRollout) -> Void = { _ in }
    /// Progress worth a `reported`.
    var progressed: () -> Void = {}
    /// The download failed (the reason in `error`).
    var failed: (FleetError) -> Void = { _ in }

    var error: FleetError? { download.error }
    /// Whether the next loop turn has work here (the read-back check).
    var wantsTurn: Bool { stage == .verifying && download.nextVerification != nil }

    func start(now: UInt64) { perform(download.start(now: now), payload: []) }

    /// The link is up again: subscriptions in flight are made again (a lost SUBSCRIBE is never
    /// sent again by the library; QoS 0 means nothing of the old one is resent).
    func connected(now: UInt64) { perform(download.reconnected(sessionPresent: false, now: now), payload: []) }

    /// A message on a blob topic; false when it is not this blob's.
    func receive(_ m: MQTTMessage, now: UInt64) -> Bool {
        guard let kind = reference.topics.classify(m.topic) else { return false }
        let bad = download.badChunks
        perform(download.receive(topic: m.topic, payload: m.payload, now: now), payload: m.payload)
        if download.badChunks > bad, case .chunk(let n) = kind {
            log.warning("fleet: zone set \(reference.sha256.prefix(12))…: chunk \(n) arrived with a wrong SHA-256 or size; asking for it again")
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
                perform(download.fail(FleetError("zoneset.disk", error.message)), payload: [])
                return
            }
            budget -= v.length
            perform(download.verified(chunk: v.chunk, bytes: bytes, now: now), payload: [])
        }
    }

    /// Lets go of subscriptions and the file (a newer document names another set).
    func abandon() {
        if stage == .downloading || stage == .verifying {
            perform(download.fail(FleetError("zoneset.replaced", "replaced by a newer desired document")), payload: [], quiet: true)
        }
        file = nil
    }

    /// The daemon's build ended: the files this rollout made that are no longer needed go.
    func finished(applied: Bool) {
        file = nil
        if applied {
            _ = BlobFile.remove(downloadPath)
            try? store.apply([.removeMeta(key: "fleet.blob"), .removeMeta(key: "fleet.blob.have"), .removeMeta(key: "fleet.blob.chunks")], sync: false)
        } else {
            _ = BlobFile.remove(geojsonPath)
        }
    }

    private func perform(_ actions: [BlobDownload<SHA256>.Action], payload: [UInt8], quiet: Bool = false) {
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
                        try store.apply([.setMeta(key: "fleet.blob.have", value: BlobChunkRecord.encode(download.have, chunks: download.manifest?.chunks ?? 0))], sync: false)
                    } catch { failure = "the state file: \(error)" }
                }
                if let failure {
                    perform(download.fail(FleetError("zoneset.disk", "chunk \(n): \(failure)")), payload: [])
                    return
                }
                if download.have.count % 16 == 0 { progressed() }
            case .forget(let n):
                log.warning("fleet: zone set \(reference.sha256.prefix(12))…: chunk \(n) read back wrong from \(downloadPath); fetching it again")
                try? store.apply([.setMeta(key: "fleet.blob.have", value: BlobChunkRecord.encode(download.have, chunks: download.manifest?.chunks ?? 0))], sync: false)
                stage = .downloading
            case .verify:
                do { try file?.synchronize() } catch {
                    perform(download.fail(FleetError("zoneset.disk", error.message)), payload: [])
                    return
                }
                stage = .verifying
                progressed()
            case .complete:
                stage = .building
                log.info("fleet: zone set \(reference.sha256.prefix(12))… downloaded and verified (\(download.manifest?.chunks ?? 0) chunks, \(download.receivedBytes) bytes received, \(download.badChunks) bad, \(download.retries) asked again); building")
                progressed()
                build(self)
            case .failed(let e):
                stage = .failed
                file = nil
                if !quiet {
                    log.warning("fleet: zone set \(reference.sha256.prefix(12))…: \(e)")
                    failed(e)
                }
            }
        }
    }

    /// Checks the disk (the blob, the GeoJSON and the compiled set must fit), then opens and
    /// preallocates the download file; the refusal names the shortfall.
    private func allocate(size: Int, rawSize: Int?) -> FleetError? {
        guard let m = download.manifest else { return FleetError("zoneset.state", "no manifest") }
        do {
            try store.apply([.setMeta(key: "fleet.blob.chunks", value: String(m.chunks))], sync: false)
        } catch { return FleetError("zoneset.state", "the state file could not be written: \(error)") }
        let raw = rawSize ?? size * Self.rawPerCompressed
        let held = BlobFile.allocatedBytes(downloadPath)
        let need = max(0, size - held) + raw + raw
        let folder = statePath.contains("/") ? String(statePath[..<statePath.lastIndex(of: "/")!]) : "."
        if let free = FileSystemSpace.available(at: folder.isEmpty ? "/" : folder), Int64(need) > free {
            return FleetError("zoneset.disk", "zone set \(reference.sha256.prefix(12))… needs \(Self.megabytes(need)) on \(folder) "
                              + "(\(Self.megabytes(size)) compressed, \(Self.megabytes(raw)) GeoJSON, about as much compiled): "
                              + "\(Self.megabytes(Int(free))) free, \(Self.megabytes(need - Int(free))) short")
        }
        do { file = try BlobFile(path: downloadPath, size: size) } catch { return FleetError("zoneset.disk", error.message) }
        return nil
    }

    static func megabytes(_ bytes: Int) -> String {
        let tenths = (bytes + 52_428) / 104_858
        return "\(tenths / 10).\(tenths % 10) MB"
    }

    /// `reported` for the stage the rollout is in.
    func progressReport(version: Int64, applied: Int64?, active: String?, at: WallInstant, agent: String) -> [UInt8] {
        let name: String
        switch stage {
        case .downloading: name = "downloading"
        case .verifying: name = "verifying"
        case .building, .failed: name = "building"
        }
        let p = download.progress
        return FleetReported.zoneSetProgress(version: version, applied: applied, state: name, at: at, active: active,
                                             pending: reference.sha256, have: p.have, of: p.of, agent: agent)
    }
}

// MARK: The link's side

extension FleetLink {
    /// A desired document that names a zone set: true when it is held for a download (or is
    /// the one already held), false when its set is in force and it can be applied now.
    func holdForZoneSet(_ doc: FleetDesiredDocument) -> Bool {
        guard let z = doc.zoneSet else {
            if let r = rollout { r.abandon(); rollout = nil }
            return false
        }
        if z.sha256 == activeZoneSet {
            if let r = rollout { r.abandon(); rollout = nil }
            return false
        }
        let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
        if let r = rollout, r.reference == z, r.stage != .failed {
            if doc.version > r.document.version { r.document = doc }
            return true
        }
        if let old = rollout {
            old.abandon()
            if let record = old.record { blobRecord = record }
        }
        rollout = nil
        let r: FleetZoneSetRollout
        do {
            r = try FleetZoneSetRollout(document: doc, reference: z, recorded: blobRecord, statePath: store.path, store: store, log: log, window: configuration.outbox.window)
        } catch {
            zoneSetFailed(doc, error)
            return true
        }
        if blobRecord?.sha256 != z.sha256 { blobRecord = nil }   // the new download started over: the file and record are its own
        r.subscribe = { [client, log] topic in
            do throws(MQTTError) { _ = try client.subscribe(topic, qos: 0) } catch { log.debug("fleet: subscribe \(topic): \(error)") }
        }
        r.unsubscribe = { [client] topic in _ = try? client.unsubscribe(topic) }
        r.progressed = { [self] in self.reportRollout() }
        r.failed = { [self] e in
            guard let r = self.rollout else { return }
            self.zoneSetFailed(r.document, e)
        }
        r.build = { [self] r in self.buildZoneSet(r) }
        rollout = r
        log.info("fleet: desired version \(doc.version) names zone set \(z.sha256.prefix(12))… (\(z.size) bytes from fleet \(z.fleet)): downloading")
        r.start(now: now)   // not connected: the subscription is made at the connection (connected(now:))
        reportRollout()
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

    func zoneSetFailed(_ doc: FleetDesiredDocument, _ e: FleetError) {
        log.warning("fleet: desired version \(doc.version) not applied: \(e)")
        if let record = rollout?.record { blobRecord = record }
        rollout?.finished(applied: false)
        rollout = nil
        failedZoneSetVersion = doc.version
        publishRetained(topics.reported, FleetReported.failed(version: doc.version, applied: appliedVersion, at: readClock().wall, error: e, agent: Self.agentVersion))
    }

    /// The daemon's build of the rollout's set ended: applied (with its zone count) or why not.
    func zoneSetBuilt(zones: Int?, error: String?) {
        guard let r = rollout, r.stage == .building else { return }
        let doc = r.document
        guard let zones else {
            zoneSetFailed(doc, FleetError("zoneset.build", error ?? "the zone set did not build"))
            return
        }
        rollout = nil
        blobRecord = nil
        let old = zoneSetSource
        activeZoneSet = r.reference.sha256
        zoneSetSource = r.geojsonPath
        do {
            try store.apply([.setMeta(key: "fleet.zoneSet", value: r.reference.sha256), .setMeta(key: "fleet.zoneSet.source", value: r.geojsonPath)], sync: false)
        } catch { log.error("fleet: \(error)") }
        r.finished(applied: true)
        if let old, old != r.geojsonPath { _ = BlobFile.remove(old) }
        let now = readClock().wall
        switch callControl("apply", doc.applyParameters) {
        case .success(let result):
            appliedVersion = doc.version
            do { try store.apply([.setMeta(key: "fleet.appliedVersion", value: String(doc.version))], sync: false) } catch { log.error("fleet: \(error)") }
            log.info("fleet: desired version \(doc.version) applied with zone set \(r.reference.sha256.prefix(12))… (\(zones) zones)")
            publishRetained(topics.reported, FleetReported.zoneSetApplied(version: doc.version, at: now, requests: doc.requestCount, result: result,
                                                                          active: r.reference.sha256, zones: zones, agent: Self.agentVersion))
        case .failure(let e):
            log.warning("fleet: desired version \(doc.version): zone set in force, requests not applied: \(e.message)")
            publishRetained(topics.reported, FleetReported.failed(version: doc.version, applied: appliedVersion, at: now,
                                                                  error: FleetError("desired.rejected", e.message), agent: Self.agentVersion))
        }
    }
}
