// The benchmark cases: which code, on which workload, for `fencepost bench` (all of them) and
// `fencepost-agent --bench` (AgentBench: a subset, built into the agent). The workloads are this
// target's (shared with Benchmarks/, never copied); this file only wires them to the harness. A case is prepared (zones loaded, circles and index built, log made) only when it was
// selected, so `--filter` keeps a run small.
import CivilTime
import FencepostJSON
import FencepostLinux
import Geofencing
import LocalNotifications
import NMEA
import Position

/// Why a case could not be prepared, with the exit status it means (sysexits.h).
public struct BenchFailure: Error {
    public var code: Int32
    public var message: String
    public init(_ code: Int32, _ message: String) { self.code = code; self.message = message }
}

/// One selectable benchmark.
public struct BenchCase {
    /// "geofence index, uniform": what is measured.
    public var name: String
    /// "1k": the workload's size ("—" when it has none).
    public var size: String
    /// The case this one is compared with ("vs baseline"), by ``id``.
    public var baseline: String?
    /// At most this many seconds, whatever `--seconds` says (brute force at 100k and 1M).
    public var budgetCap: Double?
    /// Builds the workload and returns the body to measure.
    public var prepare: (BenchInputs) throws(BenchFailure) -> PreparedBench

    /// "geofence index, uniform 1k": what `--filter` matches and the JSON names.
    public var id: String { size == "—" ? name : "\(name) \(size)" }
}

/// A case ready to run.
public struct PreparedBench {
    public var body: BenchBody
    /// Operations per iteration of `body` (sentences per pass of a log).
    public var operationsPerIteration = 1
    /// Bytes per operation, for MB/s (the NMEA cases).
    public var bytesPerOperation: Double?
    /// The unit of one operation, for the JSON ("call", "query", "sentence", "add+remove").
    public var operation: String
    /// Facts about the workload for the JSON ("sentencesPerPass").
    public var details: [(key: String, value: JSONValue)] = []
}

/// Inputs shared between cases, built on first use: zones, the NMEA log.
public final class BenchInputs {
    let zones = SystemZones()
    let nmeaSize: Int
    let nmeaFiles: [String]
    /// The zones' POSIX TZ rules instead of the zone files (``builtInRules``).
    let builtInZones: Bool
    private var zoneCache: [String: ZoneRules] = [:]
    private var logCache: [UInt8]?

    /// - Parameter builtInZones: take the workload zones from ``builtInRules``, so that a board
    ///   without tzdata measures the same thing (`fencepost-agent --bench`).
    public init(nmeaSize: Int, nmeaFiles: [String], builtInZones: Bool = false) {
        self.nmeaSize = nmeaSize
        self.nmeaFiles = nmeaFiles
        self.builtInZones = builtInZones
    }

    /// The workload zones as POSIX TZ rules (their current rules, without history).
    public static let builtInRules = [
        "Europe/Berlin": "CET-1CEST,M3.5.0,M10.5.0/3", "UTC": "UTC0",
        "America/New_York": "EST5EDT,M3.2.0,M11.1.0", "Australia/Lord_Howe": "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0",
    ]

    func zone(_ name: String) throws(BenchFailure) -> ZoneRules {
        if let z = zoneCache[name] { return z }
        if builtInZones {
            guard let rule = Self.builtInRules[name] else { throw BenchFailure(70, "no built-in rule for zone \(name)") }
            do throws(ZoneError) {
                let z = try ZoneRules(posixTZ: rule)
                zoneCache[name] = z
                return z
            } catch {
                throw BenchFailure(70, "built-in rule of \(name): \(error)")
            }
        }
        do throws(ZoneError) {
            let z = try zones.rules(named: name)
            zoneCache[name] = z
            return z
        } catch {
            throw BenchFailure(66, "cannot load zone \(name) from \(zones.directory): \(error)")
        }
    }

    /// The NMEA log: the files of `--nmea-log` repeated to `nmeaSize`, or the synthetic log.
    func nmeaLog() throws(BenchFailure) -> [UInt8] {
        if let logCache { return logCache }
        let log: [UInt8]
        if nmeaFiles.isEmpty {
            log = NMEAWorkload.syntheticLog(size: nmeaSize)
        } else {
            var drives: [[UInt8]] = []
            for f in nmeaFiles {
                do throws(Errno) { drives.append(try FileDescriptor.readFile(f, maximumBytes: 1 << 30)) } catch {
                    throw BenchFailure(error == .fileTooLarge ? 65 : 66, "cannot read NMEA log \(f): \(error)")
                }
            }
            guard drives.contains(where: { !$0.isEmpty }) else { throw BenchFailure(65, "--nmea-log: the files are empty") }
            log = NMEAWorkload.log(repeating: drives, size: nmeaSize)
        }
        logCache = log
        return log
    }
}

