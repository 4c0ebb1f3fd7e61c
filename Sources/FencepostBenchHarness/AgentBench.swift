// `fencepost-agent --bench`: the agent's hot paths timed inside the agent's own binary, so that the
// Embedded Swift build (board/cross-build) and the normal build can be compared on one machine in
// one run, operation for operation (Benchmarks/README.md, "Embedded Swift build").
//
// The cases are ``BenchCatalog``'s, measured by ``BenchHarness`` — the same as `fencepost bench`'s
// rows of the same name — picked to need neither Foundation nor the CLI: next fire (its zone from
// a built-in POSIX rule, so a board without tzdata measures the same thing), the geofence index at
// 100k circles, and NMEA framing and decoding.
import FencepostJSON
import FencepostLinux

/// The timed cases of `fencepost-agent --bench`.
public enum AgentBench {
    /// The cases, in run order.
    public static func cases() -> [BenchCase] {
        var list: [BenchCase] = []
        if let daily = NextFireWorkload.shapes.first { list.append(BenchCatalog.nextFire(daily, "Europe/Berlin")) }
        // The index; the two scans of the family are `fencepost bench`'s baselines.
        if let index = BenchCatalog.geofence(100_000, .uniform).last { list.append(index) }
        if let decoders = BenchCatalog.nmea(size: 4_000_000).last { list.append(decoders) }
        return list
    }

    /// Runs every case for about `seconds` each and prints one line per case on standard output,
    /// as it finishes: `ID: P50 ns/op[, MB/s] (checksum HEX)`. Returns the exit status (0, or the
    /// failure's when a case cannot be prepared).
    /// - Complexity: building the 100k index and the 4 MB log take about a second on a Pi 4.
    @export(interface)
    public static func run(seconds: Double) -> Int32 {
        let inputs = BenchInputs(nmeaSize: 4_000_000, nmeaFiles: [], builtInZones: true)
        for c in cases() {
            let prepared: PreparedBench
            do throws(BenchFailure) { prepared = try c.prepare(inputs) } catch {
                try? FileDescriptor.standardError.writeAll("fencepost-agent --bench: \(c.id): \(error.message)\n")
                return error.code
            }
            let m = BenchHarness.measure(prepared.body, operationsPerIteration: prepared.operationsPerIteration,
                                         budget: min(seconds, c.budgetCap ?? seconds))
            try? FileDescriptor.standardOutput.writeAll(line(c.id, m, bytesPerOperation: prepared.bytesPerOperation) + "\n")
        }
        return 0
    }

    /// One case's line.
    static func line(_ id: String, _ m: BenchMeasurement, bytesPerOperation: Double?) -> String {
        var line = "\(id): \(figure(m.p50)) ns/op"
        if let bytes = bytesPerOperation, m.p50 > 0 { line += ", \(figure(bytes * 1000 / m.p50)) MB/s" }
        return line + " (checksum \(m.checksum.hexDigits))"
    }

    /// Three significant figures or so.
    static func figure(_ x: Double) -> String {
        guard x.isFinite else { return "n/a" }
        return BenchFormat.decimal(x, x >= 100 ? 0 : x >= 10 ? 1 : 2)
    }
}
