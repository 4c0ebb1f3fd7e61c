// The notification center's hot paths at 10k and 100k pending requests
// (FencepostBenchHarness.NotificationCenterWorkload), against the baseline a plain implementation
// would be: pending requests in an array, found by a linear scan, kept sorted by next fire.
//
//   add+remove    add a new request, then remove it (one iteration = the pair)
//   replace       add with the identifier of a pending request (atomic replace)
//   clock step    the wall clock steps back an hour: every calendar trigger is recomputed
//   bytes         resident bytes per pending request (RSS growth / requests), custom metric

import Benchmark
import CivilTime
import FencepostLinux
import FencepostBenchHarness
import LocalNotifications
import Foundation

/// Resident bytes of this process (/proc/self/statm).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * sysconf(Int32(_SC_PAGESIZE)) : 0
}

final class NaiveBox: @unchecked Sendable {
    var naive: NaivePending
    init(_ n: NaivePending) { naive = n }
}

final class ClockBox: @unchecked Sendable {
    var clock: EngineClock
    init(_ c: EngineClock) { clock = c }
}

/// The plain implementation: an array of (request, next fire) sorted by next fire.
struct NaivePending {
    var items: [(request: NotificationRequest, next: Int64)] = []
    mutating func add(_ r: NotificationRequest, next: Int64) {
        if let i = items.firstIndex(where: { $0.request.identifier == r.identifier }) { items.remove(at: i) }
        let at = items.firstIndex { $0.next > next } ?? items.count
        items.insert((r, next), at: at)
    }
    mutating func remove(_ id: String) {
        if let i = items.firstIndex(where: { $0.request.identifier == id }) { items.remove(at: i) }
    }
}

/// One engine per size, built once and reused by every sample (building 100k requests takes
/// half a second; it is not what is measured).
final class EngineBox: @unchecked Sendable {
    var engine: NotificationEngine
    init(_ engine: NotificationEngine) { self.engine = engine }
}

let benchmarks: @Sendable () -> Void = {
    #if DEBUG
    fatalError("Benchmarks must be built in release.")
    #endif
    let zones = SystemZones()
    let lookup: (String) -> ZoneRules? = { try? zones.rules(named: $0) }
    let device: ZoneRules
    do { device = try zones.rules(named: "Europe/Berlin") } catch { fatalError("\(error)") }
    let clock = NotificationCenterWorkload.clock
    // Each iteration is 1,000 operations: the scaled figures are per operation.
    let config = Benchmark.Configuration(metrics: [.wallClock, .throughput, .mallocCountTotal], warmupIterations: 3,
                                         scalingFactor: .kilo, maxDuration: .seconds(2), maxIterations: 10_000)

    for n in [10_000, 100_000] {
        let requests = NotificationCenterWorkload.calendarRequests(count: n * 3 / 4)
            + NotificationCenterWorkload.intervalRequests(count: n / 4)
        let extra = NotificationCenterWorkload.calendarRequests(count: 1024, seed: 99, prefix: "new")
        let label = n == 10_000 ? "10k" : "100k"

        let box = EngineBox(NotificationCenterWorkload.engine(requests, deviceZone: device, zoneLookup: lookup))
        var replacements = extra
        for k in replacements.indices { replacements[k].identifier = requests[(k &* 7919) % requests.count].identifier }
        Benchmark("Fencepost add+remove, \(label) pending", configuration: config) { benchmark in
            var i = 0
            for _ in benchmark.scaledIterations {
                let r = extra[i & 1023]
                blackHole(try? box.engine.add(r, clock: clock))
                blackHole(box.engine.removePending([r.identifier]))
                i &+= 1
            }
        }
        Benchmark("Fencepost replace, \(label) pending", configuration: config) { benchmark in
            var i = 0
            for _ in benchmark.scaledIterations {
                blackHole(try? box.engine.add(replacements[i & 1023], clock: clock))
                i &+= 1
            }
        }
        var naiveFilled = NaivePending()
        for (k, r) in requests.enumerated() { naiveFilled.add(r, next: Int64(k &* 7919 % 86_400)) }
        let naiveBox = NaiveBox(naiveFilled)
        Benchmark("Baseline sorted array add+remove, \(label) pending", configuration: config) { benchmark in
            var i = 0
            for _ in benchmark.scaledIterations {
                let r = extra[i & 1023]
                naiveBox.naive.add(r, next: Int64(i % 86_400))
                naiveBox.naive.remove(r.identifier)
                i &+= 1
            }
        }
        let stepBox = EngineBox(NotificationCenterWorkload.engine(requests, deviceZone: device, zoneLookup: lookup))
        let stepClock = ClockBox(clock)
        Benchmark("Fencepost clock step back 1 h (recompute all), \(label) pending",
                  configuration: .init(metrics: [.wallClock, .mallocCountTotal], warmupIterations: 1, scalingFactor: .one,
                                       maxDuration: .seconds(3), maxIterations: 200)) { benchmark in
            for _ in benchmark.scaledIterations {
                stepClock.clock.wall = stepClock.clock.wall.adding(seconds: -3600)
                stepClock.clock.monotonic = MonotonicInstant(nanosecondsSinceBoot: stepClock.clock.monotonic.nanosecondsSinceBoot + 1_000_000)
                blackHole(stepBox.engine.advance(clock: stepClock.clock))
            }
        }
        Benchmark("Fencepost bytes per pending request, \(label)",
                  configuration: .init(metrics: [.custom("bytes per request", polarity: .prefersSmaller, useScalingFactor: false)],
                                       warmupIterations: 0, scalingFactor: .one, maxIterations: 1)) { benchmark in
            // Requests made inside the measurement, so their strings count (RSS also keeps what the
            // temporary array freed: an overestimate, not an underestimate).
            let before = residentBytes()
            let engine = NotificationCenterWorkload.engine(
                NotificationCenterWorkload.calendarRequests(count: n * 3 / 4, prefix: "m")
                    + NotificationCenterWorkload.intervalRequests(count: n / 4, prefix: "m"),
                deviceZone: device, zoneLookup: lookup)
            let after = residentBytes()
            blackHole(engine.pendingCount)
            benchmark.measurement(.custom("bytes per request", polarity: .prefersSmaller, useScalingFactor: false),
                                  Int(after - before) / requests.count)
        }
    }
}
