// Size: one state machine over one client: the loop's hooks, the outbox window, the client's
// events, desired state, commands and health share its private state (sent, in flight,
// acknowledged); the protocol's parts are in Fleet/ (pure) and the client in FencepostLinux.
//
// The fleet link: the agent's side of the MQTT broker (Fleet/FleetTopics.swift has the protocol).
//
//   uplink    deliveries, responses (with who answered), reported zones' transitions → outbox
//             rows, in the transaction that records them
//             (``outboxChanges(for:answeredBy:)``, the center's hook) → sent in seq order, at most
//             `window` in flight → deleted on PUBACK, one transaction per loop turn
//   downlink  D/desired → the control service's `apply` (the socket's code, all or nothing,
//             only a newer version) → D/reported;  D/cmd → ack, removeDelivered, status, resync
//             (the socket's methods; expired commands refused) → D/cmd/res
//   status    retained online with bdSeq; the Will offline with the same bdSeq and a delay
//   health    retained every `health_interval` and at each connect
//
// Nothing here blocks the loop: the MQTT client connects on a thread, every call is
// non-blocking, the outbox lives in SQLite (bounded), the window of the library is bounded, and
// a dead link only makes the outbox grow — a delivery or a control answer never waits for it.
import CivilTime
import RecentIDs
import Fleet
import FencepostJSON
import FencepostLinux
import LocalNotifications

/// The fleet link of one agent.
///
/// Stored properties: the wiring (configuration, topics, client, store, log and the three hooks
/// the daemon sets) is eight of them; the rest is the link's own state: the uplink window (in
/// flight, sent, acknowledged, a refill wanted), the session (tag, bdSeq, applied version, recent
/// commands, the next answer's source), the timers, and the refusals and link-down lines logged.
final class FleetLink {
    let configuration: FleetSettings
    let topics: FleetTopics
    let client: MQTTClient
    let store: NotificationStore
    let log: DaemonLog
    /// Calls a control method in process: (method, params) → result, answering deliveries as
    /// `remote`. Set by the daemon.
    var callControl: (String, JSONValue) -> Result<JSONValue, RPCError> = { _, _ in .failure(RPCError(.serverError, "not wired")) }
    /// The wall clock and whether it is trusted. Set by the daemon.
    var readClock: () -> EngineClock
    /// Whether the wall clock is the GNSS receiver's time (`clock_trust = "gnss"` with GNSS time
    /// seen). Set by the daemon.
    var wallIsGNSS: () -> Bool = { false }
    /// The largest desired document applied: the control socket's bound on a line
    /// (`[socket] max_message_bytes`), since both are applied the same way, in one loop turn. Set
    /// by the daemon.
    var maximumDesiredBytes: () -> Int = { 64 << 10 }
    /// The health values only the daemon knows (fix, pending, zone set). Set by the daemon.
    var healthFields: (inout FleetHealth) -> Void = { _ in }
    /// Home Assistant (FleetLink+HomeAssistant.swift), when `ha = true`: the last fix, and the
    /// delivery the board's alert signals (what a button press answers). Set by the daemon.
    let homeAssistant: HomeAssistantDiscovery?
    var readPosition: () -> (latitude: Double, longitude: Double, accuracy: Double?)? = { nil }
    var currentAlert: () -> String? = { nil }
    var pendingHomeAssistantEvents: [[UInt8]] = []
    var droppedHomeAssistantEvents = 0
    var lastPositionPayload: [UInt8]?
    var nextPosition: UInt64 = 0

    static let agentVersion = "fencepost-agent"

