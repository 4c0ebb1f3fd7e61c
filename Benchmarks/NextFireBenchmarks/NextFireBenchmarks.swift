// Calendar next fire: Fencepost's CalendarSchedule against Foundation's Calendar.nextDate, in the
// same run, on the same seeded start instants (FencepostBenchHarness.NextFireWorkload): five trigger
// shapes × four zones, policy nextTime, repeated time first (Fencepost's trigger default).
//
// Ours: each iteration is 1,000 calls (`scalingFactor: .kilo`), so the scaled figures are ns per
// call. Foundation: each iteration is one call (it takes microseconds), so its figures are per call
// too. mallocCountTotal is per iteration: 0 for ours means 0 allocations per call.

import Benchmark
import FencepostBenchHarness
import Foundation

let benchmarks: @Sendable () -> Void = {
    #if DEBUG
    fatalError("Benchmarks must be built in release.")
    #endif

    let inputs = BenchInputs(nmeaSize: 4_000_000, nmeaFiles: [])
    let starts = NextFireWorkload.starts(count: 4096)
    let foundationStarts = starts.map { Date(timeIntervalSince1970: TimeInterval($0.secondsSinceEpoch)) }

    for zoneName in NextFireWorkload.zoneNames {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zoneName)!

        for shape in NextFireWorkload.shapes {
            // The case of `fencepost bench` of the same name (BenchCatalog), run by this harness:
            // its body walks all 4,096 starts from one iteration to the next.
            let prepared: PreparedBench
            do throws(BenchFailure) { prepared = try BenchCatalog.nextFire(shape, zoneName).prepare(inputs) } catch { fatalError("\(error.message)") }
            nonisolated(unsafe) let body = prepared.body

            Benchmark(
                "Fencepost \(shape.name), \(zoneName)",
                configuration: .init(
                    metrics: [.wallClock, .throughput, .mallocCountTotal],
                    warmupIterations: 3, scalingFactor: .kilo,
                    maxDuration: .seconds(1), maxIterations: 10_000)
            ) { benchmark in
                blackHole(body(benchmark.scaledIterations.count))
            }

            let m = shape.match
            let components = DateComponents(
                year: m.year, month: m.month, day: m.day, hour: m.hour, minute: m.minute, second: m.second,
                weekday: m.weekday, weekdayOrdinal: m.weekdayOrdinal, weekOfMonth: m.weekOfMonth,
                weekOfYear: m.weekOfYear, yearForWeekOfYear: m.yearForWeekOfYear)
            let cal = calendar
            var j = 0
            Benchmark(
                "Foundation \(shape.name), \(zoneName)",
                configuration: .init(
                    metrics: [.wallClock, .throughput, .mallocCountTotal],
                    warmupIterations: 3, scalingFactor: .one,
                    maxDuration: .seconds(1), maxIterations: 2_000)
            ) { benchmark in
                for _ in benchmark.scaledIterations {
                    blackHole(cal.nextDate(after: foundationStarts[j & 4095], matching: components,
                                           matchingPolicy: .nextTime, repeatedTimePolicy: .first))
                    j &+= 1
                }
            }
        }
    }
}