/// Every case, and each family of cases on its own (what `fencepost-agent --bench` picks).
public enum BenchCatalog {
    /// Every case, in run order, for these flags. A baseline precedes the cases compared with it.
    public static func cases(allZones: Bool, large: Bool, nmeaSize: Int = 4_000_000) -> [BenchCase] {
        var list: [BenchCase] = []
        let zoneNames = allZones ? NextFireWorkload.zoneNames : ["Europe/Berlin"]
        for zone in zoneNames {
            for shape in NextFireWorkload.shapes { list.append(nextFire(shape, zone)) }
        }
        var sets: [(Int, GeofenceWorkload.Spread)] = [(20, .uniform), (20, .clustered), (1_000, .uniform), (1_000, .clustered),
                                                      (100_000, .uniform), (100_000, .clustered)]
        if large { sets.append((1_000_000, .uniform)) }
        for (count, spread) in sets { list += geofence(count, spread) }
        list += nmea(size: nmeaSize)
        list.append(engine())
        return list
    }

    static func sizeText(_ n: Int) -> String {
        n >= 1_000_000 && n % 1_000_000 == 0 ? "\(n / 1_000_000)M" : n >= 1_000 && n % 1_000 == 0 ? "\(n / 1_000)k" : "\(n)"
    }

    /// "4.0 MB", "200 kB".
    static func megabytes(_ bytes: Double) -> String {
        bytes >= 1e6 ? BenchFormat.decimal(bytes / 1e6, 1) + " MB" : BenchFormat.decimal(bytes / 1e3, 0) + " kB"
    }

    // MARK: Next fire

    /// `CalendarSchedule.nextDate(after:in:)` on 4,096 seeded starts in 2000…2100, one call per operation.
    public static func nextFire(_ shape: NextFireWorkload.Shape, _ zoneName: String) -> BenchCase {
        BenchCase(name: "next-fire \(shape.name), \(zoneName)", size: "—") { inputs throws(BenchFailure) in
            let zone = try inputs.zone(zoneName)
            let schedule: CalendarSchedule
            do throws(CalendarMatchError) { schedule = try CalendarSchedule(shape.match) } catch {
                throw BenchFailure(70, "workload shape \(shape.name): \(error)")
            }
            let starts = NextFireWorkload.starts(count: 4096)
            let cursor = BenchCursor()
            return PreparedBench(body: { n in
                var i = cursor.position
                var sum: UInt64 = 0
                for _ in 0 ..< n {
                    if let d = schedule.nextDate(after: starts[i & 4095], in: zone) { sum &+= UInt64(bitPattern: d.secondsSinceEpoch) }
                    i &+= 1
                }
                cursor.position = i
                return sum
            }, operation: "call")
        }
    }

    // MARK: Geofence

    /// Three cases on the same seeded circles and 4,096 fixes (half near a circle), one query per
    /// operation: the haversine scan (a naive second baseline), the brute force with the index's
    /// own exact test (``ChordScan``: precomputed unit vectors and squared chords, four circles
    /// per SIMD step; the baseline the index is compared with), then `RegionIndex.query`.
    public static func geofence(_ count: Int, _ spread: GeofenceWorkload.Spread) -> [BenchCase] {
        let size = sizeText(count)
        let cap = count >= 1_000_000 ? 0.5 : count >= 100_000 ? 0.25 : nil
        // Each body is written out (no query closure): an indirect call per query would cost
        // a few nanoseconds, a third of a 20-circle scan.
        let haversine = BenchCase(name: "geofence haversine scan, \(spread.rawValue)", size: size, budgetCap: cap) { _ in
            let circles = GeofenceWorkload.circles(count: count, spread: spread)
            let points = GeofenceWorkload.queries(count: 4096, spread: spread, near: circles)
            let cursor = BenchCursor()
            return PreparedBench(body: { n in
                var i = cursor.position
                var hits: UInt64 = 0
                for _ in 0 ..< n {
                    hits &+= UInt64(GeofenceWorkload.bruteForceCount(circles, points[i & 4095]))
                    i &+= 1
                }
                cursor.position = i
                return hits
            }, operation: "query")
        }
        let brute = BenchCase(name: "geofence brute force, \(spread.rawValue)", size: size, budgetCap: cap) { _ in
            let circles = GeofenceWorkload.circles(count: count, spread: spread)
            let scan = ChordScan(circles)
            let points = GeofenceWorkload.queries(count: 4096, spread: spread, near: circles)
            let cursor = BenchCursor()
            return PreparedBench(body: { n in
                var i = cursor.position
                var hits: UInt64 = 0
                for _ in 0 ..< n {
                    hits &+= UInt64(scan.count(containing: points[i & 4095]))
                    i &+= 1
                }
                cursor.position = i
                return hits
            }, operation: "query")
        }
        let index = BenchCase(name: "geofence index, \(spread.rawValue)", size: size, baseline: brute.id) { _ in
            let circles = GeofenceWorkload.circles(count: count, spread: spread)
            let index = GeofenceWorkload.index(circles)
            let points = GeofenceWorkload.queries(count: 4096, spread: spread, near: circles)
            let cursor = BenchCursor()
            return PreparedBench(body: { n in
                // Locals: a captured `var` would be a heap box with an exclusivity check at
                // every access, inside the loop.
                var i = cursor.position
                var results: [Int32] = []
                results.reserveCapacity(64)
                var hits: UInt64 = 0
                for _ in 0 ..< n {
                    index.query(points[i & 4095], into: &results)
                    hits &+= UInt64(results.count)
                    i &+= 1
                }
                cursor.position = i
                return hits
            }, operation: "query")
        }
        return [haversine, brute, index]
    }