    private let tag: UInt16
    private var bdSeq: Int64
    var appliedVersion: Int64?
    /// Blobs from the fleet (FleetBlobRollout.swift): the one being fetched, built or read; the
    /// zone set in force, its zone count (when built by this process) and its GeoJSON; the hash
    /// of the kept request list; the version whose blob failed (not tried again); each kind's
    /// download record (a resume point); and the daemon's hand-ons of a verified blob: the zone
    /// set's build, the request list's reading, and the apply of a list read (in parts, across
    /// loop turns: ``requestsApplied(_:_:_:)`` when it ends).
    var rollout: FleetBlobRollout?
    var activeZoneSet: String?
    var activeZoneCount: Int?
    var zoneSetSource: String?
    var keptRequests: String?
    var failedBlobVersion: Int64?
    var blobRecords: [BlobFormat: FleetBlobRollout.Record] = [:]
    var buildZoneSet: (FleetBlobRollout) -> Void = { _ in }
    var readRequests: (FleetBlobRollout) -> Void = { _ in }
    var applyRequests: (FleetBlobRollout, FleetRequestList, [NotificationCategory]?) -> Void = { _, _, _ in }
    private var inflight: [Int32: (seq: Int64, bytes: Int)] = [:]
    private var sentThrough: Int64 = 0
    private var acked: [(seq: Int64, bytes: Int)] = []
    /// The last command ids seen: commands are idempotent by id.
    private var recentCommands = RecentMemory<String, Void>(capacity: 1000)
    private var nextHealth: UInt64 = 0
    /// The next check of a blob download for chunks that did not come.
    var nextRolloutTick: UInt64 = 0
    private var refusedPublishes = 0
    private var lastRefusal: String?
    private var wantsFill = false
    /// Failures logged as one repeating condition.
    private var linkDown = RepeatLimiter()

    /// Reads the secrets (refusing files others may read), takes the tag and counters from `meta`
    /// (the state file's meta values as the center loaded them at start), and makes the MQTT
    /// client (loads libmosquitto). No I/O to the broker yet.
    init(configuration: FleetSettings, store: NotificationStore, meta: [String: String], log: DaemonLog,
         clock: @escaping () -> EngineClock) throws(DaemonError) {
        guard let endpoint = configuration.endpoint else { throw DaemonError("[fleet] needs broker and device; not starting", exitCode: 78) }
        self.configuration = configuration
        self.store = store
        self.log = log
        readClock = clock
        topics = FleetTopics(device: endpoint.device)
        homeAssistant = configuration.homeAssistant ? HomeAssistantDiscovery(topics: topics) : nil
        var password: String?
        do throws(SecretFileError) {
            if let key = configuration.key { try FilePermissions.requirePrivate(key, what: "[fleet] key") }
            if let path = configuration.passwordFile { password = try FilePermissions.readSecretFirstLine(path, what: "[fleet] password_file") }
        } catch {
            throw DaemonError("\(error); not starting", exitCode: 78)
        }
        // The tag of event ids, chosen once per state file; bdSeq and the applied version persist.
        if let t = meta["fleet.tag"].flatMap({ UInt16($0) }) {
            tag = t
        } else {
            tag = UInt16(truncatingIfNeeded: SystemClocks.boottimeNow().nanosecondsSinceBoot ^ UInt64(SystemClocks.realtimeNow().nanoseconds))
            do { try store.apply([.setMeta(key: "fleet.tag", value: String(tag))]) } catch { throw DaemonError("the state file could not be written: \(error)") }
        }
        bdSeq = (meta["fleet.bdSeq"].flatMap { Int64($0) } ?? 0) + 1
        appliedVersion = meta["fleet.appliedVersion"].flatMap { Int64($0) }
        activeZoneSet = meta["fleet.zoneSet"]
        zoneSetSource = meta["fleet.zoneSet.source"]
        keptRequests = meta["fleet.requests"]
        for kind in [BlobFormat.geojson, .jsonl] {
            let key = kind.metaKey
            if let sha = meta[key], let chunks = meta[key + ".chunks"].flatMap({ Int($0) }), let have = meta[key + ".have"] {
                blobRecords[kind] = FleetBlobRollout.Record(sha256: sha, chunks: chunks, have: have)
            }
        }
        store.outboxBounds = configuration.outbox

        var options = MQTTOptions(broker: endpoint.broker, clientID: endpoint.device.text)
        options.keepalive = Int32(configuration.keepalive)
        options.sessionExpiry = 3600
        options.will = MQTTWill(topic: topics.status, payload: FleetStatus.offline(bdSeq: bdSeq), qos: 1, retain: true, delay: 60)
        if let ca = configuration.ca { options.tls = MQTTTLSFiles(ca: ca, certificate: configuration.certificate, key: configuration.key) }
        options.username = configuration.username
        options.password = password
        options.sendMaximum = Int32(configuration.outbox.window)
        do { client = try MQTTClient(options) } catch { throw DaemonError("[fleet] \(error)", exitCode: 69) }
        // OpenSSL 3 sets up its provider at the first digest (tens of ms): done here, before the
        // loop runs, not in the turn where a blob's first chunk arrives.
        _ = try? SHA256()
    }

