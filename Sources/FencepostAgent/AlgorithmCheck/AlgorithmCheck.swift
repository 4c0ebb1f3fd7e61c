// `fencepost-agent --check-algorithms`: seeded checks of the cores against simple references, compiled
// into the same binary that runs on the board. Its last line is a digest of every answer, so two
// builds (host, Embedded Swift x86_64, aarch64 under qemu) can be compared by one line: a
// difference in floating point, byte order or word size changes it.
import FencepostJSON
import FencepostLinux
import SeededRandom

/// The algorithm check's running total: answers go into an FNV-1a 64 digest, differences are counted.
public struct AlgorithmCheckDigest {
    /// The FNV-1a 64 hash of every answer so far.
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
    /// How many answers disagreed with their reference.
    public private(set) var differences = 0
    /// The first few disagreements, for the report.
    public private(set) var firstDifferences: [String] = []

    public init() {}

    /// Adds one answer (its 8 bytes, little-endian, whatever the machine's byte order).
    public mutating func add(_ x: UInt64) {
        var v = x.littleEndian
        for _ in 0 ..< 8 {
            value = (value ^ (v & 0xff)) &* 0x100_0000_01b3
            v >>= 8
        }
    }

    /// Adds a signed answer.
    public mutating func add(_ x: Int64) { add(UInt64(bitPattern: x)) }

    /// Adds a floating-point answer by its bit pattern.
    public mutating func add(_ x: Double) { add(x.bitPattern) }

    /// Records a disagreement with its reference.
    public mutating func difference(_ what: String) {
        differences += 1
        if firstDifferences.count < 10 { firstDifferences.append(what) }
    }
}

/// The seeded core checks of `fencepost-agent --check-algorithms`.
public enum AlgorithmCheck {
    /// The seed of every check (printed; `--check-algorithms --seed N` picks another).
    public static let defaultSeed: UInt64 = 20_260_101

    /// Parses the check's one option, `--seed N`; `command` names the check in messages.
    public static func parseSeed(_ arguments: [String], command: String) throws(UsageError) -> UInt64 {
        var seed = defaultSeed
        var reader = ArgumentReader(arguments)
        while let a = reader.next() {
            guard a == "--seed" else { throw ArgumentReader.unexpected(a, command: command) }
            guard let n = UInt64(try reader.value(of: a, example: "a number: \(command) --seed 42")) else {
                throw UsageError("--seed needs a number: \(command) --seed 42")
            }
            seed = n
        }
        return seed
    }

    /// Runs every check and prints the report on standard output; returns the exit status: 0 all
    /// agree, 1 not.
    public static func report(seed: UInt64) -> Int32 {
        let report = run(seed: seed)
        for line in report.lines { try? FileDescriptor.standardOutput.writeAll(line + "\n") }
        return report.passed ? 0 : 1
    }

    /// Parses `arguments` (after the command) and runs the checks; returns the exit status (64: usage).
    public static func run(_ arguments: [String], program: String, command: String) -> Int32 {
        switch Result(catching: { () throws(UsageError) in try parseSeed(arguments, command: command) }) {
        case .success(let seed): return report(seed: seed)
        case .failure(let error): return error.report(program: program, usage: "\(program) [--seed N]")
        }
    }

    /// Runs every check; returns the report's lines (the last is the digest) and whether all agreed.
    /// - Complexity: about a second on a Raspberry Pi 4; no I/O (the zones are built-in POSIX rules).
    public static func run(seed: UInt64 = defaultSeed) -> (lines: [String], passed: Bool) {
        var lines = ["check-algorithms: seed \(seed)"]
        var total = AlgorithmCheckDigest()
        // Not in the digest: the same on every build that passes.
        let runtimeKeepsBits = RuntimeCheck.bridgeObjectRetainKeepsBits
        lines.append("runtime: swift_bridgeObjectRetain returns its argument: \(runtimeKeepsBits ? "ok" : "FAILED: it masks the tag bits off (small strings are corrupted)")")
        let checks: [(String, (UInt64, inout AlgorithmCheckDigest) -> Int)] = [
            ("next fire vs brute force (DST zones)", AlgorithmCheckCalendar.run),
            ("geofence index vs brute-force scan", AlgorithmCheckGeofence.run),
            ("timing wheel vs sorted reference", AlgorithmCheckWheel.run),
            ("NMEA snippet vs its known fixes", AlgorithmCheckNMEA.run),
        ]
        for (index, (name, check)) in checks.enumerated() {
            var digest = AlgorithmCheckDigest()
            var stream = SplitMix64.stream(seed: seed, index: UInt64(index))
            let cases = check(stream.next(), &digest)
            let verdict = digest.differences == 0 ? "ok" : "FAILED: \(digest.differences) differences"
            lines.append("\(name): \(cases) cases, \(verdict) (digest \(digest.value.hexDigits))")
            for d in digest.firstDifferences { lines.append("  \(d)") }
            total.add(digest.value)
            if digest.differences > 0 { total.difference(name) }
        }
        lines.append("digest \(total.value.hexDigits)")
        return (lines, total.differences == 0 && runtimeKeepsBits)
    }
}
