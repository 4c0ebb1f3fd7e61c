// What `fencepost bench` prints: the aligned table (row by row, as cases finish), the JSON
// document, and the machine the figures were measured on.
import FencepostAgent
import FencepostBenchHarness
import FencepostJSON
import FencepostLinux

/// How the binary was compiled: figures of a debug build say nothing about the device.
#if DEBUG
let buildConfiguration = "debug"
#else
let buildConfiguration = "release"
#endif

/// The machine a run measured.
struct MachineDescription {
    /// From /proc/cpuinfo: "model name" (x86), else "Model" (Raspberry Pi), else "Hardware",
    /// else "CPU part"; "unknown" when none is there.
    var cpu: String
    var cores: Int
    var kernel: String
    var architecture: String
    /// /proc/loadavg's 1, 5 and 15 minute figures, when readable.
    var loadAverage: [Double]

    static func current() -> MachineDescription {
        let kernel = try? MachineInfo.kernel()
        return MachineDescription(
            cpu: cpuModel(procText("/proc/cpuinfo") ?? ""), cores: MachineInfo.onlineProcessors(),
            kernel: kernel.map { "\($0.system) \($0.release) \($0.version)" } ?? "unknown",
            architecture: kernel?.machine ?? "unknown",
            loadAverage: (procText("/proc/loadavg") ?? "").split(separator: " ").prefix(3).compactMap { Double($0) })
    }

    /// The CPU's name in a /proc/cpuinfo text.
    static func cpuModel(_ cpuinfo: String) -> String {
        var fields: [String: String] = [:]
        for line in cpuinfo.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingSpaces, value = line[line.index(after: colon)...].trimmingSpaces
            if fields[key] == nil, !value.isEmpty { fields[key] = value }
        }
        for key in ["model name", "Model", "Hardware", "cpu model", "CPU part"] {
            if let v = fields[key] { return key == "CPU part" ? "CPU part \(v)" : v }
        }
        return "unknown"
    }

    private static func procText(_ path: String) -> String? {
        (try? FileDescriptor.readFile(path)).map { String(decoding: $0, as: UTF8.self) }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// A measured case, with what it is compared with. Holds no workload: the circles, index and
/// log of a case are freed once it has been measured (1M regions are ~200 MB).
struct BenchResult {
    var benchCase: BenchCase
    /// The case's ``PreparedBench`` facts, its body dropped.
    var operation: String
    var bytesPerOperation: Double?
    var details: [(key: String, value: JSONValue)]
    var measurement: BenchMeasurement
    /// The baseline's p50 divided by this case's p50, when the baseline ran.
    var speedup: Double?
}

/// The aligned table, printed a row at a time.
struct BenchTable {
    static let headers = ["case", "size", "p50", "p90", "p99", "ops/s", "vs baseline"]
    var widths: [Int]

    /// Widths for these cases: the case column fits the longest name.
    init(cases: [BenchCase]) {
        widths = [max(4, cases.map(\.name.count).max() ?? 0), max(4, cases.map(\.size.count).max() ?? 0),
                  9, 9, 9, 20, 22]
    }

    func header() -> String {
        line(Self.headers) + "\n" + widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
    }

    func row(_ r: BenchResult) -> String {
        let m = r.measurement
        var ops = BenchFormat.rate(m.operationsPerSecond)
        if let b = r.bytesPerOperation { ops += " (" + BenchFormat.decimal(m.operationsPerSecond * b / 1e6, 1) + " MB/s)" }
        var versus = ""
        if let s = r.speedup, let base = r.benchCase.baseline {
            versus = BenchFormat.ratio(s) + (base.contains("brute force") ? " vs brute force" : " vs \(base)")
        } else if r.benchCase.name.contains("brute force") {
            versus = "(baseline)"
        } else if r.benchCase.name.contains("haversine") {
            versus = "(naive baseline)"
        }
        return line([r.benchCase.name, r.benchCase.size, BenchFormat.duration(m.p50), BenchFormat.duration(m.p90),
                     BenchFormat.duration(m.p99), ops, versus]) + "\n"
    }

    /// Text columns left-aligned, figures right-aligned; no trailing spaces.
    private func line(_ cells: [String]) -> String {
        var out = ""
        for (i, cell) in cells.enumerated() {
            let pad = String(repeating: " ", count: max(0, widths[i] - cell.count))
            if i > 0 { out += "  " }
            out += (i < 2 || i == 6) ? cell + pad : pad + cell
        }
        while out.last == " " { out.removeLast() }
        return out
    }
}

enum BenchJSON {
    /// The whole run as one JSON document.
    static func document(results: [BenchResult], machine: MachineDescription, date: String, seconds: Double,
                         checksum: UInt64) -> JSONValue {
        var top: [(key: String, value: JSONValue)] = [
            ("fencepost", .string(fencepostVersion)),
            ("configuration", .string(buildConfiguration)),
        ]
        if buildConfiguration == "debug" { top.append(("warning", .string(debugWarning))) }
        top += [
            ("date", .string(date)),
            ("secondsPerCase", .number(seconds)),
            ("machine", .object([
                ("cpu", .string(machine.cpu)), ("cores", .integer(Int64(machine.cores))),
                ("kernel", .string(machine.kernel)), ("architecture", .string(machine.architecture)),
                ("loadAverage", .array(machine.loadAverage.map { .number($0) })),
            ])),
            ("cases", .array(results.map(caseValue))),
            ("checksum", .string(hex(checksum))),
        ]
        return .object(top)
    }

    static func caseValue(_ r: BenchResult) -> JSONValue {
        let m = r.measurement
        var fields: [(key: String, value: JSONValue)] = [
            ("case", .string(r.benchCase.id)), ("name", .string(r.benchCase.name)), ("size", .string(r.benchCase.size)),
            ("operation", .string(r.operation)),
            ("batches", .integer(Int64(m.batches))), ("operations", .integer(Int64(m.operations))),
            ("seconds", .number(m.seconds)),
            ("nsPerOperation", .object([("p50", .number(m.p50)), ("p90", .number(m.p90)), ("p99", .number(m.p99)),
                                        ("min", .number(m.min)), ("mean", .number(m.mean))])),
            ("operationsPerSecond", .number(m.operationsPerSecond)),
        ]
        if let b = r.bytesPerOperation { fields.append(("megabytesPerSecond", .number(m.operationsPerSecond * b / 1e6))) }
        if let base = r.benchCase.baseline { fields.append(("baseline", .string(base))) }
        if let s = r.speedup { fields.append(("speedupOverBaseline", .number(s))) }
        fields += r.details
        fields.append(("checksum", .string(hex(m.checksum))))
        return .object(fields)
    }

    static func hex(_ v: UInt64) -> String { "0x" + v.hexDigits }
}

let debugWarning = "DEBUG BUILD: these figures are meaningless (no optimization, invariant checks on). Build with `swift build -c release` and run .build/release/fencepost bench."
