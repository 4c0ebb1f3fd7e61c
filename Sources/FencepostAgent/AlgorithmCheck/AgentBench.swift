// `fencepost-agent --bench`: the agent's hot paths timed inside the agent's own binary, so that
// the Embedded Swift build (board/cross-build) and the normal build can be compared on one machine
// in one run, operation for operation (Benchmarks/README.md, "Embedded Swift build").
//
// The reference figures stay those of the Benchmarks/ package (ordo-one/benchmark) and of
// `fencepost bench`; this is their subset that needs neither Foundation nor the CLI, on the same
// seeded workloads (FencepostWorkloads). Next fire uses a POSIX rule for Europe/Berlin rather than
// the zone file, so a board without tzdata measures the same thing.
import CivilTime
import FencepostLinux
import FencepostWorkloads
import Geofencing
import NMEA
import Position

/// The timed cases of `fencepost-agent --bench`.
public enum AgentBench {
    /// One measured case.
    public struct Measurement {
        public var name: String
        /// Median over the batches of nanoseconds per operation.
        public var nanosecondsPerOperation: Double
        /// Bytes per operation, for cases measured in MB/s (0 otherwise).
        public var bytesPerOperation: Double
        /// Folded answers: printed, so the optimizer cannot drop the work.
        public var checksum: UInt64
    }

    /// Runs every case for about `seconds` each; one line per case, in a fixed format that
    /// `Benchmarks/agent/embedded.sh` reads.
    /// - Complexity: building the 100k index and the 4 MB log take about a second on a Pi 4.
    public static func run(seconds: Double = 1) -> [Measurement] {
        var out: [Measurement] = []
        out.append(nextFire(seconds: seconds))
        out.append(geofence(count: 100_000, seconds: seconds))
        out.append(nmea(seconds: seconds))
        return out
    }

    /// Parses the bench's one option, `--seconds S` (0 < S ≤ 3600, default 1).
    public static func parseSeconds(_ arguments: [String], command: String) throws(UsageError) -> Double {
        var seconds = 1.0
        var reader = ArgumentReader(arguments)
        while let a = reader.next() {
            guard a == "--seconds" else { throw ArgumentReader.unexpected(a, command: command) }
            let message = "a duration in seconds, 0 < S ≤ 3600: \(command) --seconds 2"
            guard let s = Double(try reader.value(of: a, example: message)), s > 0, s <= 3600 else {
                throw UsageError("--seconds needs \(message)")
            }
            seconds = s
        }
        return seconds
    }

    /// The report's text lines.
    public static func lines(_ measurements: [Measurement]) -> [String] {
        measurements.map { m in
            var line = "\(m.name): \(format(m.nanosecondsPerOperation)) ns/op"
            if m.bytesPerOperation > 0 {
                line += ", \(format(m.bytesPerOperation * 1000 / m.nanosecondsPerOperation)) MB/s"
            }
            return line + " (checksum \(AlgorithmCheck.hex(m.checksum)))"
        }
    }

    // MARK: Cases

    /// `CalendarSchedule.nextDate(after:in:)`, daily 07:00 in Europe/Berlin, on the 4,096 seeded starts.
    static func nextFire(seconds: Double) -> Measurement {
        let zone = try? ZoneRules(posixTZ: "CET-1CEST,M3.5.0,M10.5.0/3")
        let schedule = try? CalendarSchedule(CalendarMatch(hour: 7, minute: 0))
        let starts = NextFireWorkload.starts(count: 4096)
        guard let zone, let schedule else { return Measurement(name: "next-fire daily 07:00, Europe/Berlin", nanosecondsPerOperation: .nan, bytesPerOperation: 0, checksum: 0) }
        var i = 0
        let (ns, sum) = measure(seconds: seconds) { n in
            var sum: UInt64 = 0
            for _ in 0 ..< n {
                if let d = schedule.nextDate(after: starts[i & 4095], in: zone) { sum &+= UInt64(bitPattern: d.secondsSinceEpoch) }
                i &+= 1
            }
            return sum
        }
        return Measurement(name: "next-fire daily 07:00, Europe/Berlin", nanosecondsPerOperation: ns, bytesPerOperation: 0, checksum: sum)
    }