    // MARK: The loop

    /// Starts connecting.
    func start(now: UInt64) {
        log.info("fleet: device \(topics.device) to \(client.options.broker), outbox \(outboxDescription())")
        client.start(now: now)
        nextHealth = now
    }

    /// When ``tick(now:)`` is due: the client's next tick (connect deadline, retry, keepalive)
    /// and, while connected, the next health snapshot and, while a blob downloads, its
    /// once-a-second check for chunks that did not come. An idle link sleeps between them.
    var nextDeadline: UInt64? {
        if rollout?.wantsTurn == true { return 1 }
        var due = client.nextTick ?? .max
        if client.state == .connected {
            due = min(due, nextHealth)
            if rollout?.stage == .downloading { due = min(due, nextRolloutTick) }
            if homeAssistant != nil { due = min(due, nextPosition) }
        }
        return due == .max ? nil : due
    }

    /// The watched descriptor was ready.
    func handle(readable: Bool, writable: Bool, now: UInt64) {
        client.handle(readable: readable, writable: writable, now: now)
        process(now: now)
    }

    /// Keepalive, deadlines, retries, health: each when it is due (called every loop turn).
    func tick(now: UInt64) {
        if let due = client.nextTick, now >= due {
            client.tick(now: now)
            process(now: now)
        }
        // A chunk cannot come over a link that is down.
        if client.state == .connected, rollout?.stage == .downloading, now >= nextRolloutTick {
            nextRolloutTick = now + 1_000_000_000
            rollout?.tick(now: now)
        }
        if client.state == .connected && now >= nextHealth {
            nextHealth = now + UInt64(configuration.healthInterval) * 1_000_000_000
            publishHealth()
        }
        publishPositionIfDue(now: now)
    }

    /// At the end of each loop turn: acknowledged rows deleted (one transaction), new rows handed.
    func endTurn() {
        flushAcks()
        if wantsFill { fill() }
        flushHomeAssistantEvents()
        if rollout?.wantsTurn == true { rollout?.turn(now: SystemClocks.boottimeNow().nanosecondsSinceBoot) }
    }

    /// Sends the Will on purpose (orderly shutdown: the fleet sees `offline` at once).
    func stop() {
        flushAcks()
        client.stop(sendWill: true)
    }

    // MARK: Uplink

