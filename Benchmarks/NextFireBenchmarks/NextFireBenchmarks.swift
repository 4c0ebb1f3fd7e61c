// Calendar next fire: Fencepost's CalendarSchedule against Foundation's Calendar.nextDate, in the
// same run, on the same seeded start instants (FencepostWorkloads.NextFireWorkload): five trigger
// shapes × four zones, policy nextTime, repeated time first (Fencepost's trigger default).
//
// Ours: each iteration is 1,000 calls (`scalingFactor: .kilo`), so the scaled figures are ns per
// call. Foundation: each iteration is one call (it takes microseconds), so its figures are per call
// too. mallocCountTotal is per iteration: 0 for ours means 0 allocations per call.

import Benchmark
import CivilTime
import FencepostLinux
import FencepostWorkloads
import Foundation

let benchmarks: @Sendable () -> Void = {
    #if DEBUG
    fatalError("Benchmarks must be built in release.")
    #endif

    let zones = SystemZones()
    let starts = NextFireWorkload.starts(count: 4096)
    let foundationStarts = starts.map { Date(timeIntervalSince1970: TimeInterval($0.secondsSinceEpoch)) }

    for zoneName in NextFireWorkload.zoneNames {
        let zone: ZoneRules
        do { zone = try zones.rules(named: zoneName) } catch { fatalError("\(error)") }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zoneName)!

        for shape in NextFireWorkload.shapes {
            let schedule: CalendarSchedule
            do { schedule = try CalendarSchedule(shape.match) } catch { fatalError("\(error)") }
            // Through all 4,096 starts from one iteration to the next, as `fencepost bench` does
            // (not the same first 1,000 in every iteration).
            nonisolated(unsafe) var cursor = 0

            Benchmark(
                "Fencepost \(shape.name), \(zoneName)",
                configuration: .init(
                    metrics: [.wallClock, .throughput, .mallocCountTotal],
                    warmupIterations: 3, scalingFactor: .kilo,
                    maxDuration: .seconds(1), maxIterations: 10_000)
            ) { benchmark in
                var i = cursor
                for _ in benchmark.scaledIterations {
                    blackHole(schedule.nextDate(after: starts[i & 4095], in: zone))
                    i &+= 1
                }
                cursor = i
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