    /// One ``RegionIndex/query(_:margin:into:)`` among `count` circles (uniform over Germany).
    static func geofence(count: Int, seconds: Double) -> Measurement {
        let circles = GeofenceWorkload.circles(count: count, spread: .uniform)
        let queries = GeofenceWorkload.queries(count: 4096, spread: .uniform, near: circles)
        let index = GeofenceWorkload.index(circles)
        var results: [Int32] = []
        results.reserveCapacity(64)
        var i = 0
        let (ns, sum) = measure(seconds: seconds) { n in
            var sum: UInt64 = 0
            for _ in 0 ..< n {
                index.query(queries[i & 4095], into: &results)
                sum &+= UInt64(results.count)
                i &+= 1
            }
            return sum
        }
        return Measurement(name: "geofence index query, \(count) circles", nanosecondsPerOperation: ns, bytesPerOperation: 0, checksum: sum)
    }

    /// The framer, decoders and epoch assembler over a synthetic 4 MB log; one operation is one
    /// sentence, so MB/s is bytes per sentence over time per sentence.
    static func nmea(seconds: Double) -> Measurement {
        let log = NMEAWorkload.syntheticLog(size: 4_000_000)
        var sentences = 0
        for b in log where b == UInt8(ascii: "\n") { sentences += 1 }
        sentences = max(1, sentences)
        let (ns, sum) = measure(seconds: seconds, operationsPerCall: sentences) { n in
            var sum: UInt64 = 0
            for _ in 0 ..< n {
                var stream = NMEAStream()
                log.withUnsafeBytes { bytes in stream.feed(bytes) { _ in sum &+= 1 } }
            }
            return sum
        }
        return Measurement(name: "nmea framer+decoders+assembler, 4.0 MB", nanosecondsPerOperation: ns,
                           bytesPerOperation: Double(log.count) / Double(sentences), checksum: sum)
    }

    // MARK: Harness

    /// Calls `body(n)` in batches sized to about 5 ms after a warm-up, for about `seconds`; returns
    /// the median over the batches of nanoseconds per operation (`operationsPerCall` operations per
    /// unit of `n`) and the folded checksum. The clock is CLOCK_BOOTTIME, read once per batch.
    static func measure(seconds: Double, operationsPerCall: Int = 1, _ body: (Int) -> UInt64) -> (Double, UInt64) {
        var checksum = body(1)
        var n = 1
        while true {
            let start = SystemClocks.boottimeNow().nanosecondsSinceBoot
            checksum &+= body(n)
            let took = SystemClocks.boottimeNow().nanosecondsSinceBoot &- start
            if took >= 5_000_000 || n >= 1 << 30 { break }
            n *= 2
        }
        let budget = UInt64(seconds * 1e9)
        var perOperation: [Double] = []
        let begin = SystemClocks.boottimeNow().nanosecondsSinceBoot
        while perOperation.count < 3 || SystemClocks.boottimeNow().nanosecondsSinceBoot &- begin < budget {
            let start = SystemClocks.boottimeNow().nanosecondsSinceBoot
            checksum &+= body(n)
            let took = SystemClocks.boottimeNow().nanosecondsSinceBoot &- start
            perOperation.append(Double(took) / Double(n * operationsPerCall))
        }
        perOperation.sort()
        return (perOperation[perOperation.count / 2], checksum)
    }

    /// A figure with three significant digits (no Foundation formatting in Embedded Swift).
    static func format(_ x: Double) -> String {
        guard x.isFinite else { return "n/a" }
        if x >= 100 { return "\(Int(x.rounded()))" }
        let scaled = (x * (x >= 10 ? 10 : 100)).rounded()
        let whole = Int(scaled) / (x >= 10 ? 10 : 100), frac = Int(scaled) % (x >= 10 ? 10 : 100)
        let fracText = x >= 10 ? "\(frac)" : (frac < 10 ? "0\(frac)" : "\(frac)")
        return "\(whole).\(fracText)"
    }
}
