// The uplink payloads. Events are stored in the outbox as their *body* — the members after
// `"v","id","seq"` — and get those three when sent, because `seq` is the outbox row id that the
// insert assigns. Everything is compact JSON (FencepostJSON's serializer).
import CivilTime
import FencepostJSON

/// Outbox priorities: the lower survives longer when the outbox is full.
public enum FleetPriority: Int, Hashable, Sendable, CaseIterable {
    /// A driver's answer and announced gaps: dropped last (gaps never).
    case response = 0
    case delivery = 1
    case transition = 2
    case other = 3
}

/// How far the wall clock can be trusted, as an event says it (`clock`).
public enum FleetClock: String, Hashable, Sendable {
    case gnss, ntp, untrusted
}

/// A position in an event.
public struct FleetPosition: Hashable, Sendable {
    public var latitude: Double
    public var longitude: Double
    /// Horizontal error estimate, metres.
    public var accuracy: Double?
    public var fixAt: WallInstant?
    public init(latitude: Double, longitude: Double, accuracy: Double?, fixAt: WallInstant?) {
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.fixAt = fixAt
    }

    var json: JSONValue {
        var m: [(key: String, value: JSONValue)] = [("lat", .number(latitude)), ("lon", .number(longitude))]
        if let a = accuracy { m.append(("acc", .number((a * 10).rounded() / 10))) }
        if let f = fixAt { m.append(("fixAt", .string(f.description))) }
        return .object(m)
    }
}

/// One outbox event before it has a seq.
public struct FleetEvent: Hashable, Sendable {
    /// `delivery`, `response`, `transition`, `gap`.
    public var type: String
    public var priority: FleetPriority
    /// The members after v/id/seq, in order.
    public var members: [(key: String, value: JSONValue)]

    public static func == (a: FleetEvent, b: FleetEvent) -> Bool { a.type == b.type && a.body == b.body }
    public func hash(into h: inout Hasher) { h.combine(body) }

    /// The body text: `"type":"delivery","at":…` (no braces).
    public var body: String {
        let text = JSONValue.object(members).serialized()
        return String(text.dropFirst().dropLast())
    }

    /// A delivery: the delivery's id, its request and category, what fired it.
    public static func delivery(id: String, request: String, category: String?, at: WallInstant, clock: FleetClock,
                                trigger: JSONValue, outcome: String, position: FleetPosition?) -> FleetEvent {
        var m: [(key: String, value: JSONValue)] = [("type", "delivery"), ("at", .string(at.description)), ("clock", .string(clock.rawValue)),
                                                    ("delivery", .string(id)), ("request", .string(request))]
        if let category { m.append(("category", .string(category))) }
        m.append(("trigger", trigger))
        if outcome != "delivered" { m.append(("outcome", .string(outcome))) }
        if let p = position { m.append(("pos", p.json)) }
        return FleetEvent(type: "delivery", priority: .delivery, members: m)
    }

    /// An answer to a delivery: `source` is `button`, `socket` or `remote`.
    public static func response(delivery: String, action: String, source: String, at: WallInstant, clock: FleetClock) -> FleetEvent {
        FleetEvent(type: "response", priority: .response, members: [
            ("type", "response"), ("at", .string(at.description)), ("clock", .string(clock.rawValue)),
            ("delivery", .string(delivery)), ("action", .string(action)), ("source", .string(source)),
        ])
    }

    /// A region crossing of a zone that asks to be reported.
    public static func transition(region: String, event: String, at: WallInstant, clock: FleetClock, position: FleetPosition?) -> FleetEvent {
        var m: [(key: String, value: JSONValue)] = [("type", "transition"), ("at", .string(at.description)), ("clock", .string(clock.rawValue)),
                                                    ("region", .string(region)), ("event", .string(event))]
        if let p = position { m.append(("pos", p.json)) }
        return FleetEvent(type: "transition", priority: .transition, members: m)
    }

