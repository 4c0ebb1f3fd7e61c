// `status`: the agent's state, and for each pending request why it has not fired yet — the
// question a person asks in a parked car ("why did it not beep?").
import CivilTime
import FencepostJSON
import LocalNotifications
import Geofencing

extension ControlService {
    /// Pending requests in one `status` answer, whatever `limit` asks: each costs its "why" (about
    /// 25 µs in a debug build here, several times that on a board's core), and one answer is one
    /// loop turn, so the page is what bounds the turn. The CLI asks for the rest page by page.
    static let statusPageItems = 250

    /// `status` `{}` → `{"clock":{…},"gps":{…},"badge":n,"delivered":n,"pending":[{"id","kind","nextFire","regionState","why"}],
    /// "pendingTotal":n,"next":id|null}`: the first page of pending requests (statusPageItems, ControlPage's
    /// byte bound); `{"limit":n,"after":id}` asks for another page.
    func statusResult(_ call: inout Call, _ s: AgentStatus) throws(RPCError) -> JSONValue {
        try call.keys(["limit", "after"])
        let page = try ControlPage(call.params)
        let engine = call.center.engine, clock = call.clock
        func number(_ d: Double?) -> JSONValue { d.map(JSONValue.number) ?? .null }
        func text(_ t: String?) -> JSONValue { t.map(JSONValue.string) ?? .null }
        var uptime: JSONValue = .null
        if let m = s.startedMonotonic, clock.monotonic >= m {
            uptime = .integer(Int64((clock.monotonic.nanosecondsSinceBoot - m.nanosecondsSinceBoot) / 1_000_000_000))
        }
        let clockJSON: JSONValue = .object([
            ("wall", .string(clock.wall.description)), ("trusted", .bool(engine.wallTrusted)),
            ("source", .string(s.clockSource.rawValue)), ("started", text(s.started?.description)), ("uptime", uptime),
            ("zone", .string(s.deviceZone)), ("offsetToSystem", number(s.offsetToSystemClock)),
        ])
        let gps: JSONValue = .object([
            ("source", text(s.gpsSource)), ("connected", .bool(s.gpsConnected)), ("lastFixAge", number(s.lastFixAge)),
            ("error", number(s.lastFixError)), ("lat", number(s.lastFixLatitude)), ("lon", number(s.lastFixLongitude)),
            ("fixes", .integer(Int64(s.fixesReceived))),
        ] + s.gps.jsonFields)
        // The last delivery of each request, made once and only when a request of the page needs
        // it (a location request with a cooldown): O(delivered) at most once per answer.
        var lastDelivered: [String: WallInstant]?
        func lastDelivery(_ id: String) -> WallInstant? {
            if lastDelivered == nil {
                var m: [String: WallInstant] = [:]
                for d in engine.delivered { if let date = d.date { m[d.requestIdentifier] = date } }
                lastDelivered = m
            }
            return lastDelivered?[id]
        }
        let (pending, next) = try page.cut(engine, clock: clock, defaultLimit: Self.statusPageItems, maximumItems: Self.statusPageItems) { p -> JSONValue in
            .object([("id", .string(p.request.identifier)), ("kind", .string(p.request.trigger.kind)),
                     ("nextFire", text(p.nextFire?.description)),
                     ("regionState", p.regionState.map { .string(Self.regionName($0)) } ?? .null),
                     ("why", .string(Self.why(p, engine: engine, clock: clock, status: s, lastDelivery: lastDelivery)))])
        }
        return .object([("clock", clockJSON), ("gps", gps), ("badge", .integer(Int64(engine.badgeCount))),
                        ("delivered", .integer(Int64(engine.delivered.count))), ("config", text(s.configPath)),
                        ("state", text(s.statePath)), ("pending", .array(pending)),
                        ("pendingTotal", .integer(Int64(engine.pendingCount))), ("next", next.map(JSONValue.string) ?? .null),
                        ("zones", Self.zonesJSON(engine, clock: clock))])
    }

    /// The zone set: its size and the zones with state (never the whole set): `{"count","withState","zones":[{"id","state","fires","quietUntil"}]}`.
    static func zonesJSON(_ engine: NotificationEngine, clock: EngineClock) -> JSONValue {
        let (zones, total) = engine.zonesWithState(limit: zoneStatusLimit, clock: clock)
        let list = zones.map { z -> JSONValue in
            .object([("id", .string(z.identifier)), ("state", .string(regionName(z.regionState))), ("fires", .integer(z.fires)),
                     ("quietUntil", z.quietUntil.map { .string(WallInstant(secondsSinceEpoch: Int64($0.rounded(.up))).description) } ?? .null)])
        }
        return .object([("count", .integer(Int64(engine.zoneCount))), ("withState", .integer(Int64(total))), ("zones", .array(list))])
    }

    /// Most zones with state listed by `status`.
    static let zoneStatusLimit = 50

    /// Why `p` has not fired yet, in one line. `lastDelivery`: a request's last delivery date.
    static func why(_ p: PendingNotification, engine: NotificationEngine, clock: EngineClock, status s: AgentStatus,
                    lastDelivery: (String) -> WallInstant?) -> String {
        func next(_ fire: WallInstant?) -> String {
            guard let fire else { return "no further fire" }
            return "next fire in \(approximate(fire.secondsSinceEpoch - clock.wall.secondsSinceEpoch)) (\(fire))"
        }
        switch p.request.trigger {
        case .calendar:
            if !engine.wallTrusted {
                return "clock untrusted (source \(s.clockSource.rawValue)): calendar triggers are held until NTP or GNSS time; "
                    + (p.nextFire.map { "then due \($0)" } ?? "no further fire")
            }
            return next(p.nextFire)
        case .interval:
            return next(p.nextFire)
        case .location(let t):
            var parts: [String] = []
            let state = p.regionState.map(regionName) ?? "unknown"
            if let age = s.lastFixAge {
                var fix = "last fix \(approximate(Int64(age.rounded()))) ago"
                if let e = s.lastFixError { fix += " with error \(Int(e.rounded())) m" }
                parts.append(fix + ", \(state)")
            } else {
                let source = s.gpsSource.map { "\($0)\(s.gpsConnected ? "" : ", not connected")" } ?? "no GPS source configured"
                parts.append("waiting for a fix (\(source))")
            }
            if t.cooldown > 0, let last = lastDelivery(p.request.identifier) {
                let left = Int64(t.cooldown.rounded(.up)) - (clock.wall.secondsSinceEpoch - last.secondsSinceEpoch)
                if left > 0 { parts.append("cooldown \(approximate(left)) left") }
            }
            var waits: [String] = []
            if t.notifyOnEntry { waits.append("entry") }
            if t.notifyOnExit { waits.append("exit") }
            parts.append("waiting for " + (waits.isEmpty ? "nothing (neither entry nor exit is notified)" : waits.joined(separator: " or ")))
            return parts.joined(separator: "; ")
        }
    }

    /// A duration in its two largest units: `45 s`, `12 min`, `3h 12min`, `2d 4h`.
    public static func approximate(_ seconds: Int64) -> String {
        let s = max(0, seconds)
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min" }
        if s < 86400 { return "\(s / 3600)h \(s / 60 % 60)min" }
        return "\(s / 86400)d \(s / 3600 % 24)h"
    }
}
