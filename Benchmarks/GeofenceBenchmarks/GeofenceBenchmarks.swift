// Geofencing: RegionIndex (a packed Hilbert R-tree over region boxes, exact test per hit) against a
// brute force with the index's own exact test (ChordScan) and a haversine scan, in the same run, on
// the same seeded circles and fixes (FencepostBenchHarness.GeofenceWorkload): 20, 1k, 100k and 1M
// circles over Germany, and 100k
// circles within 10 km of Berlin. Plus the index build at 1M, its bytes per circle, and the whole
// RegionMonitor per fix at 1M.
//
// Zone sets: the same 1M circles built into a zone-set file, written, mapped read-only
// as the agent maps it, and queried from the mapping ("Zone set query (mapped)"), against the
// brute-force scan of the same circles and points; and the RegionMonitor per fix over that mapped
// set, as the agent runs it, against a brute-force scan of every circle per fix of the same drive.
//
// And the same monitor over 1M circles plus 1,000 polygons of 10,000 vertices each.
//
// Index queries: each iteration is 1,000 queries (`scalingFactor: .kilo`), so scaled figures are ns
// per query. Brute force: each iteration is one query. mallocCountTotal is per iteration.

import Benchmark
import FencepostLinux
import FencepostBenchHarness
import Geofencing
import Position

#if canImport(Glibc)
import Glibc
#endif

let benchmarks: @Sendable () -> Void = {
    #if DEBUG
    fatalError("Benchmarks must be built in release.")
    #endif

    let sets: [(Int, GeofenceWorkload.Spread)] = [
        (20, .uniform), (1_000, .uniform), (100_000, .uniform), (1_000_000, .uniform), (100_000, .clustered),
    ]
    for (count, spread) in sets {
        let circles = GeofenceWorkload.circles(count: count, spread: spread)
        let index = GeofenceWorkload.index(circles)
        let points = GeofenceWorkload.queries(count: 4096, spread: spread, near: circles)
        let label = "\(count) circles, \(spread.rawValue)"

        // Every benchmark goes on through the 4,096 fixes from one iteration to the next (a cursor
        // read into a local per iteration), as `fencepost bench` does: starting again at fix 0 in
        // every iteration measured the same 1,000 fixes (or, at one query an iteration, fix 0)
        // again and again, with their index paths in the cache.
        nonisolated(unsafe) var cursor = (index: 0, brute: 0, haversine: 0)
        Benchmark(
            "Index query, \(label)",
            configuration: .init(
                metrics: [.wallClock, .throughput, .mallocCountTotal],
                warmupIterations: 3, scalingFactor: .kilo, maxDuration: .seconds(1), maxIterations: 10_000)
        ) { benchmark in
            var results: [Int32] = []
            results.reserveCapacity(64)
            var i = cursor.index
            for _ in benchmark.scaledIterations {
                index.query(points[i & 4095], into: &results)
                blackHole(results.count)
                i &+= 1
            }
            cursor.index = i
        }

        // The fair brute force: the index's own exact test over flat arrays, SIMD (ChordScan).
        let scan = ChordScan(circles)
        Benchmark(
            "Brute force, \(label)",
            configuration: .init(
                metrics: [.wallClock, .throughput, .mallocCountTotal],
                warmupIterations: 1, scalingFactor: count <= 1_000 ? .kilo : .one,
                maxDuration: .seconds(1), maxIterations: 10_000)
        ) { benchmark in
            var i = cursor.brute
            for _ in benchmark.scaledIterations {
                blackHole(scan.count(containing: points[i & 4095]))
                i &+= 1
            }
            cursor.brute = i
        }

        // The naive baseline: a haversine distance to every circle.
        Benchmark(
            "Haversine scan, \(label)",
            configuration: .init(
                metrics: [.wallClock, .throughput, .mallocCountTotal],
                warmupIterations: 1, scalingFactor: count <= 1_000 ? .kilo : .one,
                maxDuration: .seconds(1), maxIterations: 10_000)
        ) { benchmark in
            var i = cursor.haversine
            for _ in benchmark.scaledIterations {
                blackHole(GeofenceWorkload.bruteForceCount(circles, points[i & 4095]))
                i &+= 1
            }
            cursor.haversine = i
        }
    }

    let million = GeofenceWorkload.circles(count: 1_000_000, spread: .uniform)
    let shapes = million.enumerated().map { i, c in
        (slot: Int32(i), shape: RegionShape.circle(try! CircularRegion(center: c.center, radius: c.radius)))
    }
    Benchmark(
        "Index build, 1M circles",
        configuration: .init(
            metrics: [.wallClock, .peakMemoryResident, .mallocCountTotal,
                      .custom("bytes per circle", polarity: .prefersSmaller, useScalingFactor: false)],
            warmupIterations: 1, scalingFactor: .one, maxDuration: .seconds(5), maxIterations: 5)
    ) { benchmark in
        var footprint = 0
        for _ in benchmark.scaledIterations {
            let index = RegionIndex(shapes)
            footprint = index.memoryFootprint
            blackHole(index)
        }
        benchmark.measurement(.custom("bytes per circle", polarity: .prefersSmaller, useScalingFactor: false),
                              footprint / million.count)
    }

    // The zone set of the 1M circles, as a file mapped read-only (ZoneSetFiles in the agent).
    let zoneSetPath = "/tmp/fencepost-bench-\(getpid()).zones"
    let mapped: MappedFile = {
        var builder = ZoneSetBuilder()
        for (i, c) in million.enumerated() {
            builder.add(try! Region.circle("z\(i)", center: c.center, radius: c.radius), content: ZoneContent(title: "z\(i)"))
        }
        let bytes = builder.finish(sourceHash: 0).bytes
        let fd = try! FileDescriptor.createForWriting(zoneSetPath)
        try! bytes.withUnsafeBytes { try fd.writeAll($0) }
        try! fd.close()
        let file = try! MappedFile(path: zoneSetPath)
        unlink(zoneSetPath)
        return file
    }()
    let zoneSet = try! ZoneSet(mapped.bytes)
    let millionPoints = GeofenceWorkload.queries(count: 4096, spread: .uniform, near: million)
    nonisolated(unsafe) var zoneCursor = (query: 0, scan: 1)
    Benchmark(
        "Zone set query (mapped), 1000000 circles, uniform",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal],
            warmupIterations: 3, scalingFactor: .kilo, maxDuration: .seconds(1), maxIterations: 10_000)
    ) { benchmark in
        var results: [Int32] = []
        results.reserveCapacity(64)
        var i = zoneCursor.query   // on through the 4,096 points from one iteration to the next
        for _ in benchmark.scaledIterations {
            zoneSet.query(millionPoints[i & 4095], into: &results)
            blackHole(results.count)
            i &+= 1
        }
        zoneCursor.query = i
        blackHole(mapped)
    }

    var monitor = RegionMonitor()
    monitor.add(contentsOf: GeofenceWorkload.regions(million))
    let drive = GeofenceWorkload.drive(count: 36_000, spread: .uniform)
    monitorBenchmark("RegionMonitor.process per fix, 1M circles", DrivenMonitor(monitor, drive: drive))

    // The agent's monitor: the zones are the mapped set (no catalog regions).
    var zoneMonitor = RegionMonitor()
    zoneMonitor.replaceZoneSet(zoneSet)
    monitorBenchmark("RegionMonitor.process per fix, 1M circles as a mapped zone set", DrivenMonitor(zoneMonitor, drive: drive, keeping: mapped))

    // The agent's monitor over a mapped set of 1M circles and 1,000 polygons of 10,000 vertices
    // (every other one on the drive's line): a fix costs the same whatever the vertex count.
    let mixedPath = "/tmp/fencepost-bench-mixed-\(getpid()).zones"
    let mixedFile: MappedFile = {
        var builder = ZoneSetBuilder()
        for (i, c) in million.enumerated() {
            builder.add(try! Region.circle("z\(i)", center: c.center, radius: c.radius), content: ZoneContent(title: "z\(i)"))
        }
        for region in GeofenceWorkload.polygons(count: 1_000, vertices: 10_000) {
            builder.add(region, content: ZoneContent(title: region.identifier))
        }
        let fd = try! FileDescriptor.createForWriting(mixedPath)
        let bytes = builder.finish(sourceHash: 0).bytes
        try! bytes.withUnsafeBytes { try fd.writeAll($0) }
        try! fd.close()
        let file = try! MappedFile(path: mixedPath)
        unlink(mixedPath)
        return file
    }()
    var mixedMonitor = RegionMonitor()
    mixedMonitor.replaceZoneSet(try! ZoneSet(mixedFile.bytes))
    monitorBenchmark("RegionMonitor.process per fix, 1M circles + 1k polygons of 10k vertices, mapped",
                     DrivenMonitor(mixedMonitor, drive: drive, keeping: mixedFile))

    // Its baseline: no index, every circle tested at every fix of the same drive.
    Benchmark(
        "Brute-force scan per fix, 1M circles (RegionMonitor baseline)",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal],
            warmupIterations: 1, scalingFactor: .one, maxDuration: .seconds(1), maxIterations: 1_000)
    ) { benchmark in
        var i = zoneCursor.scan
        for _ in benchmark.scaledIterations {
            if let p = drive[i % drive.count].coordinate { blackHole(GeofenceWorkload.bruteForceCount(million, p)) }
            i &+= 1
        }
        zoneCursor.scan = i
    }
}

