import CivilTime
import FencepostJSON
import Geofencing
import LocalNotifications
import SeededRandom
import Testing

/// The JSON form of requests: the issue's examples read, every rule is named when broken, and a
/// seeded sweep of requests survives a round trip.
@Suite struct RequestJSONTests {
    func parse(_ text: String) throws -> NotificationRequest {
        try NotificationRequest(json: try JSONValue.parse(text))
    }

    /// The boxed fields of a content (badge, userInfo, category, thread) behave as stored ones:
    /// a change to a copy leaves the original alone, and emptying them all equals a plain content.
    @Test func contentFieldsAreValues() {
        var a = NotificationContent(title: "T", badge: 3, userInfo: [("k", "v")], categoryIdentifier: "C")
        var b = a
        b.userInfo.append((key: "k2", value: "v2"))
        b.threadIdentifier = "t"
        #expect(a.userInfo.map(\.key) == ["k"] && a.threadIdentifier == nil && a.badge == 3)
        #expect(b.userInfo.map(\.key) == ["k", "k2"] && b.threadIdentifier == "t" && b.categoryIdentifier == "C")
        #expect(a != b)
        a.badge = nil; a.userInfo = []; a.categoryIdentifier = nil
        #expect(a == NotificationContent(title: "T"))
        #expect(a.hashValue == NotificationContent(title: "T").hashValue)
    }

