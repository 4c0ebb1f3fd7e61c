// JSON forms of the engine's state: progress, deliveries, categories and outcomes — what the
// store keeps as text and the control socket returns.
import CivilTime
import FencepostJSON
import Geofencing

extension TriggerProgress {
    /// `{"generation":3,"fires":12,"after":1767225600,"anchorWall":…,"region":"inside"}`.
    public var json: JSONValue {
        var m: [(key: String, value: JSONValue)] = [("generation", .integer(generation)), ("fires", .integer(fires))]
        if let after { m.append(("after", .integer(after))) }
        if let anchorWall { m.append(("anchorWall", .integer(anchorWall))) }
        if regionState != .unknown { m.append(("region", .string(regionState == .inside ? "inside" : "outside"))) }
        return .object(m)
    }

    public init(json: JSONValue) throws(RequestError) {
        let r = try ObjectReader(json, path: "progress", allowed: ["generation", "fires", "after", "anchorWall", "region"])
        guard let g = r.value("generation")?.int64 else { throw RequestError(.malformed, "progress has no generation") }
        // Re-validated as any outside value: the state file may have been edited or damaged.
        do throws(RangeError) {
            self.init(generation: try InputRanges.count(g, "progress.generation"))
            fires = try InputRanges.count(r.value("fires")?.int64 ?? 0, "progress.fires")
            after = try r.value("after")?.int64.map { v throws(RangeError) in try InputRanges.instant(v, "progress.after") }
            anchorWall = try r.value("anchorWall")?.int64.map { v throws(RangeError) in try InputRanges.instant(v, "progress.anchorWall") }
        } catch { throw RequestError(error) }
        switch try r.string("region") {
        case "inside": regionState = .inside
        case "outside": regionState = .outside
        default: regionState = .unknown
        }
    }
}

extension NotificationCategory {
    /// `{"id":"REMINDER","actions":[{"id":"snooze","title":"Later","snoozeSeconds":600}]}`.
    public var json: JSONValue {
        .object([("id", .string(identifier)), ("actions", .array(actions.map { a in
            var m: [(key: String, value: JSONValue)] = [("id", .string(a.identifier)), ("title", .string(a.title))]
            if let s = a.snoozeSeconds { m.append(("snoozeSeconds", .integer(s))) }
            if a.destructive { m.append(("destructive", .bool(true))) }
            return .object(m)
        }))])
    }

    public init(json: JSONValue) throws(RequestError) {
        let r = try ObjectReader(json, path: "category", allowed: ["id", "actions"])
        guard let id = try r.string("id") else { throw RequestError(.malformed, "missing key \"category.id\"") }
        var actions: [NotificationAction] = []
        if let list = r.value("actions") {
            guard case .array(let items) = list else { throw r.typeError("actions", "an array", list) }
            for (i, item) in items.enumerated() {
                let a = try ObjectReader(item, path: "category.actions[\(i)]", allowed: ["id", "title", "snoozeSeconds", "destructive"])
                guard let aid = try a.string("id") else { throw RequestError(.malformed, "missing key \"category.actions[\(i)].id\"") }
                let snooze = try a.int("snoozeSeconds").map(Int64.init)
                if let s = snooze {
                    do { _ = try InputRanges.duration(seconds: s, "category.actions[\(i)].snoozeSeconds", minimum: 1) } catch {
                        throw RequestError(error, rule: .category)
                    }
                }
                actions.append(NotificationAction(identifier: aid, title: try a.string("title") ?? aid, snoozeSeconds: snooze,
                                                  destructive: try a.bool("destructive") ?? false))
            }
        }
        self.init(identifier: id, actions: actions)
    }
}

extension DeliveredNotification {
    /// The delivery as JSON (ids, content, times as RFC 3339 UTC, outcome, signal, response).
    public var json: JSONValue {
        var m: [(key: String, value: JSONValue)] = [
            ("id", .string(identifier)), ("request", .string(requestIdentifier)), ("content", content.json),
        ]
        if let scheduled { m.append(("scheduled", .string(scheduled.description))) }
        if let date { m.append(("date", .string(date.description))) }
        m.append(("outcome", .string(outcome.name)))
        if case .coalesced(let n) = outcome { m.append(("count", .integer(n))) }
        if let regionEvent { m.append(("regionEvent", .string(regionEvent))) }
        var s: [(key: String, value: JSONValue)] = [("led", .bool(signal.led))]
        if let p = signal.pattern { s.append(("pattern", .string(p))) }
        if signal.untilAcknowledged { s.append(("untilAcknowledged", .bool(true))) }
        if let q = signal.quietReason { s.append(("quiet", .string(q))) }
        m.append(("signal", .object(s)))
        if let response { m.append(("response", .string(response))) }
        if let respondedAt { m.append(("respondedAt", .string(respondedAt.description))) }
        return .object(m)
    }

    public init(json: JSONValue) throws(RequestError) {
        let r = try ObjectReader(json, path: "delivery", allowed: ["id", "request", "content", "scheduled", "date", "outcome",
                                                                    "count", "regionEvent", "signal", "response", "respondedAt"])
        guard let id = try r.string("id"), let request = try r.string("request") else {
            throw RequestError(.malformed, "delivery needs \"id\" and \"request\"")
        }
        let content = try NotificationRequest.content(r.object("content", allowed: NotificationRequest.contentKeys))
        func instant(_ key: String) throws(RequestError) -> WallInstant? {
            guard let s = try r.string(key) else { return nil }
            guard case .success(let t) = RFC3339.parse(s.utf8, lenient: false) else {
                throw RequestError(.malformed, "delivery.\(key) is not an RFC 3339 time: \(s)")
            }
            do { _ = try InputRanges.instant(t.instant.secondsSinceEpoch, "delivery.\(key)") } catch { throw RequestError(error) }
            return t.instant
        }
        let outcome: DeliveryOutcome
        switch try r.string("outcome") ?? "delivered" {
        case "late": outcome = .late
        case "coalesced":
            do { outcome = .coalesced(count: try InputRanges.count(r.value("count")?.int64 ?? 1, "delivery.count")) } catch { throw RequestError(error) }
        default: outcome = .onTime
        }
        var signal = DeliverySignal(pattern: nil, untilAcknowledged: false, led: true, quietReason: nil)
        if let s = try r.object("signal", allowed: ["led", "pattern", "untilAcknowledged", "quiet"]) {
            signal = DeliverySignal(pattern: try s.string("pattern"), untilAcknowledged: try s.bool("untilAcknowledged") ?? false,
                                    led: try s.bool("led") ?? true, quietReason: try s.string("quiet"))
        }
        self.init(identifier: id, requestIdentifier: request, content: content, scheduled: try instant("scheduled"),
                  date: try instant("date"), outcome: outcome, regionEvent: try r.string("regionEvent"), signal: signal,
                  response: try r.string("response"), respondedAt: try instant("respondedAt"))
    }
}

extension Outcome {
    /// `{"t":"…","id":"water","event":"missed","count":3,"first":"…","last":"…","detail":"…"}`.
    public var json: JSONValue {
        var m: [(key: String, value: JSONValue)] = []
        if let date { m.append(("t", .string(date.description))) }
        m.append(("id", .string(requestIdentifier)))
        m.append(("event", .string(kind.rawValue)))
        if count != 1 || kind == .missed { m.append(("count", .integer(count))) }
        if let firstFire { m.append(("first", .string(firstFire.description))) }
        if let lastFire { m.append(("last", .string(lastFire.description))) }
        m.append(("detail", .string(detail)))
        return .object(m)
    }
}