    /// The outbox rows for what an engine output records: deliveries, responses (answered by
    /// `source`) and the transitions of zones with `report`. Runs inside the center's commit (same
    /// transaction), for every engine operation (each fix, each loop turn's advance): the clocks
    /// are read only when the output holds an event.
    func outboxChanges(for out: EngineOutput, answeredBy source: ResponseSource) -> [StoreChange] {
        lazy var clock = readClock()
        var changes: [StoreChange] = []
        lazy var fleetClock = label(clock)
        for d in out.deliveries {
            var trigger: [(key: String, value: JSONValue)] = []
            if let e = d.regionEvent { trigger = [("kind", "region"), ("event", .string(e))] }
            else if let s = d.scheduled { trigger = [("kind", "time"), ("scheduled", .string(s.description))] }
            else { trigger = [("kind", "time")] }
            let e = FleetEvent.delivery(id: d.identifier, request: d.requestIdentifier, category: d.content.categoryIdentifier,
                                        at: d.date ?? clock.wall, clock: fleetClock, trigger: .object(trigger),
                                        outcome: d.outcome.name, position: nil)
            changes.append(.appendOutbox(entry(e, clock: clock)))
            noteHomeAssistantEvent(e)
        }
        for t in out.transitions {
            let pos = t.latitude.flatMap { lat in t.longitude.map { FleetPosition(latitude: lat, longitude: $0, accuracy: t.accuracy, fixAt: nil) } }
            let e = FleetEvent.transition(region: t.zone, event: t.event, at: t.date, clock: fleetClock, position: pos)
            changes.append(.appendOutbox(entry(e, clock: clock)))
        }
        for c in out.changes {
            if case .setResponse(let id, let action, let at) = c {
                let e = FleetEvent.response(delivery: id, action: action, source: source.rawValue, at: at ?? clock.wall, clock: fleetClock)
                changes.append(.appendOutbox(entry(e, clock: clock)))
                noteHomeAssistantEvent(e)
            }
        }
        if !changes.isEmpty { wantsFill = true }
        return changes
    }

    /// How an event or a health snapshot dated by `clock` says where its time came from.
    private func label(_ clock: EngineClock) -> FleetClock {
        clock.wallTrusted ? (wallIsGNSS() ? .gnss : .ntp) : .untrusted
    }

    private func entry(_ e: FleetEvent, clock: EngineClock) -> OutboxEntry {
        OutboxEntry(kind: e.type, topic: topics.events, priority: e.priority.rawValue, body: e.body, created: clock.wall.secondsSinceEpoch)
    }

    /// Hands rows to the library up to the window, in seq order. Rows it holds are not handed
    /// again while it lives (it resends them after a reconnect itself).
    private func fill() {
        wantsFill = false
        guard client.state == .connected else { return }
        let room = configuration.outbox.window - inflight.count
        guard room > 0 else { return }
        let rows: [OutboxRow]
        do { rows = try store.outboxRows(after: sentThrough, limit: room) } catch {
            log.error("fleet: the outbox could not be read: \(error)")
            return
        }
        for row in rows {
            let payload = FleetEvent.payload(id: FleetEventID.make(device: topics.device, tag: tag, seq: row.seq), seq: row.seq, body: row.body)
            do {
                let mid = try client.publish(topic: row.topic, payload: payload, qos: 1, retain: false)
                inflight[mid] = (row.seq, row.bytes)
                sentThrough = row.seq
                store.outboxProtectedThrough = sentThrough
            } catch {
                log.warning("fleet: publishing event \(row.seq): \(error)")
                return
            }
        }
    }

    private func flushAcks() {
        guard !acked.isEmpty else { return }
        do { try store.deleteOutbox(acked) } catch { log.error("fleet: acknowledged events could not be deleted: \(error)") }
        acked.removeAll(keepingCapacity: true)
    }

    func publish(_ topic: String, _ payload: [UInt8], retain: Bool, qos: Int32 = 1) {
        do { _ = try client.publish(topic: topic, payload: payload, qos: qos, retain: retain) } catch {
            log.debug("fleet: not published to \(topic): \(error)")
        }
    }

    // MARK: Events of the client

