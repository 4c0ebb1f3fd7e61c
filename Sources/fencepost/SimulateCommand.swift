// `fencepost simulate`: the whole notification engine in virtual time, no hardware. Time jumps
// from one wakeup the engine asks for to the next, so a year of reminders takes milliseconds; with
// --gps, fixes from a recorded drive are fed at their own times.
import ArgumentParser
import CivilTime
import FencepostJSON
import FencepostLinux
import LocalNotifications
import Position
import TrackFormats

struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run notification requests through the engine in virtual time and list the deliveries.",
        discussion: """
            Reads requests (one JSON object per line, the form the control socket takes), runs \
            the engine from --start to --end as the daemon would — calendar triggers in their \
            zones, intervals, location triggers against the fixes of --gps — and prints every \
            delivery and every fire that was not delivered, in time order.

              fencepost simulate --requests reminders.jsonl \\
                  --start 2026-03-27T00:00:00Z --end 2026-04-03T00:00:00Z --tz Europe/Berlin --jsonl
              {"t":"2026-03-27T06:00:00Z","id":"fasting","event":"delivered"}

            A request line:

              {"id":"fasting","content":{"title":"Glucose","body":"Check now","sound":"default"},
               "trigger":{"calendar":{"match":{"hour":7,"minute":0},"tz":"Europe/Berlin","repeats":true}}}

            Other triggers: {"interval":{"seconds":3600,"repeats":true}} and \
            {"location":{"region":{"circle":{"lat":12.9775,"lon":77.5713,"radius":300}},\
            "notifyOnEntry":true,"notifyOnExit":false,"repeats":true}} (or "polygon":[[lat,lon],…]). \
            Without "tz" a calendar trigger floats with the device zone (--tz). "missed" chooses \
            what happens to fires that could not be delivered: "coalesce" (default), "skip" or \
            {"late":SECONDS}. A line {"categories":[{"id":"REMINDER","actions":[{"id":"snooze",\
            "title":"Later","snoozeSeconds":600}]}]} registers categories. Blank lines and lines \
            starting with # are ignored.

            Events: delivered, late (delivered after its time, within the grace window), \
            coalesced (one delivery for "count" missed fires), missed, evicted (the pending cap \
            dropped the request), positionUnknown (no usable fix while inside a region). With \
            --gps, --start and --end default to the first and last fix.

            Exit status: 0 success, 64 usage error, 65 a bad request line (the message gives \
            file, line and the rule), 66 a file cannot be opened, 74 I/O error.
            """
    )

    @Option(help: ArgumentHelp("Requests, one JSON object per line.", valueName: "file.jsonl"))
    var requests: String

    @Option(help: ArgumentHelp("A recorded drive (NMEA or GPX): fixes for location triggers, at their own times.", valueName: "log"))
    var gps: String?

    @Option(help: ArgumentHelp("Start of virtual time (RFC 3339).", valueName: "time"))
    var start: String?

    @Option(help: ArgumentHelp("End of virtual time (RFC 3339).", valueName: "time"))
    var end: String?

    @Option(help: ArgumentHelp("The device zone (floating triggers, quiet hours); default the system's.", valueName: "zone"))
    var tz: String?

    @Option(help: "Pending calendar and interval requests kept; beyond it the latest-firing are evicted.")
    var pendingCap = 64

    @Option(help: ArgumentHelp("Delivered notifications kept, oldest dropped first, as the agent's [engine] delivered_cap does (default: all of them, so that a simulation can list every delivery).", valueName: "n"))
    var deliveredCap: Int?

    @Flag(help: "Machine-readable output: one JSON object per line, in time order.")
    var jsonl = false

    @Option(help: ArgumentHelp(
        "Keep the engine's state in this SQLite file and run as the daemon does: each step is committed before it is printed, and a run that was killed continues from its last commit.",
        valueName: "file"))
    var state: String?

    @Option(help: ArgumentHelp("With --state: after a restart, virtual time resumes this many seconds after the last commit (the downtime).", valueName: "seconds"))
    var resumeGap: Int64 = 0

    func validate() throws {
        if state != nil && gps != nil { throw ValidationError("--state runs without --gps (location triggers need fixes in order).") }
        guard resumeGap >= 0 else { throw ValidationError("--resume-gap must be ≥ 0.") }
        do { _ = try InputRanges.duration(seconds: resumeGap, "--resume-gap") } catch { throw ValidationError("\(error).") }
        if gps == nil && (start == nil || end == nil) { throw ValidationError("--start and --end are needed without --gps.") }
        guard pendingCap > 0 else { throw ValidationError("--pending-cap must be at least 1.") }
        if let d = deliveredCap, d < 1 { throw ValidationError("--delivered-cap must be at least 1.") }
    }

    func run() throws {
        do {
            try simulate()
        } catch let failure as ReplayFailure {
            writeErrorLine("fencepost simulate: \(failure.message)")
            throw ExitCode(failure.code)
        }
    }

    func instantOption(_ text: String?, _ name: String) throws(ReplayFailure) -> WallInstant? {
        guard let text else { return nil }
        switch InstantText.parse(text.utf8) {
        case .success(let t):
            // Virtual time counts nanoseconds since 1970 in an Int64: it ends in 2262.
            do { _ = try InputRanges.instant(t.secondsSinceEpoch, "--\(name)", latest: InputRanges.latestNanosecondInstant) } catch {
                throw ReplayFailure(64, "\(error) (the simulation's clock counts nanoseconds since 1970 in 64 bits)")
            }
            return t
        case .failure(let e): throw ReplayFailure(64, "--\(name): \(e)")
        }
    }

    func simulate() throws(ReplayFailure) {
        let zones = SystemZones()
        let deviceZone: ZoneRules
        do throws(ZoneError) {
            if let tz { deviceZone = try zones.rules(named: tz) } else { deviceZone = try zones.deviceZone(tzVariable: SystemZones.environmentTZ()) }
        } catch {
            throw ReplayFailure(64, "--tz: \(error)")
        }
        let lines = try SimulationInput.read(path: requests)
        var fixes: [Fix] = []
        if let gps { fixes = try ReplayInput.read(path: gps, uere: GPXReader.defaultUERE).fixes.filter { $0.time != nil } }
        guard let startTime = try instantOption(start, "start") ?? fixes.first?.time,
              let endTime = try instantOption(end, "end") ?? fixes.last?.time.map({ $0.adding(seconds: 1) }) else {
            throw ReplayFailure(65, "\(gps ?? "--gps"): the log has no dated fix; give --start and --end")
        }
        guard endTime >= startTime else { throw ReplayFailure(64, "--end is before --start") }

        var configuration = EngineConfiguration()
        configuration.pendingCap = pendingCap
        configuration.deliveredCap = deliveredCap ?? Int.max
        let engine = NotificationEngine(configuration: configuration, deviceZone: deviceZone,
                                        zoneLookup: { try? zones.rules(named: $0) })
        if let state {
            try simulateDurably(state: state, engine: engine, lines: lines, start: startTime, end: endTime)
            return
        }
        var sim = Simulation(engine: engine, start: startTime)
        for line in lines {
            do throws(RequestError) {
                switch line.item {
                case .categories(let list): sim.take(try sim.engine.setCategories(list))
                case .request(let r): try sim.add(r)
                }
            } catch {
                throw ReplayFailure(65, "\(requests):\(line.number): \(error.message) [rule: \(error.rule.rawValue)]")
            }
        }
        for fix in fixes {
            let t = fix.time!
            guard t >= startTime else { continue }
            guard t <= endTime else { break }
            sim.feed(fix, atNanoseconds: t.secondsSinceEpoch * 1_000_000_000 + Int64(fix.nanoseconds))
        }
        sim.run(until: endTime)

        var out = BufferedWriter(fd: .standardOutput)
        for event in sim.events {
            if jsonl {
                event.jsonLine.serialize(into: &out.buffer)
                out.buffer.append(0x0A)
            } else {
                out.buffer.append(contentsOf: Array(event.humanLine.utf8))
                out.buffer.append(0x0A)
            }
            do throws(Errno) { try out.flushIfFull() } catch { throw ReplayFailure(74, "cannot write standard output: \(error)") }
        }
        if !jsonl {
            let summary = "\(sim.events.filter { $0.delivery != nil }.count) deliveries, \(sim.events.filter { $0.outcome != nil }.count) other outcomes; \(sim.engine.pendingCount) requests still pending at \(endTime)\n"
            out.buffer.append(contentsOf: Array(summary.utf8))
        }
        do throws(Errno) { try out.flush() } catch { throw ReplayFailure(74, "cannot write standard output: \(error)") }
    }
}