    @Test func theIssuesExamples() throws {
        let r = try parse(#"{"id":"fasting","content":{"title":"Glucose","body":"Check now","sound":"default","interruptionLevel":"active","categoryIdentifier":"REMINDER","userInfo":{"meal":"fasting"}},"trigger":{"calendar":{"match":{"hour":7,"minute":0},"tz":"Europe/Berlin","repeats":true}}}"#)
        #expect(r.identifier == "fasting")
        #expect(r.content.userInfo.first?.value == "fasting")
        guard case .calendar(let c) = r.trigger else { Issue.record("not calendar"); return }
        #expect(c.match == CalendarMatch(hour: 7, minute: 0))
        #expect(c.zoneIdentifier == "Europe/Berlin")
        #expect(c.repeats)
        let i = try parse(#"{"id":"i","trigger":{"interval":{"seconds":3600,"repeats":true}}}"#)
        #expect(i.trigger == .interval(IntervalTrigger(seconds: 3600, repeats: true)))
        let l = try parse(#"{"id":"l","trigger":{"location":{"region":{"circle":{"lat":12.9775,"lon":77.5713,"radius":300}},"notifyOnEntry":true,"notifyOnExit":false,"repeats":true}}}"#)
        guard case .location(let loc) = l.trigger, case .circle(let circle) = loc.shape else { Issue.record("not a circle"); return }
        #expect(circle.radius == 300)
        let p = try parse(#"{"id":"p","trigger":{"location":{"region":{"polygon":[[52.5,13.3],[52.5,13.4],[52.6,13.4]]}}}}"#)
        guard case .location(let poly) = p.trigger, case .polygon = poly.shape else { Issue.record("not a polygon"); return }
    }

    /// A polygon with a hole, or of several parts, is the "parts" region and survives a round
    /// trip with every ring (the "polygon" form holds one ring only).
    @Test func polygonWithHolesIsThePartsRegionAndRoundTrips() throws {
        let text = #"{"id":"lake","trigger":{"location":{"region":{"parts":[[[[0,0],[0,4],[4,4],[4,0]],[[1,1],[1,2],[2,2]]]]},"repeats":true}}}"#
        let r = try parse(text)
        guard case .location(let t) = r.trigger, case .polygon(let p) = t.shape else { Issue.record("not a polygon"); return }
        #expect(p.parts.count == 1 && p.parts[0].count == 2)
        let json = r.trigger.json
        #expect(json["location"]?["region"]?["parts"]?[0]?[1]?.array?.count == 3, "\(json.serialized())")
        #expect(try NotificationRequest(json: try JSONValue.parse(#"{"id":"lake","trigger":"# + json.serialized() + "}")) == r)
        // One ring stays the "polygon" form.
        let one = try parse(#"{"id":"p","trigger":{"location":{"region":{"parts":[[[[52.5,13.3],[52.5,13.4],[52.6,13.4]]]]}}}}"#)
        #expect(one.trigger.json["location"]?["region"]?["polygon"] != nil)
        #expect(throws: RequestError.self) { try parse(#"{"id":"p","trigger":{"location":{"region":{"parts":[[[[1,2,3]]]]}}}}"#) }
    }

    @Test func eachRuleIsNamed() throws {
        let limits = RequestLimits()
        func rule(_ text: String) -> (RequestError.Rule, String)? {
            do {
                let r = try parse(text)
                try r.validate(limits: limits)
                return nil
            } catch let e as RequestError {
                return (e.rule, e.message)
            } catch {
                return (.malformed, "\(error)")
            }
        }
        let cases: [(String, RequestError.Rule, String)] = [
            (#"{"id":"a","trigger":{"interval":{"seconds":0}}}"#, .interval, "greater than 0"),
            (#"{"id":"a","trigger":{"interval":{"seconds":-5}}}"#, .interval, "greater than 0"),
            (#"{"id":"a","trigger":{"interval":{"seconds":30,"repeats":true}}}"#, .repeatingInterval, "at least 60 s"),
            (#"{"id":"","trigger":{"interval":{"seconds":30}}}"#, .identifier, "must not be empty"),
            (#"{"id":"\#(String(repeating: "x", count: 65))","trigger":{"interval":{"seconds":30}}}"#, .identifier, "limit is 64"),
            (#"{"id":"a","trigger":{"location":{"region":{"circle":{"lat":1,"lon":2,"radius":0}}}}}"#, .radius, "greater than 0"),
            (#"{"id":"a","trigger":{"location":{"region":{"circle":{"lat":1,"lon":2,"radius":60000}}}}}"#, .radius, "at most 50000"),
            (#"{"id":"a","trigger":{"location":{"region":{"circle":{"lat":1,"lon":2}}}}}"#, .radius, "no \"radius\""),
            (#"{"id":"a","trigger":{"calendar":{"match":{"month":13}}}}"#, .calendar, "month 13"),
            (#"{"id":"a","trigger":{"calendar":{"match":{"hour":"seven"}}}}"#, .malformed, "trigger.calendar.match.hour"),
            (#"{"id":"a","trigger":{"calendar":{"match":{"hour":7},"repeat":true}}}"#, .malformed, "unknown key \"trigger.calendar.repeat\""),
            (#"{"id":"a","content":{"interruptionLevel":"loud"},"trigger":{"interval":{"seconds":30}}}"#, .malformed, "interruptionLevel"),
            (#"{"id":"a"}"#, .malformed, "missing key \"trigger\""),
            (#"[1,2]"#, .malformed, "must be an object"),
            (#"{"id":"a","trigger":{"interval":{"seconds":30},"calendar":{"match":{}}}}"#, .malformed, "exactly one"),
            (#"{"id":"a","trigger":{"location":{"region":{"polygon":[[1,2],[3,4]]}}}}"#, .region, "polygon"),
            (#"{"id":"a","trigger":{"interval":{"seconds":30}},"missed":"later"}"#, .malformed, "\"missed\""),
        ]
        for (text, expected, fragment) in cases {
            guard let (got, message) = rule(text) else { Issue.record("accepted: \(text)"); continue }
            #expect(got == expected, "\(text): \(message)")
            #expect(message.contains(fragment), "\(text): \(message)")
        }
    }

    @Test func engineRules() throws {
        var engine = makeEngine()
        let clock = EngineClock(wall: instant("2026-01-01T00:00:00Z"), wallTrusted: true, monotonic: .init(nanosecondsSinceBoot: 0))
        func add(_ text: String) -> RequestError? {
            do { _ = try engine.add(try parse(text), clock: clock); return nil } catch let e as RequestError { return e } catch { return nil }
        }
        #expect(add(#"{"id":"a","content":{"categoryIdentifier":"NOPE"},"trigger":{"interval":{"seconds":30}}}"#)?.rule == .unknownCategory)
        #expect(add(#"{"id":"a","trigger":{"calendar":{"match":{"hour":7},"tz":"Mars/Olympus"}}}"#)?.rule == .zone)
        #expect(add(#"{"id":"a","trigger":{"calendar":{"match":{"month":2,"day":30},"policy":"strict"}}}"#)?.rule == .neverFires)
        #expect(add(#"{"id":"a","trigger":{"calendar":{"match":{"year":2020,"month":1,"day":1}}}}"#)?.rule == .neverFires)
        #expect(engine.pendingCount == 0)
        #expect(add(#"{"id":"a","trigger":{"calendar":{"match":{"hour":7},"tz":"Asia/Kathmandu"}}}"#) == nil)
        #expect(engine.pendingCount == 1)
    }

    @Test func seededRoundTrips() throws {
        let seed: UInt64 = 0x5EED_0004
        var rng = SplitMix64(seed: seed)
        for n in 0 ..< 2000 {
            let r = randomRequest(&rng, n)
            let text = r.json.serialized()
            let back = try parse(text)
            #expect(back == r, "seed \(seed) case \(n): \(text)")
            if back != r { return }
        }
    }

    func randomRequest(_ rng: inout SplitMix64, _ n: Int) -> NotificationRequest {
        var content = NotificationContent(title: "t\(n) \"quoted\" ü", body: rng.next() % 2 == 0 ? "" : "body\n\(n)")
        if rng.next() % 2 == 0 { content.sound = "chime" }
        if rng.next() % 3 == 0 { content.badge = Int(rng.next() % 10) }
        if rng.next() % 2 == 0 { content.userInfo = [("k\(n)", "v"), ("a", "b")] }
        if rng.next() % 2 == 0 { content.categoryIdentifier = "C\(n % 3)" }
        if rng.next() % 4 == 0 { content.threadIdentifier = "th" }
        content.interruptionLevel = InterruptionLevel.allCases[Int(rng.next() % 4)]
        let trigger: NotificationTrigger
        switch rng.next() % 3 {
        case 0:
            var m = CalendarMatch()
            m.hour = Int(rng.next() % 24)
            if rng.next() % 2 == 0 { m.minute = Int(rng.next() % 60) }
            if rng.next() % 3 == 0 { m.weekday = Int(rng.next() % 7) + 1 }
            var t = CalendarTrigger(match: m, zoneIdentifier: rng.next() % 2 == 0 ? "Europe/Berlin" : nil, repeats: rng.next() % 2 == 0)
            if rng.next() % 3 == 0 { t.policy = MatchingPolicy.allCases[Int(rng.next() % 4)] }
            if rng.next() % 3 == 0 { t.repeatedTime = .last }
            if rng.next() % 4 == 0 { t.weekRules = .iso8601 }
            trigger = .calendar(t)
        case 1:
            trigger = .interval(IntervalTrigger(milliseconds: Int64(rng.next() % 10_000_000) + 1, repeats: rng.next() % 2 == 0))
        default:
            let lat = Double(Int64(rng.next() % 160_000) - 80_000) / 1000, lon = Double(Int64(rng.next() % 360_000) - 180_000) / 1000
            let shape: RegionShape
            if rng.next() % 2 == 0 {
                shape = .circle(try! CircularRegion(center: .init(latitude: lat, longitude: lon), radius: Double(rng.next() % 5000 + 1)))
            } else {
                shape = .polygon(try! PolygonRegion(vertices: [.init(latitude: lat, longitude: lon), .init(latitude: lat + 0.01, longitude: lon),
                                                               .init(latitude: lat, longitude: lon + 0.01)]))
            }
            trigger = .location(LocationTrigger(shape: shape, notifyOnEntry: rng.next() % 2 == 0, notifyOnExit: rng.next() % 2 == 0,
                                                repeats: rng.next() % 2 == 0, dwell: rng.next() % 2 == 0 ? 30 : nil,
                                                cooldown: Double(rng.next() % 3) * 60))
        }
        let missed: MissedFirePolicy = [.coalesce, .skip, .deliverLate(graceSeconds: Int64(rng.next() % 7200))][Int(rng.next() % 3)]
        return NotificationRequest(identifier: "r\(n)", content: content, trigger: trigger, missedFirePolicy: missed)
    }
}
