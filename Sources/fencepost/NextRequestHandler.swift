// Script mode (`fencepost next --jsonl`): one JSON request a line in, one JSON answer a line out.
//
//   in:  {"after":"2026-03-08T06:59:00Z","tz":"America/New_York","match":{"hour":2,"minute":30},"count":3}
//   out: {"next":["2026-03-08T07:00:00Z","2026-03-09T06:30:00Z","2026-03-10T06:30:00Z"]}
//   out: {"error":"unknown key \"colour\" (keys: after, tz, match, …)"}
//
// Every input line gets exactly one output line, in order — blank lines included (they are answered
// `{"error":"empty line"}`), so a script can pair answers with questions by counting lines.
// A bad line never stops the run.
import CivilTime
import FencepostJSON
import FencepostLinux

/// Maps a line of bytes to a line of output. Keeps the zones it has loaded, by name.
///
/// Not thread-safe; one per run. Clock-free: "now" (for requests without `after`) is an argument.
struct NextRequestHandler {
    let zones: SystemZones
    /// `TZ` as the shell saw it, for the device zone.
    let tzVariable: String?

    /// Loaded zones by name; misses are remembered too (as their error sentence) so that a
    /// stream of bad names does not reach the file system on every line.
    private var cache: [String: Result<ZoneRules, NextRequestError>] = [:]
    private var deviceZone: Result<ZoneRules, NextRequestError>?
    /// Bound on remembered names: the cache is emptied when it reaches this size.
    static let cacheLimit = 4096

    init(zones: SystemZones, tzVariable: String?) {
        self.zones = zones
        self.tzVariable = tzVariable
    }

    /// Answers one line (without its newline) by appending one line (with its newline) to `out`.
    ///
    /// - Complexity: parsing is O(n) in the line; then `count` calendar computations.
    mutating func handle(line: UnsafeBufferPointer<UInt8>, now: WallInstant, into out: inout [UInt8]) {
        switch answer(line: line, now: now) {
        case .success(let fires):
            out.append(contentsOf: #"{"next":["#.utf8)
            for (k, fire) in fires.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "\""))
                InstantText.appendUTC(fire, to: &out)
                out.append(UInt8(ascii: "\""))
            }
            out.append(contentsOf: "]}\n".utf8)
        case .failure(let error):
            out.append(contentsOf: #"{"error":"#.utf8)
            JSONValue.serializeString(error.message, into: &out)
            out.append(contentsOf: "}\n".utf8)
        }
    }

    /// Convenience for tests: one line of text in, one line of text out (without the newline).
    mutating func handle(line: String, now: WallInstant) -> String {
        var out: [UInt8] = []
        var line = line
        line.withUTF8 { handle(line: $0, now: now, into: &out) }
        return String(decoding: out.dropLast(), as: UTF8.self)
    }

    /// The fires for one line, or why there are none.
    mutating func answer(line: UnsafeBufferPointer<UInt8>, now: WallInstant) -> Result<[WallInstant], NextRequestError> {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
            return .failure(NextRequestError("empty line"))
        }
        let json: JSONValue
        do { json = try JSONValue.parse(line) } catch {
            return .failure(NextRequestError("not JSON: \(error)"))
        }
        let request: NextRequest
        do { request = try NextRequest(json: json) } catch { return .failure(error) }
        if let recurrence = request.recurrence {
            let zone: ZoneRules
            switch rules(for: request.zoneName) {
            case .success(let z): zone = z
            case .failure(let e): return .failure(e)
            }
            return .success(NextRequest.fires(of: recurrence, after: request.after ?? now, in: zone, count: request.count))
        }
        let schedule: CalendarSchedule
        do { schedule = try CalendarSchedule(request.match, weekRules: request.weekRules) } catch {
            return .failure(NextRequestError("\(error)"))
        }
        let zone: ZoneRules
        switch rules(for: request.zoneName) {
        case .success(let z): zone = z
        case .failure(let e): return .failure(e)
        }
        return .success(NextRequest.fires(
            of: schedule, after: request.after ?? now, in: zone, policy: request.policy,
            repeatedTime: request.repeatedTime, count: request.count))
    }

    /// The zone of a request: a named zone (cached), or the device zone when `name` is nil.
    mutating func rules(for name: String?) -> Result<ZoneRules, NextRequestError> {
        guard let name else {
            if let deviceZone { return deviceZone }
            let loaded: Result<ZoneRules, NextRequestError>
            do { loaded = .success(try zones.deviceZone(tzVariable: tzVariable)) } catch {
                loaded = .failure(NextRequestError("no device time zone: \(error)"))
            }
            deviceZone = loaded
            return loaded
        }
        if let hit = cache[name] { return hit }
        let loaded: Result<ZoneRules, NextRequestError>
        do { loaded = .success(try zones.rules(named: name)) } catch {
            loaded = .failure(NextRequestError("\(error)"))
        }
        if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
        cache[name] = loaded
        return loaded
    }
}