extension SimulationEvent {
    /// `{"t":"…","id":"fasting","event":"delivered"}`, plus count, regionEvent or detail.
    var jsonLine: JSONValue {
        var m: [(key: String, value: JSONValue)] = [("t", .string(wall.description)), ("id", .string(requestIdentifier)),
                                                   ("event", .string(event))]
        if let d = delivery {
            m.append(("delivery", .string(d.identifier)))
            if case .coalesced(let n) = d.outcome { m.append(("count", .integer(n))) }
            if let s = d.scheduled, d.outcome != .onTime { m.append(("scheduled", .string(s.description))) }
            if let r = d.regionEvent { m.append(("regionEvent", .string(r))) }
        }
        if let o = outcome {
            m.append(("count", .integer(o.count)))
            if let f = o.firstFire { m.append(("first", .string(f.description))) }
            if let l = o.lastFire { m.append(("last", .string(l.description))) }
            m.append(("detail", .string(o.detail)))
        }
        return .object(m)
    }

    var humanLine: String {
        var s = "\(wall)  \(requestIdentifier)  \(event)"
        if let d = delivery {
            if let r = d.regionEvent { s += " (\(r))" }
            if case .coalesced(let n) = d.outcome { s += " (\(n) fires)" }
            if d.outcome != .onTime, let sch = d.scheduled { s += " — due \(sch)" }
            if !d.content.title.isEmpty { s += "  \"\(d.content.title)\"" }
        }
        if let o = outcome { s += ": \(o.detail)" }
        return s
    }
}