    /// The payload as sent: `{"v":1,"id":…,"seq":…,<body>}`.
    public static func payload(id: String, seq: Int64, body: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(body.utf8.count + id.utf8.count + 40)
        out.append(contentsOf: #"{"v":1,"id":"#.utf8)
        JSONValue.serializeString(id, into: &out)
        out.append(contentsOf: #","seq":"#.utf8)
        out.append(contentsOf: String(seq).utf8)
        if !body.isEmpty {
            out.append(UInt8(ascii: ","))
            out.append(contentsOf: body.utf8)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

/// The gap event's body: what the outbox dropped to stay within its bounds.
public struct FleetGap: Hashable, Sendable {
    /// The first and last seq dropped (the rows between them that remain were not dropped).
    public var from: Int64
    public var to: Int64
    /// Rows dropped by event type, e.g. ["transition": 480]; types in priority order.
    public var dropped: [(type: String, count: Int)]
    /// Events never written (the outbox full of more important ones): by type.
    public var refused: [(type: String, count: Int)]

    public static func == (a: FleetGap, b: FleetGap) -> Bool { a.body == b.body }
    public func hash(into h: inout Hasher) { h.combine(body) }

    public init(from: Int64, to: Int64, dropped: [(type: String, count: Int)], refused: [(type: String, count: Int)] = []) {
        self.from = from
        self.to = to
        self.dropped = dropped
        self.refused = refused
    }

    /// A gap row's body read back (``body``'s shape); nil when it is not one.
    public init?(body: String) {
        guard let v = try? JSONValue.parse(Array(("{" + body + "}").utf8)), v["type"]?.string == "gap",
              let dropped = v["dropped"]?.object else { return nil }
        func counts(_ o: [(key: String, value: JSONValue)]) -> [(type: String, count: Int)]? {
            var out: [(type: String, count: Int)] = []
            for (k, n) in o {
                guard let c = n.int else { return nil }
                out.append((k, c))
            }
            return out
        }
        guard let d = counts(dropped), let r = counts(v["refused"]?.object ?? []) else { return nil }
        self.init(from: v["from"]?.int64 ?? 0, to: v["to"]?.int64 ?? 0, dropped: d, refused: r)
    }

    public var body: String {
        var m: [(key: String, value: JSONValue)] = [("type", "gap"), ("reason", "outbox-full")]
        if from > 0 { m.append(("from", .integer(from))); m.append(("to", .integer(to))) }
        m.append(("dropped", .object(dropped.map { ($0.type, JSONValue.integer(Int64($0.count))) })))
        if !refused.isEmpty { m.append(("refused", .object(refused.map { ($0.type, JSONValue.integer(Int64($0.count))) }))) }
        let text = JSONValue.object(m).serialized()
        return String(text.dropFirst().dropLast())
    }
}

/// `status` and the Will, with Sparkplug's birth/death sequence: `bdSeq` grows by one per
/// connection, so a consumer that has seen `online` with bdSeq n takes an `offline` with a
/// smaller bdSeq for a late Will of an older connection.
public enum FleetStatus {
    public static func online(bdSeq: Int64, since: WallInstant, agent: String, boot: String) -> [UInt8] {
        bytes(.object([("online", true), ("bdSeq", .integer(bdSeq)), ("since", .string(since.description)),
                       ("agent", .string(agent)), ("boot", .string(boot))]))
    }

    public static func offline(bdSeq: Int64) -> [UInt8] {
        bytes(.object([("online", false), ("bdSeq", .integer(bdSeq))]))
    }

    /// A retained status read back: whether it says offline for connection `bdSeq` (a Will that
    /// landed while the device is connected: answer with `online` again).
    public static func isOffline(_ payload: [UInt8]) -> (offline: Bool, bdSeq: Int64?) {
        guard let v = try? JSONValue.parse(payload) else { return (false, nil) }
        return (v["online"]?.bool == false, v["bdSeq"]?.int64)
    }
}

/// `reported`: the applied version, or why the newest was not.
public enum FleetReported {
    /// `applied`: `requests` {"count"} and the socket's `apply` result (ids by what changed); for
    /// a request list from a blob, `requests` also names the blob and counts the changes
    /// (`changes`: added, replaced, removed, unchanged), since the ids of a large list would not
    /// fit a retained message (`fencepost pending` lists them), and `result` is left out. With a
    /// zone set from the fleet in force, `zoneSet` names it and counts its zones.
    public static func applied(version: Int64, at: WallInstant, requests: Int, result: JSONValue?,
                               requestsBlob: (sha256: String, changes: [(key: String, count: Int)])? = nil,
                               zoneSet: (active: String, zones: Int)? = nil, agent: String) -> [UInt8] {
        var counted: [(key: String, value: JSONValue)] = [("count", .integer(Int64(requests)))]
        if let requestsBlob {
            counted.append(("blob", .string(requestsBlob.sha256)))
            counted += requestsBlob.changes.map { ($0.key, .integer(Int64($0.count))) }
        }
        var m: [(key: String, value: JSONValue)] = [("v", 1), ("desiredVersion", .integer(version)), ("appliedVersion", .integer(version)),
                                                    ("state", "applied"), ("at", .string(at.description)),
                                                    ("requests", .object(counted))]
        if let zoneSet {
            m.append(("zoneSet", .object([("active", .string(zoneSet.active)), ("zones", .integer(Int64(zoneSet.zones))), ("pending", .null)])))
        }
        if let result, requestsBlob == nil { m.append(("result", result)) }
        m.append(("error", .null))
        m.append(("agent", .string(agent)))
        return bytes(.object(m))
    }

    public static func failed(version: Int64?, applied: Int64?, at: WallInstant, error: FleetError, agent: String) -> [UInt8] {
        bytes(.object([("v", 1), ("desiredVersion", version.map { .integer($0) } ?? .null),
                       ("appliedVersion", applied.map { .integer($0) } ?? .null), ("state", "failed"),
                       ("at", .string(at.description)),
                       ("error", .object([("code", .string(error.code)), ("message", .string(error.message))])),
                       ("agent", .string(agent))]))
    }
}

func bytes(_ v: JSONValue) -> [UInt8] {
    var out: [UInt8] = []
    v.serialize(into: &out)
    return out
}

/// Health: the latest snapshot, retained, never queued.
///
/// Stored properties: one per field of the health document on the wire (docs/fleet.md).
public struct FleetHealth: Hashable, Sendable {
    public var at: WallInstant
    public var clock: FleetClock
    public var fixAgeSeconds: Double?
    public var fixError: Double?
    public var pending: Int
    public var zoneSetHash: String?
    public var outboxDepth: Int
    public var outboxBytes: Int
    public var outboxOldestSeconds: Double?
    public var outboxFailed: Int
    public var refusedPublishes: Int
    public var lastRefusal: String?
    public var residentBytes: Int?
    public var freeDiskBytes: Int64?
    public var certificateNotAfter: String?
    public var connections: Int
    public var appliedVersion: Int64?

    public init(at: WallInstant, clock: FleetClock, pending: Int, outboxDepth: Int, outboxBytes: Int, connections: Int) {
        self.at = at
        self.clock = clock
        self.pending = pending
        self.outboxDepth = outboxDepth
        self.outboxBytes = outboxBytes
        self.outboxFailed = 0
        self.refusedPublishes = 0
        self.connections = connections
    }

    public var payload: [UInt8] {
        func opt(_ d: Double?) -> JSONValue { d.map { .number(($0 * 10).rounded() / 10) } ?? .null }
        func int(_ i: Int) -> JSONValue { .integer(Int64(i)) }
        func text(_ t: String?) -> JSONValue { t.map { .string($0) } ?? .null }
        var m: [(key: String, value: JSONValue)] = []
        m.append(("v", .integer(1)))
        m.append(("at", .string(at.description)))
        m.append(("clock", .string(clock.rawValue)))
        m.append(("fix", .object([("ageSeconds", opt(fixAgeSeconds)), ("error", opt(fixError))])))
        m.append(("pending", int(pending)))
        m.append(("zoneSet", text(zoneSetHash)))
        m.append(("appliedVersion", appliedVersion.map { .integer($0) } ?? .null))
        var outbox: [(key: String, value: JSONValue)] = [("depth", int(outboxDepth)), ("bytes", int(outboxBytes))]
        outbox.append(("oldestSeconds", opt(outboxOldestSeconds)))
        outbox.append(("failed", int(outboxFailed)))
        m.append(("outbox", .object(outbox)))
        m.append(("refused", .object([("count", int(refusedPublishes)), ("last", text(lastRefusal))])))
        m.append(("rss", residentBytes.map(int) ?? .null))
        m.append(("freeDisk", freeDiskBytes.map { .integer($0) } ?? .null))
        m.append(("certificateNotAfter", text(certificateNotAfter)))
        m.append(("connections", int(connections)))
        return bytes(.object(m))
    }
}
