import CivilTime
@testable import FencepostAgent
import FencepostJSON
import FencepostLinux
import Foundation
import LocalNotifications
import Position
import SeededRandom
import Testing

/// The control service over a real SQLite file: one JSON-RPC line in, one answer out.
final class ControlHarness {
    static let zones = SystemZones()
    let dir: URL
    let path: String
    var center: DurableNotificationCenter
    var service = ControlService()
    var wall: Int64 = 1_790_000_000
    var mono: UInt64 = 5_000_000_000
    var trusted = true
    var status = AgentStatus(wallTrusted: true, clockSource: .ntp, gpsSource: "/dev/serial0 @ 9600", gpsConnected: true,
                             deviceZone: "Europe/Berlin", statePath: "/tmp/state.sqlite")

    var clock: EngineClock {
        EngineClock(wall: WallInstant(secondsSinceEpoch: wall), wallTrusted: trusted, monotonic: MonotonicInstant(nanosecondsSinceBoot: mono))
    }

    static func engine() -> NotificationEngine {
        NotificationEngine(deviceZone: try! zones.rules(named: "Europe/Berlin"), zoneLookup: { try? zones.rules(named: $0) })
    }

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-control-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        path = dir.appendingPathComponent("state.sqlite").path
        center = try DurableNotificationCenter(path: path, engine: Self.engine(), clock: EngineClock(
            wall: WallInstant(secondsSinceEpoch: wall), wallTrusted: true, monotonic: MonotonicInstant(nanosecondsSinceBoot: mono)))
    }

    deinit { try? FileManager.default.removeItem(at: dir) }

    /// Restarts from the file: a new center and a new service.
    func restart() throws {
        center = try DurableNotificationCenter(path: path, engine: Self.engine(), clock: clock)
        service = ControlService()
    }

    func advance(_ seconds: Int64) {
        wall += seconds; mono += UInt64(seconds) * 1_000_000_000
        _ = try? center.perform { (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in e.advance(clock: clock) }
    }

    func send(_ line: String) -> ControlReply {
        service.handle(line: Array(line.utf8), center: center, clock: clock, status: { status })
    }

    /// The parsed answer to `line`.
    func answer(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        let reply = send(line)
        let bytes = try #require(reply.line, sourceLocation: sourceLocation)
        #expect(bytes.last == 0x0A, sourceLocation: sourceLocation)
        #expect(bytes.dropLast().contains(0x0A) == false, "one line", sourceLocation: sourceLocation)
        return try JSONValue.parse(bytes.dropLast())
    }

    private var nextID: Int64 = 1

    /// Calls `method` and returns its result; fails the test on an error answer.
    func result(_ method: String, _ params: String = "{}", sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        nextID += 1
        let a = try answer(#"{"jsonrpc":"2.0","id":\#(nextID),"method":"\#(method)","params":\#(params)}"#, sourceLocation: sourceLocation)
        #expect(a["id"] == .integer(nextID), sourceLocation: sourceLocation)
        #expect(a["error"] == nil, "\(a)", sourceLocation: sourceLocation)
        return try #require(a["result"], sourceLocation: sourceLocation)
    }

    /// Calls `method` expecting an error: (code, message, data).
    func error(_ method: String, _ params: String = "{}", sourceLocation: SourceLocation = #_sourceLocation) throws -> (Int64, String, JSONValue?) {
        let a = try answer(#"{"jsonrpc":"2.0","id":"x","method":"\#(method)","params":\#(params)}"#, sourceLocation: sourceLocation)
        #expect(a["id"] == "x", sourceLocation: sourceLocation)
        #expect(a["result"] == nil, "\(a)", sourceLocation: sourceLocation)
        let e = try #require(a["error"], sourceLocation: sourceLocation)
        return (try #require(e["code"]?.int64), try #require(e["message"]?.string), e["data"])
    }

    /// Size and modification time of the state file and its WAL: changes when a transaction commits.
    func storeFingerprint() throws -> [String] {
        try [path, path + "-wal"].map { p in
            let a = try FileManager.default.attributesOfItem(atPath: p)
            return "\(a[.size] ?? 0) \((a[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
        }
    }
}

func ids(_ v: JSONValue?) -> [String] { v?.array?.compactMap(\.string) ?? [] }

let water = #"{"id":"water","content":{"title":"Drink"},"trigger":{"interval":{"seconds":3600,"repeats":true}}}"#
let morning = #"{"id":"morning","content":{"title":"Morning"},"trigger":{"calendar":{"match":{"hour":7,"minute":0},"repeats":true}}}"#
let depot = #"{"id":"depot","content":{"title":"Depot"},"trigger":{"location":{"region":{"circle":{"lat":52.5,"lon":13.4,"radius":200}},"cooldown":300}}}"#

@Suite struct ControlServiceTests {
    // MARK: Framing

    @Test func malformedJSONIsAParseErrorWithNullID() throws {
        let h = try ControlHarness()
        for line in ["{", "not json", #"{"jsonrpc":"2.0","id":1,"method":"pending""#, "", "\u{1}"] {
            let a = try h.answer(line)
            #expect(a["error"]?["code"] == -32700, "\(line)")
            #expect(a["id"] == .null)
            #expect(a["jsonrpc"] == "2.0")
        }
    }

    @Test func notAnObjectAndBatchesAreInvalidRequests() throws {
        let h = try ControlHarness()
        for line in ["42", #""pending""#, "null", "true"] {
            let a = try h.answer(line)
            #expect(a["error"]?["code"] == -32600, "\(line)")
            #expect(a["id"] == .null)
        }
        for line in ["[]", #"[{"jsonrpc":"2.0","id":1,"method":"pending"}]"#] {
            let a = try h.answer(line)
            #expect(a["error"]?["code"] == -32600)
            #expect(a["error"]?["message"]?.string?.contains("batches are not supported") == true)
        }
    }

    @Test func envelopeRules() throws {
        let h = try ControlHarness()
        // Wrong version, missing method, method not a string, unknown member, bad id type, params not structured.
        let cases: [(String, JSONValue)] = [
            (#"{"jsonrpc":"1.0","id":1,"method":"pending"}"#, 1),
            (#"{"id":2,"method":"pending"}"#, 2),
            (#"{"jsonrpc":"2.0","id":3}"#, 3),
            (#"{"jsonrpc":"2.0","id":4,"method":7}"#, 4),
            (#"{"jsonrpc":"2.0","id":5,"method":"pending","extra":1}"#, 5),
            (#"{"jsonrpc":"2.0","id":{"a":1},"method":"pending"}"#, .null),
            (#"{"jsonrpc":"2.0","id":6,"method":"pending","params":3}"#, 6),
            (#"{"jsonrpc":"2.0","method":7}"#, .null),
        ]
        for (line, id) in cases {
            let a = try h.answer(line)
            #expect(a["error"]?["code"] == -32600, "\(line)")
            #expect(a["id"] == id, "\(line)")
        }
        // Array params: invalid params.
        let a = try h.answer(#"{"jsonrpc":"2.0","id":"p","method":"pending","params":[]}"#)
        #expect(a["error"]?["code"] == -32602)
    }

    @Test func idIsEchoedAsGiven() throws {
        let h = try ControlHarness()
        for id in [#""abc""#, "0", "-12", "1.5", "null"] {
            let a = try h.answer(#"{"jsonrpc":"2.0","id":\#(id),"method":"pending"}"#)
            #expect(a["id"] == (try JSONValue.parse(id)))
            #expect(a["result"] == .array([]))
        }
    }

    /// JSON-RPC 2.0 §5: the answer's id is the same value as the request's. A number parsed and
    /// written again comes back as other text (`1e3` as `1000.0`, a 20-digit integer rounded to a
    /// double), which a client comparing ids would not recognise: the id's text goes back as sent.
    @Test func idTextIsEchoedByteForByte() throws {
        let h = try ControlHarness()
        for id in ["12345678901234567890", "1e3", "-0", "1.50", "0.1e-2", "-9223372036854775809",
                   #""caf\u00e9""#, #""a b""#, "null", "7"] {
            for (line, what) in [(#"{"jsonrpc":"2.0","id":\#(id),"method":"pending"}"#, "result"),
                                 (#"{"jsonrpc":"2.0", "id" :  \#(id) ,"method":"nope"}"#, "error"),
                                 (#"{"id":\#(id),"jsonrpc":"2.0","method":"pending","params":{"x":1}}"#, "error")] {
                let bytes = try #require(h.send(line).line)
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(text.hasPrefix(#"{"jsonrpc":"2.0","id":\#(id),"\#(what)":"#), "\(line) → \(text)")
            }
        }
    }

    @Test func unknownMethodListsTheMethods() throws {
        let h = try ControlHarness()
        let (code, message, _) = try h.error("frobnicate")
        #expect(code == -32601)
        #expect(message.contains("frobnicate"))
        for m in ControlService.methods { #expect(message.contains(m)) }
    }

    @Test func notificationsGetNoReplyButAreCarriedOut() throws {
        let h = try ControlHarness()
        let r = h.send(#"{"jsonrpc":"2.0","method":"add","params":{"request":\#(water)}}"#)
        #expect(r.line == nil)
        #expect(h.center.engine.pendingCount == 1)
        // Errors of notifications are not answered either.
        #expect(h.send(#"{"jsonrpc":"2.0","method":"nope"}"#).line == nil)
        #expect(h.send(#"{"jsonrpc":"2.0","method":"add","params":{"request":{"id":""}}}"#).line == nil)
        #expect(h.send(#"{"jsonrpc":"2.0","method":"pending","params":[]}"#).line == nil)
    }

    @Test func tooLongAnswer() throws {
        let line = ControlService.tooLong(limit: 65536)
        #expect(line.last == 0x0A)
        let a = try JSONValue.parse(line.dropLast())
        #expect(a["error"]?["code"] == -32600)
        #expect(a["error"]?["message"]?.string?.contains("65536") == true)
        #expect(a["id"] == .null)
    }

    /// Seeded garbage and mutations of valid lines: always one well-formed answer line or none, never a trap.
    @Test(arguments: [UInt64(7), 8, 9])
    func neverCrashesOnAnyInput(seed: UInt64) throws {
        let h = try ControlHarness()
        var rng = SplitMix64(seed: seed)
        let valid = Array(#"{"jsonrpc":"2.0","id":1,"method":"add","params":{"requests":[\#(water),\#(depot)]}}"#.utf8)
        for i in 0 ..< 400 {
            var bytes = valid
            if i % 4 == 0 {
                bytes = (0 ..< Int(rng.next() % 64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            } else {
                for _ in 0 ... rng.next() % 4 {
                    let at = Int(rng.next() % UInt64(bytes.count))
                    switch rng.next() % 3 {
                    case 0: bytes[at] = UInt8(truncatingIfNeeded: rng.next())
                    case 1: bytes.remove(at: at)
                    default:
                        let tokens = Array(#"{}[]":,0-e"#.utf8)
                        bytes.insert(tokens[Int(rng.next() % UInt64(tokens.count))], at: at)
                    }
                }
            }
            let reply = h.service.handle(line: bytes, center: h.center, clock: h.clock, status: { h.status })
            if let line = reply.line {
                let a = try JSONValue.parse(line.dropLast())
                #expect(a["jsonrpc"] == "2.0", "seed \(seed) case \(i)")
                #expect((a["result"] == nil) != (a["error"] == nil), "seed \(seed) case \(i)")
            }
            #expect(reply.fatal == nil)
        }
    }

    // MARK: Methods

    @Test func addPendingRemove() throws {
        let h = try ControlHarness()
        let r = try h.result("add", #"{"request":\#(water)}"#)
        #expect(ids(r["added"]) == ["water"])
        #expect(r["evicted"] == .array([]))
        _ = try h.result("add", #"{"requests":[\#(morning),\#(depot)]}"#)
        let pending = try h.result("pending")
        #expect(pending.array?.compactMap { $0["request"]?["id"]?.string } == ["water", "morning", "depot"])
        #expect(pending[0]?["nextFire"] == .string(WallInstant(secondsSinceEpoch: h.wall + 3600).description))
        #expect(pending[0]?["regionState"] == .null)
        #expect(pending[2]?["regionState"] == "unknown")
        #expect(pending[2]?["nextFire"] == .null)
        #expect(pending[1]?["request"]?["trigger"]?["calendar"]?["match"]?["hour"] == 7)

        #expect(ids(try h.result("remove", #"{"ids":["water","ghost"]}"#)["removed"]) == ["water"])
        #expect(h.center.engine.pendingCount == 2)
        #expect(ids(try h.result("remove", #"{"all":true}"#)["removed"]) == ["morning", "depot"])
        #expect(h.center.engine.pendingCount == 0)
        // Durable: after a restart nothing is back.
        try h.restart()
        #expect(h.center.engine.pendingCount == 0)
    }

    @Test func addListIsAllOrNothing() throws {
        let h = try ControlHarness()
        let bad = #"{"id":"fast","trigger":{"interval":{"seconds":10,"repeats":true}}}"#
        let (code, message, data) = try h.error("add", #"{"requests":[\#(water),\#(bad)]}"#)
        #expect(code == -32602)
        #expect(data?["rule"] == "repeatingInterval")
        #expect(message.contains("requests[1]"))
        #expect(message.contains("repeatingInterval"))
        #expect(h.center.engine.pendingCount == 0)
        try h.restart()
        #expect(h.center.engine.pendingCount == 0)
    }

    @Test func brokenRulesAnswerInvalidParamsWithTheRule() throws {
        let h = try ControlHarness()
        let cases: [(String, String)] = [
            (#"{"request":{"id":"x","trigger":{"interval":{"seconds":0}}}}"#, "interval"),
            (#"{"request":{"id":"","trigger":{"interval":{"seconds":5}}}}"#, "identifier"),
            (#"{"request":{"id":"x","trigger":{"calendar":{"match":{"hour":25}}}}}"#, "calendar"),
            (#"{"request":{"id":"x","trigger":{"calendar":{"match":{"year":2020,"month":1,"day":1}}}}}"#, "neverFires"),
            (#"{"request":{"id":"x","trigger":{"calendar":{"match":{"hour":7},"tz":"Mars/Olympus"}}}}"#, "zone"),
            (#"{"request":{"id":"x","content":{"categoryIdentifier":"NOPE"},"trigger":{"interval":{"seconds":5}}}}"#, "unknownCategory"),
            (#"{"request":{"id":"x","trigger":{"location":{"region":{"circle":{"lat":1,"lon":2,"radius":-1}}}}}}"#, "radius"),
            (#"{"request":{"id":"x"}}"#, "malformed"),
            (#"{"request":5}"#, "malformed"),
        ]
        for (params, rule) in cases {
            let (code, message, data) = try h.error("add", params)
            #expect(code == -32602, "\(params)")
            #expect(data?["rule"] == .string(rule), "\(params): \(message)")
            #expect(message.contains(rule), "\(params): \(message)")
        }
        #expect(h.center.engine.pendingCount == 0)
    }

    @Test func wrongParams() throws {
        let h = try ControlHarness()
        let cases: [(String, String)] = [
            ("add", "{}"), ("add", #"{"request":{},"requests":[]}"#), ("add", #"{"requests":{}}"#),
            ("pending", #"{"x":1}"#), ("remove", "{}"), ("remove", #"{"ids":[1]}"#), ("remove", #"{"ids":"a"}"#),
            ("remove", #"{"all":true,"ids":["a"]}"#), ("delivered", #"{"all":1}"#), ("removeDelivered", #"{"all":"yes"}"#),
            ("ack", "{}"), ("ack", #"{"delivery":1}"#), ("ack", #"{"delivery":"d","action":""}"#),
            ("categories", #"{"set":{}}"#), ("apply", #"{"requests":{}}"#), ("apply", #"{"categories":5}"#), ("status", #"{"verbose":true}"#),
        ]
        for (method, params) in cases {
            let (code, _, _) = try h.error(method, params)
            #expect(code == -32602, "\(method) \(params)")
        }
    }

    @Test func deliveredAckAndRemoveDelivered() throws {
        let h = try ControlHarness()
        _ = try h.result("categories", #"{"set":[{"id":"REMINDER","actions":[{"id":"snooze","title":"Later","snoozeSeconds":600},{"id":"done","title":"Done"}]}]}"#)
        _ = try h.result("add", #"{"requests":[{"id":"tea","content":{"title":"Tea","categoryIdentifier":"REMINDER"},"trigger":{"interval":{"seconds":60}}},{"id":"pill","content":{"title":"Pill"},"trigger":{"interval":{"seconds":90}}}]}"#)
        h.advance(120)
        let delivered = try h.result("delivered")
        let list = try #require(delivered.array)
        #expect(list.count == 2)
        #expect(list.compactMap { $0["request"]?.string } == ["tea", "pill"])
        let tea = try #require(list[0]["id"]?.string), pill = try #require(list[1]["id"]?.string)
        #expect(h.center.engine.badgeCount == 2)

        // An unknown action, an unknown delivery.
        var (code, message, data) = try h.error("ack", #"{"delivery":"\#(tea)","action":"fly"}"#)
        #expect(code == -32602 && data?["rule"] == "unknownAction")
        #expect(message.contains("done"))
        (code, _, data) = try h.error("ack", #"{"delivery":"nope"}"#)
        #expect(code == -32602 && data?["rule"] == "unknownDelivery")

        // Snooze answers with the new request and stops the signal.
        let reply = h.send(#"{"jsonrpc":"2.0","id":1,"method":"ack","params":{"delivery":"\#(tea)","action":"snooze"}}"#)
        #expect(reply.output.acknowledged == [tea])
        let a = try JSONValue.parse(try #require(reply.line).dropLast())
        #expect(a["result"]?["snoozed"] == "tea~snooze")
        #expect(a["result"]?["action"] == "snooze")
        #expect(h.center.engine.pending("tea~snooze", clock: h.clock) != nil)
        (code, _, data) = try h.error("ack", #"{"delivery":"\#(tea)"}"#)
        #expect(data?["rule"] == "alreadyAnswered")

        // The default action.
        let d = try h.result("ack", #"{"delivery":"\#(pill)"}"#)
        #expect(d["action"] == "default" && d["snoozed"] == .null && d["delivery"] == .string(pill))
        #expect(h.center.engine.badgeCount == 0)

        #expect(ids(try h.result("removeDelivered", #"{"ids":["\#(tea)","ghost"]}"#)["removed"]) == [tea])
        #expect(ids(try h.result("removeDelivered", #"{"all":true}"#)["removed"]) == [pill])
        #expect(try h.result("delivered") == .array([]))
        try h.restart()
        #expect(h.center.engine.delivered.isEmpty)
    }

    @Test func removeDeliveredStopsUnansweredSignals() throws {
        let h = try ControlHarness()
        _ = try h.result("add", #"{"request":{"id":"a","trigger":{"interval":{"seconds":30}}}}"#)
        h.advance(31)
        let id = try #require(h.center.engine.delivered.first?.identifier)
        let reply = h.send(#"{"jsonrpc":"2.0","id":1,"method":"removeDelivered","params":{"all":true}}"#)
        #expect(reply.output.acknowledged == [id])
    }

    @Test func categoriesGetAndSet() throws {
        let h = try ControlHarness()
        #expect(try h.result("categories") == .array([]))
        let set = try h.result("categories", #"{"set":[{"id":"A","actions":[{"id":"ok","title":"OK"}]},{"id":"B"}]}"#)
        #expect(set.array?.compactMap { $0["id"]?.string } == ["A", "B"])
        #expect(try h.result("categories") == set)
        let (code, _, data) = try h.error("categories", #"{"set":[{"id":"A"},{"id":"A"}]}"#)
        #expect(code == -32602 && data?["rule"] == "category")
        (try h.result("categories")).array.map { #expect($0.count == 2) }
        try h.restart()
        #expect(h.center.engine.categories.map(\.identifier) == ["A", "B"])
    }

    @Test func status() throws {
        let h = try ControlHarness()
        h.status.lastFixAge = 12
        h.status.lastFixError = 4.6
        h.status.started = WallInstant(secondsSinceEpoch: h.wall - 100)
        h.status.startedMonotonic = MonotonicInstant(nanosecondsSinceBoot: h.mono - 2_000_000_000)
        _ = try h.result("add", #"{"requests":[\#(water),\#(morning),\#(depot)]}"#)
        let s = try h.result("status")
        #expect(s["clock"]?["source"] == "ntp")
        #expect(s["clock"]?["uptime"] == 2)
        #expect(s["clock"]?["zone"] == "Europe/Berlin")
        #expect(s["gps"]?["source"] == "/dev/serial0 @ 9600")
        #expect(s["gps"]?["connected"] == true)
        #expect(s["badge"] == 0 && s["delivered"] == 0)
        let pending = try #require(s["pending"]?.array)
        try #require(pending.count == 3, "\(s)")
        #expect(pending.compactMap { $0["kind"]?.string } == ["interval", "calendar", "location"])
        #expect(pending[0]["why"]?.string?.hasPrefix("next fire in 1h 0min") == true)
        #expect(pending[2]["why"]?.string?.contains("last fix 12 s ago with error 5 m") == true)

        // Without a fix; with an untrusted clock.
        h.status.lastFixAge = nil
        h.trusted = false
        h.status.clockSource = .none
        _ = try h.center.perform { (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in e.advance(clock: h.clock) }
        let t = try h.result("status")
        let p = try #require(t["pending"]?.array)
        try #require(p.count == 3, "\(t)")
        #expect(t["clock"]?["trusted"] == false)
        #expect(p[1]["why"]?.string?.contains("clock untrusted") == true)
        #expect(p[2]["why"]?.string?.contains("waiting for a fix") == true)
    }

    @Test func locationCooldownIsExplained() throws {
        let h = try ControlHarness()
        let l = #"{"id":"gate","trigger":{"location":{"region":{"circle":{"lat":52.5,"lon":13.4,"radius":200}},"cooldown":600,"repeats":true}}}"#
        _ = try h.result("add", #"{"request":\#(l)}"#)
        // Park inside the region for a while.
        for i in 0 ..< 30 {
            h.wall += 1; h.mono += 1_000_000_000
            let fix = Fix(time: WallInstant(secondsSinceEpoch: h.wall), coordinate: Coordinate(latitude: 52.5, longitude: 13.4),
                          mode: .twoD, isValid: true, speed: 0, horizontalError: 3)
            _ = i
            _ = try h.center.perform { (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in e.process(fix, clock: h.clock) }
        }
        #expect(h.center.engine.delivered.count == 1)
        h.status.lastFixAge = 1
        let why = try #require(try h.result("status")["pending"]?[0]?["why"]?.string)
        #expect(why.contains("cooldown"), "\(why)")
        #expect(why.contains("inside"), "\(why)")
    }

    // MARK: apply

    @Test func applyIsIdempotentAndLeavesAddedRequestsAlone() throws {
        let h = try ControlHarness()
        _ = try h.result("add", #"{"request":{"id":"manual","trigger":{"calendar":{"match":{"hour":3,"minute":33},"repeats":true}}}}"#)
        let cats = #"[{"id":"REMINDER","actions":[{"id":"done","title":"Done"}]}]"#
        let first = try h.result("apply", #"{"requests":[\#(water),\#(morning)],"categories":\#(cats)}"#)
        #expect(ids(first["added"]) == ["water", "morning"])
        #expect(ids(first["replaced"]) == [] && ids(first["removed"]) == [] && ids(first["unchanged"]) == [])
        #expect(h.center.engine.categories.map(\.identifier) == ["REMINDER"])

        // Let water fire once: its progress must survive an identical apply.
        h.advance(3600)
        let before = h.center.engine.pending("water", clock: h.clock)
        #expect(h.center.engine.delivered.count == 1)

        let fingerprint = try h.storeFingerprint()
        let second = try h.result("apply", #"{"requests":[\#(water),\#(morning)],"categories":\#(cats)}"#)
        #expect(ids(second["unchanged"]) == ["water", "morning"])
        #expect(ids(second["added"]) == [] && ids(second["replaced"]) == [] && ids(second["removed"]) == [])
        #expect(try h.storeFingerprint() == fingerprint, "the second apply wrote to the store")
        #expect(h.center.engine.pending("water", clock: h.clock) == before)

        // After a restart the applied set is read back from the meta: still unchanged, still no write.
        try h.restart()
        let third = try h.result("apply", #"{"requests":[\#(water),\#(morning)],"categories":\#(cats)}"#)
        #expect(ids(third["unchanged"]) == ["water", "morning"])
        #expect(try h.storeFingerprint() == fingerprint)

        // Change one, drop one, add one: "manual" (from add) is untouched.
        let water2 = water.replacingOccurrences(of: "3600", with: "7200")
        let fourth = try h.result("apply", #"{"requests":[\#(water2),\#(depot)]}"#)
        #expect(ids(fourth["replaced"]) == ["water"])
        #expect(ids(fourth["added"]) == ["depot"])
        #expect(ids(fourth["removed"]) == ["morning"])
        #expect(ids(fourth["unchanged"]) == [])
        #expect(h.center.engine.pending(clock: h.clock).map(\.request.identifier).sorted() == ["depot", "manual", "water"])
        // Categories were left alone (not given).
        #expect(h.center.engine.categories.map(\.identifier) == ["REMINDER"])

        // An empty apply removes what apply installed, never "manual".
        let fifth = try h.result("apply", #"{"requests":[]}"#)
        #expect(Set(ids(fifth["removed"])) == ["water", "depot"])
        #expect(h.center.engine.pending(clock: h.clock).map(\.request.identifier) == ["manual"])
    }

    @Test func applyIsAllOrNothing() throws {
        let h = try ControlHarness()
        _ = try h.result("apply", #"{"requests":[\#(water)]}"#)
        let bad = #"{"id":"bad","content":{"categoryIdentifier":"GONE"},"trigger":{"interval":{"seconds":60}}}"#
        let (code, message, data) = try h.error("apply", #"{"requests":[\#(morning),\#(bad)]}"#)
        #expect(code == -32602 && data?["rule"] == "unknownCategory")
        #expect(message.contains("requests[1]"))
        // Nothing changed: water still there, morning not added; the applied set is the old one.
        #expect(h.center.engine.pending(clock: h.clock).map(\.request.identifier) == ["water"])
        let again = try h.result("apply", #"{"requests":[\#(water)]}"#)
        #expect(ids(again["unchanged"]) == ["water"])
        // A repeated id.
        let (code2, _, data2) = try h.error("apply", #"{"requests":[\#(water),\#(water)]}"#)
        #expect(code2 == -32602 && data2?["rule"] == "identifier")
    }

    // MARK: Policy

    @Test func policyMessages() {
        let policy = ControlPolicy(ownerUserID: 0, groups: [(998, "fencepost")])
        #expect(policy.check(PeerCredentials(processID: 1, userID: 0, groupID: 0)) == nil)
        #expect(policy.check(PeerCredentials(processID: 1, userID: 1000, groupID: 998)) == nil)
        #expect(policy.check(PeerCredentials(processID: 1, userID: 1000, groupID: 1000))
                == "permission denied: uid 1000 is not root, the owner (uid 0) or in group 998 (fencepost)")
        let owner = ControlPolicy(ownerUserID: 500, userIDs: [42])
        #expect(owner.check(PeerCredentials(processID: 1, userID: 500, groupID: 500)) == nil)
        #expect(owner.check(PeerCredentials(processID: 1, userID: 42, groupID: 1)) == nil)
        #expect(owner.check(PeerCredentials(processID: 1, userID: 7, groupID: 7)) == "permission denied: uid 7 is not root, the owner (uid 500) or uid 42")
        let line = try! #require(owner.refusal(PeerCredentials(processID: 1, userID: 7, groupID: 7)))
        let a = try! JSONValue.parse(line.dropLast())
        #expect(a["error"]?["code"] == -32000)
        #expect(a["error"]?["message"]?.string?.hasPrefix("permission denied") == true)
    }
}
