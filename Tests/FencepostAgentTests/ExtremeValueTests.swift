import CivilTime
@testable import FencepostAgent
import FencepostJSON
import FencepostLinux
import Foundation
import Geofencing
import LocalNotifications
import Position
import Testing
import TrackFormats

/// Extreme values through every input path and the engine: 0, 1, the
/// largest and smallest integers, negatives, NaN and infinities (where the syntax has them), 1e300
/// and 1e-300, and the edges of the documented ranges, in every duration, instant and distance field
/// of request JSON (the control socket's `add`/`apply` and the TOML config decode through it), the
/// TOML config's own numbers, GeoJSON zones, and rows of the state file. Each input is either
/// refused with an error that names its field, or accepted — and then the engine runs with it: the
/// next wakeup, a clock ten years on, a fix at the zone, a snooze. Nothing may trap (a trap ends the
/// test process: the count is only printed when every input went through).
@Suite struct ExtremeValueTests {
    static let zones = SystemZones()
    static let jsonNumbers = ["0", "1", "-1", "0.001", "1e-300", "1e300", "-1e300", "9223372036854775807",
                              "-9223372036854775808", "18446744073709551615", "316224000", "316224001", "1.5e9"]
    static let tomlNumbers = jsonNumbers + ["nan", "inf", "-inf", "+inf"]

    final class Tally {
        var tried = 0, refused = 0, accepted = 0
        var problems: [String] = []
    }

    static func engine() -> NotificationEngine {
        var c = EngineConfiguration()
        c.pendingCap = 64
        return NotificationEngine(configuration: c, deviceZone: try! zones.rules(named: "UTC"), zoneLookup: { try? zones.rules(named: $0) })
    }

    static let start = EngineClock(wall: WallInstant(secondsSinceEpoch: 1_780_315_200), wallTrusted: true,
                                   monotonic: MonotonicInstant(nanosecondsSinceBoot: 5_000_000_000))

    /// Runs an engine holding `request` (and `categories`) through time: wakeups, a fix at
    /// 48.137/11.575, every delivery snoozed, ten years on. Returns a problem, or nil.
    static func exercise(_ request: NotificationRequest?, categories: [NotificationCategory] = []) -> String? {
        var e = engine()
        if !categories.isEmpty { do { _ = try e.setCategories(categories) } catch { return nil } }
        if let request { do { _ = try e.add(request, clock: start) } catch { return nil } }
        var clock = start
        for step in 0 ..< 6 {
            let w = e.nextWakeup
            if let m = w.monotonic, m.nanosecondsSinceBoot < clock.monotonic.nanosecondsSinceBoot {
                return "nextWakeup went back: \(m) < \(clock.monotonic)"
            }
            let seconds: Int64 = [1, 600, 86_400, 31_622_400, 316_224_000, 1][step]
            clock = EngineClock(wall: WallInstant(secondsSinceEpoch: clock.wall.secondsSinceEpoch + seconds), wallTrusted: true,
                                monotonic: MonotonicInstant(nanosecondsSinceBoot: clock.monotonic.nanosecondsSinceBoot + UInt64(seconds) * 1_000_000_000))
            let fix = Fix(time: clock.wall, coordinate: Coordinate(latitude: 48.137, longitude: 11.575), mode: .threeD, isValid: true,
                          speed: 0, horizontalError: 5)
            _ = e.process(fix, clock: clock)
            _ = e.advance(clock: clock)
            for d in e.delivered where d.response == nil {
                let action = d.content.categoryIdentifier == nil ? ActionIdentifier.snooze : "later"
                _ = try? e.respond(to: d.identifier, action: action, clock: clock)
            }
            _ = e.nextWakeup
        }
        return nil
    }

    /// Refused naming `field`, or accepted and exercised.
    static func judge(_ tally: Tally, _ label: String, field: String, _ body: () throws -> NotificationRequest?,
                      categories: () throws -> [NotificationCategory] = { [] }) {
        tally.tried += 1
        do {
            let request = try body()
            let cats = try categories()
            tally.accepted += 1
            if let p = exercise(request, categories: cats) { tally.problems.append("\(label): \(p)") }
        } catch {
            tally.refused += 1
            let message = "\(error)"
            if !message.contains(field) { tally.problems.append("\(label): refused without naming \(field): \(message)") }
        }
    }

    static func request(_ json: String) throws -> NotificationRequest {
        let r = try NotificationRequest(json: try JSONValue.parse(json))
        try r.validate(limits: RequestLimits())
        return r
    }

