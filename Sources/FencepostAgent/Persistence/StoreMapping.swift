// The engine's StateChanges as rows of the SQLite store, and the store's snapshot back as the
// engine's: requests, progress, deliveries and categories travel as their JSON text.
import CivilTime
import FencepostJSON
import FencepostLinux
import Geofencing
import LocalNotifications

enum StoreMapping {
    static let nextGenerationKey = "nextGeneration"

    /// The store rows for `changes`, in order. Within one batch (one transaction) only the last
    /// `setNextGeneration` is written: an apply of n requests makes n of them.
    static func storeChanges(_ changes: [StateChange]) -> [StoreChange] { Array(storeRows(changes)) }

    /// As ``storeChanges(_:)``, made one at a time as the store writes them.
    static func storeRows(_ changes: [StateChange]) -> some Sequence<StoreChange> {
        let lastGeneration = changes.lastIndex { if case .setNextGeneration = $0 { true } else { false } }
        return changes.indices.lazy.filter { i in
            if case .setNextGeneration = changes[i], i != lastGeneration { return false }
            return true
        }.map { storeChange(changes[$0]) }
    }

    static func storeChange(_ change: StateChange) -> StoreChange {
        switch change {
        case .putRequest(let r, let p):
            return .putRequest(StoredRequest(id: r.identifier, json: r.json.serialized(), state: p.json.serialized()))
        case .setProgress(let id, let p):
            return .setRequestState(id: id, state: p.json.serialized())
        case .removeRequest(let id):
            return .removeRequest(id: id)
        case .removeAllRequests:
            return .removeAllRequests
        case .putDelivery(let d):
            return .putDelivery(StoredDelivery(
                deliveryID: d.identifier, requestID: d.requestIdentifier, json: d.json.serialized(),
                scheduledAt: d.scheduled?.secondsSinceEpoch, deliveredAt: d.date?.secondsSinceEpoch ?? 0,
                outcome: d.outcome.name, response: d.response, respondedAt: d.respondedAt?.secondsSinceEpoch))
        case .setResponse(let id, let action, let at):
            return .setDeliveryResponse(deliveryID: id, response: action, at: at?.secondsSinceEpoch ?? 0)
        case .removeDelivery(let id):
            return .removeDelivery(deliveryID: id)
        case .removeAllDeliveries:
            return .removeAllDeliveries
        case .setCategories(let list):
            return .replaceCategories(list.map { StoredCategory(id: $0.identifier, json: $0.json.serialized()) })
        case .setNextGeneration(let g):
            return .setMeta(key: nextGenerationKey, value: "\(g)")
        case .outcome(let o):
            return .appendOutcome(StoredOutcome(at: o.date?.secondsSinceEpoch ?? 0, requestID: o.requestIdentifier,
                                                event: o.kind.rawValue, detail: o.json.serialized()))
        case .putZoneState(let z):
            return .setMeta(key: zoneStatePrefix + z.identifier, value: zoneStateJSON(z).serialized())
        case .removeZoneState(let id):
            return .removeMeta(key: zoneStatePrefix + id)
        }
    }

    /// Zone states are meta rows `zone-state:ID` → JSON (sparse: only zones that have fired).
    static let zoneStatePrefix = "zone-state:"