    private func process(now: UInt64) {
        for event in client.takeEvents() {
            switch event {
            case .connected(let sessionPresent):
                if !log.cleared("fleet: connected to \(client.options.broker) (session \(sessionPresent ? "resumed" : "new"), bdSeq \(bdSeq))", limiter: &linkDown, at: now) {
                    log.info("fleet: connected to \(client.options.broker) (session \(sessionPresent ? "resumed" : "new"), bdSeq \(bdSeq))")
                }
                do { try store.apply([.setMeta(key: "fleet.bdSeq", value: String(bdSeq))], sync: false) } catch { log.error("fleet: \(error)") }
                for t in topics.subscriptions { _ = try? client.subscribe(t, qos: 1) }
                publish(topics.status, FleetStatus.online(bdSeq: bdSeq, since: readClock().wall, agent: Self.agentVersion, boot: String(tag)), retain: true)
                nextHealth = now
                wantsFill = true
                rollout?.connected(now: now)
                homeAssistantConnected(now: now)
            case .disconnected(let reason):
                log.repeating(.warning, "fleet: link to \(client.options.broker) down: \(reason); retrying with backoff", limiter: &linkDown, at: now)
                nextConnection()
            case .refused(let reason, let message):
                log.repeating(.warning, "fleet: the broker refused the connection: \(message) (\(reason))", limiter: &linkDown, at: now)
            case .published(let mid, let reason):
                guard let row = inflight.removeValue(forKey: mid) else { continue }
                if reason >= 0x80 {
                    refusedPublishes += 1
                    lastRefusal = "event \(row.seq): reason \(reason)"
                    log.warning("fleet: the broker refused event \(row.seq) (reason \(reason)); kept as failed, not resent")
                    do { try store.markOutboxFailed(seq: row.seq, reason: "reason \(reason)") } catch { log.error("fleet: \(error)") }
                } else {
                    acked.append(row)
                }
                wantsFill = true
            case .message(let m):
                handle(m)
            case .subscribed(_, let granted):
                if let g = granted.first(where: { $0 >= 0x80 }) {
                    refusedPublishes += 1
                    lastRefusal = "subscription refused (reason \(g))"
                    log.warning("fleet: the broker refused a subscription (reason \(g))")
                }
            }
        }
        if wantsFill { fill() }
    }

    /// After a connection ended: the next one gets the next bdSeq, in its Will and its `online`
    /// (Sparkplug's birth/death sequence), so a consumer can tell a late Will of an old connection.
    private func nextConnection() {
        guard client.state == .waiting else { return }
        let next = bdSeq + 1
        do {
            try client.setWill(MQTTWill(topic: topics.status, payload: FleetStatus.offline(bdSeq: next), qos: 1, retain: true, delay: 60))
            bdSeq = next
        } catch {
            log.debug("fleet: the Will keeps bdSeq \(bdSeq): \(error)")
        }
    }

    private func handle(_ m: MQTTMessage) {
        if handleHomeAssistant(m) { return }
        switch topics.classify(m.topic) {
        case .desired?: applyDesired(m.payload)
        case .command?: runCommand(m.payload)
        case .status?:
            // A Will that landed while connected (a late one of an older connection): say online again.
            if client.state == .connected, FleetStatus.isOffline(m.payload).offline {
                publish(topics.status, FleetStatus.online(bdSeq: bdSeq, since: readClock().wall, agent: Self.agentVersion, boot: String(tag)), retain: true)
            }
        case nil:
            if let r = rollout, r.receive(m, now: SystemClocks.boottimeNow().nanosecondsSinceBoot) { return }
            log.debug("fleet: ignored a message on \(m.topic)")
        }
    }

    // MARK: Desired state

    private func applyDesired(_ payload: [UInt8]) {
        guard !payload.isEmpty else { return }   // a cleared retained document: nothing to do
        let now = readClock().wall
        let doc: FleetDesiredDocument
        do { doc = try FleetDesiredDocument(parsing: payload, maximumBytes: maximumDesiredBytes()) } catch {
            log.warning("fleet: desired document refused: \(error)")
            publish(topics.reported, FleetReported.failed(version: nil, applied: appliedVersion, at: now, error: error, agent: Self.agentVersion), retain: true)
            return
        }
        if let applied = appliedVersion, doc.version <= applied {
            log.debug("fleet: desired version \(doc.version) is not newer than \(applied): ignored")
            return
        }
        if doc.version == failedBlobVersion { return }   // a blob of it failed: said in reported already
        if holdForBlobs(doc) { return }
        switch callControl("apply", doc.applyParameters) {
        case .success(let result):
            recordApplied(doc)
            log.info("fleet: desired version \(doc.version) applied")
            publish(topics.reported, FleetReported.applied(version: doc.version, at: now, requests: doc.requestCount, result: result, agent: Self.agentVersion), retain: true)
        case .failure(let e):
            log.warning("fleet: desired version \(doc.version) not applied: \(e.message)")
            let error = FleetError("desired.rejected", e.message)
            publish(topics.reported, FleetReported.failed(version: doc.version, applied: appliedVersion, at: now, error: error, agent: Self.agentVersion), retain: true)
        }
        nextHealth = 0
    }