    @Test func extremeValuesThroughEveryInputPath() throws {
        let t = Tally()
        // 1. Request JSON: control socket (add, apply), and the TOML config's [[request]]s.
        for v in Self.jsonNumbers {
            Self.judge(t, "interval \(v)", field: "trigger.interval.seconds") {
                try Self.request(#"{"id":"i","content":{"title":"I","sound":"default"},"trigger":{"interval":{"seconds":\#(v)}}}"#)
            }
            Self.judge(t, "repeating interval \(v)", field: "interval") {
                try Self.request(#"{"id":"i","trigger":{"interval":{"seconds":\#(v),"repeats":true}}}"#)
            }
            for key in ["dwell", "cooldown"] {
                Self.judge(t, "\(key) \(v)", field: "trigger.location.\(key)") {
                    try Self.request(#"{"id":"z","trigger":{"location":{"region":{"circle":{"lat":48.137,"lon":11.575,"radius":100}},"repeats":true,"notifyOnExit":true,"\#(key)":\#(v)}}}"#)
                }
            }
            Self.judge(t, "radius \(v)", field: "radius") {
                try Self.request(#"{"id":"z","trigger":{"location":{"region":{"circle":{"lat":48.137,"lon":11.575,"radius":\#(v)}}}}}"#)
            }
            for key in ["lat", "lon"] {
                Self.judge(t, "\(key) \(v)", field: "circle") {
                    let c = key == "lat" ? #""lat":\#(v),"lon":11.575"# : #""lat":48.137,"lon":\#(v)"#
                    return try Self.request(#"{"id":"z","trigger":{"location":{"region":{"circle":{\#(c),"radius":100}}}}}"#)
                }
            }
            Self.judge(t, "missed.late \(v)", field: "missed") {
                try Self.request(#"{"id":"i","trigger":{"interval":{"seconds":1}},"missed":{"late":\#(v)}}"#)
            }
            Self.judge(t, "badge \(v)", field: "badge") {
                try Self.request(#"{"id":"i","content":{"badge":\#(v)},"trigger":{"interval":{"seconds":1}}}"#)
            }
            // A category's snooze: the request is delivered and snoozed with it.
            Self.judge(t, "snoozeSeconds \(v)", field: "snoozeSeconds", {
                try Self.request(#"{"id":"s","content":{"title":"S","categoryIdentifier":"C"},"trigger":{"interval":{"seconds":1}}}"#)
            }, categories: {
                [try NotificationCategory(json: try JSONValue.parse(#"{"id":"C","actions":[{"id":"later","snoozeSeconds":\#(v)}]}"#))]
            })
        }
        // 2. The TOML config's own numbers (every duration, rate and distance it has).
        let tomlFields: [(section: String, key: String, extra: String)] = [
            ("[gps]\nsource = \"replay\"\nfile = \"x.nmea\"", "speed", ""), ("[gps]\nsource = \"serial\"", "uere", ""),
            ("[gps]\nsource = \"serial\"", "baud", ""), ("[hook]\ncommand = [\"/bin/true\"]", "timeout", ""),
            ("[gpio]", "long_press_ms", ""), ("[gpio]", "debounce_ms", ""), ("[engine]", "pending_cap", ""),
            ("[engine]", "location_cap", ""), ("[engine]", "delivered_cap", ""), ("[engine]", "max_radius", ""),
            ("[socket]", "max_message_bytes", ""), ("[patterns]", "p", "array"),
            ("[[request]]\nid = \"r\"", "trigger.interval.seconds", ""),
            ("[[request]]\nid = \"z\"\ntrigger.location.region.circle = { lat = 48.1, lon = 11.5, radius = 50 }", "trigger.location.dwell", ""),
            ("[[category]]\nid = \"C\"\nactions = [{ id = \"later\", snoozeSeconds = VALUE }]", "snoozeSeconds", "inline"),
        ]
        for (section, key, extra) in tomlFields {
            for v in Self.tomlNumbers {
                t.tried += 1
                let text: String
                switch extra {
                case "array": text = "\(section)\n\(key) = [\(v), 100]\n"
                case "inline": text = section.replacingOccurrences(of: "VALUE", with: v) + "\n"
                default: text = "\(section)\n\(key) = \(v)\n"
                }
                do {
                    let config = try AgentConfiguration.parse(text, path: "x.toml", zoneFileReader: { _ in [] })
                    t.accepted += 1
                    for r in config.requests {
                        if let p = Self.exercise(r, categories: config.categories) { t.problems.append("toml \(key) = \(v): \(p)") }
                    }
                } catch {
                    t.refused += 1
                    let name = key.split(separator: ".").last.map(String.init) ?? key
                    // A number TOML cannot hold (past 64-bit integers) is a syntax error of the file,
                    // named by its line and column.
                    let syntax = "\(error)".contains("out of range for a 64-bit integer") && "\(error)".contains("column")
                    if !"\(error)".contains(name) && !syntax { t.problems.append("toml \(key) = \(v): refused without naming it: \(error)") }
                }
            }
        }
        // 3. GeoJSON zones (the agent's `zones` file and `fencepost replay --zones`).
        for v in Self.jsonNumbers {
            for key in ["radius", "dwell", "cooldown"] {
                t.tried += 1
                let props = key == "radius" ? #""radius":\#(v)"# : #""radius":100,"\#(key)":\#(v)"#
                let text = #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"z","geometry":{"type":"Point","coordinates":[11.575,48.137]},"properties":{\#(props)}}]}"#
                do {
                    let zones = try GeoJSONZones.parse(Array(text.utf8))
                    t.accepted += 1
                    for z in zones {
                        let r = try AgentConfigurationParser.request(for: z)
                        try r.validate(limits: RequestLimits())
                        if let p = Self.exercise(r) { t.problems.append("zone \(key) \(v): \(p)") }
                    }
                } catch {
                    t.refused += 1
                    if !"\(error)".contains(key) { t.problems.append("zone \(key) \(v): refused without naming it: \(error)") }
                }
            }
        }
        // 4. Rows of the state file: progress, a request, a delivery, the generation — read back
        //    as at start, then the engine restored from them runs.
        for v in Self.jsonNumbers where Int64(v) != nil || Double(v) != nil {
            for key in ["fires", "after", "anchorWall", "generation"] {
                t.tried += 1
                var snapshot = StoreSnapshot(requests: [], deliveries: [], categories: [], meta: [:])
                snapshot.requests = [StoredRequest(id: "i", json: #"{"id":"i","content":{"title":"I"},"trigger":{"interval":{"seconds":60,"repeats":true}}}"#,
                                                   state: key == "generation" ? #"{"generation":\#(v)}"# : #"{"generation":1,"\#(key)":\#(v)}"#)]
                snapshot.meta = [StoreMapping.nextGenerationKey: v]
                let (s, problems) = StoreMapping.engineSnapshot(snapshot)
                if problems.isEmpty { t.accepted += 1 } else {
                    t.refused += 1
                    if !problems.contains(where: { $0.description.contains(key) }) && key != "generation" {
                        t.problems.append("state \(key) \(v): unreadable without naming it: \(problems)")
                    }
                }
                var e = Self.engine()
                _ = e.restore(s, clock: Self.start)
                _ = e.nextWakeup
                _ = e.advance(clock: EngineClock(wall: WallInstant(secondsSinceEpoch: 1_800_000_000), wallTrusted: true,
                                                 monotonic: MonotonicInstant(nanosecondsSinceBoot: 30_000_000_000_000)))
                _ = e.nextWakeup
            }
            t.tried += 1
            var snapshot = StoreSnapshot(requests: [], deliveries: [], categories: [], meta: [:])
            snapshot.requests = [StoredRequest(id: "z", json: #"{"id":"z","trigger":{"location":{"region":{"circle":{"lat":48.137,"lon":11.575,"radius":100}},"dwell":\#(v)}}}"#,
                                               state: #"{"generation":1}"#)]
            let (s, problems) = StoreMapping.engineSnapshot(snapshot)
            if problems.isEmpty { t.accepted += 1 } else { t.refused += 1 }
            if !problems.isEmpty && !problems.contains(where: { $0.description.contains("dwell") }) {
                t.problems.append("state dwell \(v): \(problems)")
            }
            var e = Self.engine()
            _ = e.restore(s, clock: Self.start)
            _ = Self.exerciseRestored(&e)
        }
        // 5. Instants: `fencepost simulate` and the engine at the ends of the accepted range.
        for seconds: Int64 in [0, 1, InputRanges.latestNanosecondInstant, InputRanges.latestInstant] {
            t.tried += 1
            var e = Self.engine()
            let clock = EngineClock(wall: WallInstant(secondsSinceEpoch: seconds), wallTrusted: true,
                                    monotonic: MonotonicInstant(nanosecondsSinceBoot: 1_000_000_000))
            _ = try? e.add(try Self.request(#"{"id":"c","trigger":{"calendar":{"match":{"hour":7},"repeats":true}}}"#), clock: clock)
            _ = try? e.add(try Self.request(#"{"id":"i","trigger":{"interval":{"seconds":316224000,"repeats":true}}}"#), clock: clock)
            _ = e.nextWakeup
            _ = e.advance(clock: clock)
            t.accepted += 1
        }
        print("extreme values: \(t.tried) inputs tried — \(t.refused) refused naming their field, \(t.accepted) accepted and run through the engine")
        #expect(t.problems.isEmpty, "\(t.problems.prefix(20))")
        #expect(t.tried > 400)
    }

    static func exerciseRestored(_ e: inout NotificationEngine) -> Int {
        var clock = start
        for s: Int64 in [1, 3600, 316_224_000] {
            clock = EngineClock(wall: WallInstant(secondsSinceEpoch: clock.wall.secondsSinceEpoch + s), wallTrusted: true,
                                monotonic: MonotonicInstant(nanosecondsSinceBoot: clock.monotonic.nanosecondsSinceBoot + UInt64(s) * 1_000_000_000))
            _ = e.process(Fix(time: clock.wall, coordinate: Coordinate(latitude: 48.137, longitude: 11.575), mode: .threeD, isValid: true,
                              speed: 0, horizontalError: 5), clock: clock)
            _ = e.advance(clock: clock)
            _ = e.nextWakeup
        }
        return e.delivered.count
    }
}