/// A monitor driven along `drive` forwards then backwards (a U-turn at each end), the clock always
/// forwards; `keeping` is what its zone set is mapped from, kept alive as long as it runs.
final class DrivenMonitor: @unchecked Sendable {
    var monitor: RegionMonitor
    let drive: [Fix]
    let keeping: AnyObject?
    var step = 1, events = 0
    var found: [RegionEvent] = []

    init(_ monitor: RegionMonitor, drive: [Fix], keeping: AnyObject? = nil) {
        self.monitor = monitor; self.drive = drive; self.keeping = keeping
        found.reserveCapacity(64)
        self.monitor.process(drive[0], at: 0, into: &found)   // builds the index
    }

    /// One fix.
    @inline(__always)
    func next() {
        let phase = step % (2 * drive.count - 2)
        var fix = phase < drive.count ? drive[phase] : drive[2 * drive.count - 2 - phase]
        if phase >= drive.count { fix.course = fix.course.map { $0 + 180 } }
        found.removeAll(keepingCapacity: true)
        monitor.process(fix, at: Double(step), into: &found)
        events &+= found.count
        step += 1
    }
}

/// A benchmark of one ``DrivenMonitor`` fix per scaled iteration (1,000 per iteration).
func monitorBenchmark(_ name: String, _ run: DrivenMonitor) {
    Benchmark(
        name,
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal],
            warmupIterations: 3, scalingFactor: .kilo, maxDuration: .seconds(1), maxIterations: 1_000)
    ) { benchmark in
        for _ in benchmark.scaledIterations { run.next() }
    }
}