    // MARK: Commands

    private func runCommand(_ payload: [UInt8]) {
        let clock = readClock()
        let command: FleetCommand
        switch FleetCommand.parse(payload) {
        case .success(let c): command = c
        case .failure(let refusal):
            log.warning("fleet: command refused: \(refusal.error)")
            publish(topics.commandResult, FleetCommand.result(id: refusal.id, ok: false, result: nil, error: refusal.error), retain: false)
            return
        }
        if let error = command.check(now: clock.wallTrusted ? clock.wall : nil) {
            log.warning("fleet: \(error)")
            publish(topics.commandResult, FleetCommand.result(id: command.id, ok: false, result: nil, error: error), retain: false)
            return
        }
        guard recentCommands.insertIfNew(command.id) else {
            log.debug("fleet: command \(command.id) seen before: ignored")
            return
        }
        var method = command.name.rawValue
        var params = command.args
        if command.name == .resync {
            // Re-reading retained documents: a new subscription delivers the retained desired again.
            appliedVersion = nil
            _ = try? client.unsubscribe(topics.desired)
            _ = try? client.subscribe(topics.desired, qos: 1)
            publish(topics.commandResult, FleetCommand.result(id: command.id, ok: true, result: .object([("resync", true)]), error: nil), retain: false)
            return
        }
        if command.name == .status { params = .object([]) ; method = "status" }
        switch callControl(method, params) {
        case .success(let value):
            publish(topics.commandResult, FleetCommand.result(id: command.id, ok: true, result: value, error: nil), retain: false)
        case .failure(let e):
            publish(topics.commandResult, FleetCommand.result(id: command.id, ok: false, result: nil, error: FleetError("command.failed", e.message)), retain: false)
        }
    }

    // MARK: Health

    private func outboxDescription() -> String {
        "\(configuration.outbox.maximumRows) rows / \(configuration.outbox.maximumBytes / 1024) KiB"
    }

    /// The expiry of this board's certificate (its client certificate, else the CA file's
    /// first), read at each health so a renewed file shows; nil without TLS or when unreadable.
    private func certificateNotAfter() -> WallInstant? {
        guard let path = configuration.certificate ?? configuration.ca,
              let pem = try? FileDescriptor.readFile(path, maximumBytes: 64 * 1024) else { return nil }
        return FleetCertificate.notAfter(pem: pem)
    }

    private func publishHealth() {
        let clock = readClock()
        let stats = try? store.outboxStatistics()
        var h = FleetHealth(at: clock.wall, clock: label(clock), pending: 0,
                            outboxDepth: stats?.rows ?? 0, outboxBytes: stats?.bytes ?? 0, connections: client.connections)
        h.outboxFailed = stats?.failed ?? 0
        if let o = stats?.oldestCreated { h.outboxOldestSeconds = Double(max(0, clock.wall.secondsSinceEpoch - o)) }
        h.refusedPublishes = refusedPublishes
        h.lastRefusal = lastRefusal
        h.appliedVersion = appliedVersion
        h.residentBytes = Memory.residentKilobytes().map { $0 * 1024 }
        h.certificateNotAfter = certificateNotAfter()?.description
        healthFields(&h)
        publish(topics.health, h.payload, retain: true, qos: 0)
    }
}