    static func zoneStateJSON(_ z: ZoneState) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("fingerprint", .string(String(z.fingerprint, radix: 16))), ("generation", .integer(z.generation)),
            ("fires", .integer(z.fires)), ("state", .string(z.regionState == .inside ? "inside" : z.regionState == .outside ? "outside" : "unknown")),
        ]
        if let t = z.lastEnter { members.append(("lastEnter", .number(t))) }
        if let t = z.lastExit { members.append(("lastExit", .number(t))) }
        if let t = z.lastDwell { members.append(("lastDwell", .number(t))) }
        return .object(members)
    }

    static func zoneState(id: String, json: JSONValue) -> ZoneState? {
        guard let fp = json["fingerprint"]?.string.flatMap({ UInt64($0, radix: 16) }), let g = json["generation"]?.int64,
              let fires = json["fires"]?.int64, let name = json["state"]?.string else { return nil }
        let state: RegionState = name == "inside" ? .inside : name == "outside" ? .outside : .unknown
        return ZoneState(identifier: id, fingerprint: fp, generation: g, fires: fires, regionState: state,
                         lastEnter: json["lastEnter"]?.double, lastExit: json["lastExit"]?.double, lastDwell: json["lastDwell"]?.double)
    }

    /// A row the engine cannot read back: it stays in the file untouched, and is reported.
    struct Unreadable: Sendable, CustomStringConvertible {
        var what: String
        var id: String
        var reason: String
        var description: String { "\(what) \"\(id)\" in the state file cannot be read and is left as it is: \(reason)" }
    }

    /// Parses JSON text and decodes it; the failure is the parser's or the decoder's message (one
    /// typed error at a time: Embedded Swift has no `any Error`).
    static func decode<T>(_ text: String, _ decoder: (JSONValue) throws(RequestError) -> T) -> (value: T?, reason: String) {
        let json: JSONValue
        do { json = try JSONValue.parse(text) } catch { return (nil, "\(error)") }
        do { return (try decoder(json), "") } catch { return (nil, "\(error)") }
    }

    /// The engine's snapshot from the store's, with the rows that could not be read.
    static func engineSnapshot(_ s: StoreSnapshot, limits: RequestLimits = RequestLimits()) -> (EngineSnapshot, [Unreadable]) {
        var rows = s
        return engineSnapshot(taking: &rows, limits: limits)
    }

    /// As ``engineSnapshot(_:)``, taking the request rows out of `s`: each row's text is freed once
    /// decoded, so a million rows and their decoded requests do not exist at once.
    /// Every row is validated again as if it came from outside (``NotificationRequest/validate(limits:)``,
    /// ``InputRanges``): a row that fails is reported and left in the file, never used.
    static func engineSnapshot(taking s: inout StoreSnapshot, limits: RequestLimits = RequestLimits()) -> (EngineSnapshot, [Unreadable]) {
        var problems: [Unreadable] = []
        var requests: [(request: NotificationRequest, progress: TriggerProgress)] = []
        var rows = s.requests
        s.requests = []
        requests.reserveCapacity(rows.count)
        for i in rows.indices {
            let row = rows[i]
            rows[i] = StoredRequest(id: "", json: "", state: "")
            let r = Self.decode(row.json) { (j) throws(RequestError) -> NotificationRequest in
                let r = try NotificationRequest(json: j)
                try r.validate(limits: limits)
                return r
            }
            let p: (value: TriggerProgress?, reason: String) = r.value == nil ? (nil, "") : Self.decode(row.state, TriggerProgress.init(json:))
            if let request = r.value, let progress = p.value {
                requests.append((request, progress))
            } else {
                problems.append(Unreadable(what: "request", id: row.id, reason: r.value == nil ? r.reason : p.reason))
            }
        }
        rows = []
        var delivered: [DeliveredNotification] = []
        for row in s.deliveries {
            let decoded = Self.decode(row.json, DeliveredNotification.init(json:))
            guard var d = decoded.value else {
                problems.append(Unreadable(what: "delivery", id: row.deliveryID, reason: decoded.reason))
                continue
            }
            d.response = row.response
            d.respondedAt = row.respondedAt.flatMap { $0 == 0 ? nil : WallInstant(secondsSinceEpoch: $0) }
            delivered.append(d)
        }
        var categories: [NotificationCategory] = []
        for row in s.categories {
            // NotificationCategory(json:) checks each action's snooze range.
            let decoded = Self.decode(row.json, NotificationCategory.init(json:))
            if let c = decoded.value { categories.append(c) } else {
                problems.append(Unreadable(what: "category", id: row.id, reason: decoded.reason))
            }
        }
        let generation = s.meta[nextGenerationKey].flatMap { Int64($0) }.flatMap { try? InputRanges.count($0, nextGenerationKey) } ?? 1
        var snapshot = EngineSnapshot(requests: requests, delivered: delivered, categories: categories, nextGeneration: generation)
        for (key, value) in s.meta where key.hasPrefix(zoneStatePrefix) {
            let id = String(key.dropFirst(zoneStatePrefix.count))
            guard let json = try? JSONValue.parse(value), let z = zoneState(id: id, json: json) else {
                problems.append(Unreadable(what: "zone state", id: id, reason: "not a zone state: \(value)"))
                continue
            }
            snapshot.zoneStates.append(z)
        }
        snapshot.zoneStates.sort { $0.identifier < $1.identifier }
        return (snapshot, problems)
    }
}