    // MARK: NMEA

    /// One pass over the whole log per iteration; an operation is one sentence.
    public static func nmea(size: Int) -> [BenchCase] {
        let label = megabytes(Double(size))
        func prepared(_ inputs: BenchInputs, decode: Bool) throws(BenchFailure) -> PreparedBench {
            let log = try inputs.nmeaLog()
            // One pass outside the measurement: what the framer accepts and rejects.
            var probe = NMEAFramer()
            log.withUnsafeBytes { probe.feed($0) { _ in } }
            let c = probe.counters
            let rejected = c.rejected
            let sentences = max(1, c.sentences)
            return PreparedBench(body: { n in
                var sum: UInt64 = 0
                for _ in 0 ..< n {
                    var framer = NMEAFramer()
                    var decoder = NMEADecoder()
                    log.withUnsafeBytes { bytes in
                        if decode {
                            framer.feed(bytes) { if decoder.decode($0) != nil { sum &+= 1 } }
                        } else {
                            framer.feed(bytes) { sum &+= UInt64($0.count) }
                        }
                    }
                }
                return sum
            }, operationsPerIteration: sentences, bytesPerOperation: Double(log.count) / Double(sentences), operation: "sentence",
               details: [("bytesPerPass", .integer(Int64(log.count))), ("sentencesPerPass", .integer(Int64(c.sentences))),
                         ("rejectedPerPass", .integer(Int64(rejected)))])
        }
        return [
            BenchCase(name: "nmea framer", size: label) { inputs throws(BenchFailure) in try prepared(inputs, decode: false) },
            BenchCase(name: "nmea framer+decoders", size: label) { inputs throws(BenchFailure) in try prepared(inputs, decode: true) },
        ]
    }

    // MARK: Notification engine

    /// `NotificationEngine.add` then `removePending` of one calendar request while 10,000 stand.
    public static func engine() -> BenchCase {
        BenchCase(name: "engine add+remove", size: "10k pending") { inputs throws(BenchFailure) in
            var zones: [String: ZoneRules] = [:]
            for name in NotificationCenterWorkload.zoneNames { zones[name] = try inputs.zone(name) }
            let device = try inputs.zone("Europe/Berlin")
            let lookup = zones
            let box = EngineBox(NotificationCenterWorkload.engine(NotificationCenterWorkload.calendarRequests(count: 10_000),
                                                                  deviceZone: device, zoneLookup: { lookup[$0] }))
            let extra = NotificationCenterWorkload.calendarRequests(count: 1024, seed: 0xBE4C_0001, prefix: "bench")
            let clock = NotificationCenterWorkload.clock
            let cursor = BenchCursor()
            return PreparedBench(body: { n in
                var k = cursor.position
                var sum: UInt64 = 0
                for _ in 0 ..< n {
                    let r = extra[k & 1023]
                    k &+= 1
                    do throws(RequestError) { sum &+= UInt64(try box.engine.add(r, clock: clock).changes.count) } catch {
                        preconditionFailure("bench request \(r.identifier): \(error)")
                    }
                    sum &+= UInt64(box.engine.removePending([r.identifier]).changes.count)
                }
                cursor.position = k
                return sum
            }, operation: "add+remove")
        }
    }

    /// Where a body goes on in its workload from one batch to the next. The body reads it into a
    /// local at the start of a batch and writes it back at the end, so that the loop touches no
    /// captured `var` (a heap box with a dynamic exclusivity check at every access).
    final class BenchCursor {
        var position = 0
    }

    /// The engine, mutated in place by the body (a struct captured by a closure would be copied
    /// on write).
    final class EngineBox {
        var engine: NotificationEngine
        init(_ engine: NotificationEngine) { self.engine = engine }
    }
}
