// `fencepost bench`: the hot paths measured on the device itself, no toolchain needed. The cases,
// workloads and measuring loop are FencepostBenchHarness' (the same as `fencepost-agent --bench`'s
// and the Benchmarks/ package's); this file holds the options and the report.
import ArgumentParser
import FencepostAgent
import FencepostBenchHarness
import FencepostLinux

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the next-fire, geofence, NMEA and engine hot paths on this machine.",
        discussion: """
            Runs each case for about --seconds after a warm-up, in batches, and prints one row \
            per case as it finishes: the per-operation time at the 50th, 90th and 99th \
            percentile of the batch means, operations per second, and how much faster than its \
            baseline the case is. Build in release first: a debug build prints a warning, and \
            its figures are meaningless.

              swift build -c release && .build/release/fencepost bench
              fencepost bench --filter geofence --seconds 2
              fencepost bench --json > bench.json

            Cases (`fencepost bench --list` names them all):

            next-fire SHAPE, ZONE: CalendarSchedule.nextDate, one call per operation; five \
            trigger shapes (daily, weekly, monthly day 31, yearly Feb 29, hourly) in \
            Europe/Berlin; --all adds UTC, America/New_York and Australia/Lord_Howe.

            geofence index|brute force|haversine scan, uniform|clustered, 20|1k|100k: one \
            query per operation on the same circles and fixes in the same run. The index \
            (RegionIndex.query) is compared with the brute force, which tests every circle \
            with the index's own exact test (precomputed unit vectors and squared chords, four \
            circles per SIMD step); the haversine scan is the naive second baseline. --large \
            adds 1M (about 200 MB and a few seconds to build). The scans run at most 0.25 s at \
            100k and 0.5 s at 1M.

            nmea framer|framer+decoders: one sentence per operation, MB/s in the ops/s column. \
            A synthetic log (GGA, GSA, GSV, RMC, VTG at 1 Hz) of --nmea-size bytes, or your own \
            recorded logs with --nmea-log (repeated to --nmea-size).

            engine add+remove, 10k pending: NotificationEngine.add then removePending of one \
            calendar request while 10,000 stand.

            --filter keeps the cases whose name and size contain the text (case-insensitive; \
            repeat it for several). --json prints one JSON document instead of the table, with \
            the machine (CPU model, cores, kernel, load), the build configuration, the version, \
            every percentile, and a checksum of all results (it keeps the optimizer from \
            removing the work measured).

            Exit status: 0 success, 64 usage error (an unknown --filter), 65 the --nmea-log \
            files are empty, 66 a zone or --nmea-log file cannot be opened, 74 I/O error.
            """
    )

    @Option(help: ArgumentHelp("Time budget per case, after the warm-up.", valueName: "seconds"))
    var seconds = 1.0

    @Option(help: ArgumentHelp("Run only the cases whose name or size contains this text, in any case (repeatable).", valueName: "text"))
    var filter: [String] = []

    @Flag(help: "Next fire in all four workload zones, not only Europe/Berlin.")
    var all = false

    @Flag(help: "Add the 1M-region geofence cases (about 200 MB of memory).")
    var large = false

    @Option(help: ArgumentHelp("Size of the NMEA log, bytes.", valueName: "bytes"))
    var nmeaSize = 4_000_000

    @Option(help: ArgumentHelp("A recorded NMEA log to use instead of the synthetic one (repeatable).", valueName: "file"))
    var nmeaLog: [String] = []

    @Flag(help: "Print one JSON document instead of the table.")
    var json = false

    @Flag(help: "List the cases (after --all, --large, --filter) and exit.")
    var list = false

    func validate() throws {
        guard seconds > 0, seconds <= 3600 else { throw ValidationError("--seconds must be > 0 and at most 3600.") }
        guard nmeaSize >= 1_000, nmeaSize <= 1_000_000_000 else { throw ValidationError("--nmea-size must be 1000 … 1000000000 bytes.") }
    }

    func run() throws {
        do throws(ReplayFailure) {
            try bench()
        } catch {
            writeErrorLine("fencepost bench: \(error.message)")
            throw ExitCode(error.code)
        }
    }

    /// The cases selected by the flags and --filter.
    func selectedCases() throws(ReplayFailure) -> [BenchCase] {
        let every = BenchCatalog.cases(allZones: all, large: large, nmeaSize: nmeaSize)
        guard !filter.isEmpty else { return every }
        let needles = filter.map { $0.lowercased() }
        let chosen = every.filter { c in needles.contains { c.id.lowercased().contains($0) } }
        for needle in needles where !every.contains(where: { $0.id.lowercased().contains(needle) }) {
            func matches(allZones: Bool, large: Bool) -> Bool {
                BenchCatalog.cases(allZones: allZones, large: large, nmeaSize: nmeaSize).contains { $0.id.lowercased().contains(needle) }
            }
            let hint = matches(allZones: all, large: true) ? "it needs --large"
                : matches(allZones: true, large: large) ? "it needs --all"
                : matches(allZones: true, large: true) ? "it needs --all --large"
                : "`fencepost bench --list` names the cases"
            throw ReplayFailure(64, "no case matches --filter \"\(needle)\" (\(hint))")
        }
        return chosen
    }

    func bench() throws(ReplayFailure) {
        let cases = try selectedCases()
        var out = BufferedWriter(fd: .standardOutput)
        func emit(_ text: String) throws(ReplayFailure) {
            out.buffer.append(contentsOf: Array(text.utf8))
            do throws(Errno) { try out.flush() } catch { throw ReplayFailure(74, "cannot write standard output: \(error)") }
        }
        if list {
            for c in cases { try emit(c.id + "\n") }
            return
        }
        if buildConfiguration == "debug" { writeStandardError("fencepost bench: WARNING: \(debugWarning)\n") }

        let machine = MachineDescription.current()
        let date = SystemClocks.wallNow().description
        let table = BenchTable(cases: cases)
        if !json {
            var head = ""
            if buildConfiguration == "debug" { head += "*** WARNING: \(debugWarning) ***\n" }
            head += "fencepost \(fencepostVersion) (\(buildConfiguration)), \(date), \(machine.cpu), \(machine.cores) cores, \(machine.kernel.split(separator: " ").prefix(2).joined(separator: " ")) \(machine.architecture)"
            if !machine.loadAverage.isEmpty { head += ", load \(machine.loadAverage.map { BenchFormat.decimal($0, 2) }.joined(separator: " "))" }
            head += "\nper operation: percentiles of batch means over ~\(BenchFormat.decimal(seconds, 2)) s per case\n\n"
            try emit(head + table.header())
        }

        let inputs = BenchInputs(nmeaSize: nmeaSize, nmeaFiles: nmeaLog)
        var results: [BenchResult] = []
        var checksum: UInt64 = 0
        for c in cases {
            // The workload lives only inside this iteration.
            let prepared: PreparedBench
            do throws(BenchFailure) { prepared = try c.prepare(inputs) } catch { throw ReplayFailure(error.code, error.message) }
            let budget = min(seconds, c.budgetCap ?? seconds)
            let m = BenchHarness.measure(prepared.body, operationsPerIteration: prepared.operationsPerIteration, budget: budget)
            checksum &+= m.checksum
            var result = BenchResult(benchCase: c, operation: prepared.operation, bytesPerOperation: prepared.bytesPerOperation,
                                     details: prepared.details, measurement: m)
            if let base = c.baseline, let b = results.first(where: { $0.benchCase.id == base }) {
                result.speedup = b.measurement.p50 / m.p50
            }
            results.append(result)
            if !json { try emit(table.row(result)) }
        }
        if json {
            var bytes: [UInt8] = []
            BenchJSON.document(results: results, machine: machine, date: date, seconds: seconds, checksum: checksum)
                .serialize(into: &bytes)
            bytes.append(0x0A)
            out.buffer += bytes
            do throws(Errno) { try out.flush() } catch { throw ReplayFailure(74, "cannot write standard output: \(error)") }
        } else {
            try emit("\nchecksum \(BenchJSON.hex(checksum))\n")
        }
    }
}