/// The requests file of `simulate`: request lines and category lines.
struct SimulationInput {
    enum Item { case request(NotificationRequest), categories([NotificationCategory]) }
    var number: Int
    var item: Item

    static func read(path: String) throws(ReplayFailure) -> [SimulationInput] {
        try parse(try readWholeFile(path, what: "requests file"), name: path)
    }

    /// The lines of `bytes` (read from `path`, named so in errors).
    static func parse(_ bytes: [UInt8], name path: String) throws(ReplayFailure) -> [SimulationInput] {
        let lines: [(line: Int, value: JSONValue)]
        do throws(JSONLines.Failure) { lines = try JSONLines.parse(bytes) } catch {
            throw ReplayFailure(65, "\(path):\(error.line): not JSON: \(error.error)")
        }
        var result: [SimulationInput] = []
        for (number, value) in lines {
            do throws(RequestError) {
                if case .object(let m) = value, m.count == 1, m[0].key == "categories" {
                    guard case .array(let list) = m[0].value else {
                        throw RequestError(.malformed, "\"categories\" must be an array")
                    }
                    var categories: [NotificationCategory] = []
                    for c in list { categories.append(try NotificationCategory(json: c)) }
                    result.append(SimulationInput(number: number, item: .categories(categories)))
                } else {
                    // `ics` / `except_ics` as `fencepost add` reads them: one request per VEVENT.
                    let expanded: ICalendarRequests
                    do throws(ICalendarKeyError) { expanded = try ClientCalendars.resolve(value) } catch {
                        throw RequestError(.calendar, error.description)
                    }
                    for note in expanded.notes { writeStandardError("fencepost simulate: \(note)\n") }
                    for r in expanded.requests {
                        result.append(SimulationInput(number: number, item: .request(try NotificationRequest(json: r))))
                    }
                }
            } catch {
                throw ReplayFailure(65, "\(path):\(number): \(error.message) [rule: \(error.rule.rawValue)]")
            }
        }
        return result
    }
}
