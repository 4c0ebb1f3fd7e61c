// The measuring harness of `fencepost bench` and `fencepost-agent --bench`: small, by hand, so that
// it runs on the device without a toolchain and without Foundation (the Embedded build too).
//
// How a case is measured:
//   1. Calibrate (this is also the warm-up): run the body once, untimed (cold), then with
//      1, 2, 4 … iterations (growing by up to ×10 at a time) until one
//      batch takes at least the target batch time (100 µs; a batch that
//      reaches it is timed again and the faster of the two counts, against preemption), so that the two
//      clock reads around a batch (~25 ns each, vDSO) are noise (0.05 %). Then one more batch at
//      that size, not counted, to warm caches and branch predictors at the final batch size.
//
//      Why 100 µs and not longer: on a shared machine another process takes the core for a time
//      slice of a few milliseconds. Batches of 5 ms (budget / 200) are nearly all preempted
//      under load, so their median carries the other process's share: 1.7–2× the figures of the
//      Benchmarks/ package, whose iterations are ~100 µs and whose median leaves the preempted
//      ones out (Benchmarks/log/NOTES.md). Short batches make the median a figure of the code;
//      the preempted ones move p90/p99.
//   2. Measure: repeat batches of that size until the case's time budget is used, and at least
//      `minimumBatches` times. Each batch gives one figure: its time divided by its operations
//      (the batch mean).
//   3. Report p50/p90/p99 (nearest rank) and min over the batch means, the mean over all
//      operations, and operations per second (all operations / all measured time).
//
// Percentiles over batch means, not single operations: timing one 50 ns call costs as much as the
// call. The spread a batch mean hides (one slow call among 10,000) is what p90/p99 across batches
// cannot show either; the Benchmarks/ package (ordo-one/package-benchmark) remains the tool for
// that kind of question.
//
// Black hole: each body returns a value derived from every result it computed (a sum of instants,
// of hit counts, of sentence lengths); the harness folds these into a checksum that is printed
// (`--json`, and the table's last line). The optimizer cannot drop work whose result is printed.
// Clock: CLOCK_BOOTTIME through FencepostLinux's SystemClocks (monotonic, never set).
import CivilTime
import FencepostLinux

/// The measured code of a case: performs `iterations` iterations and returns a value folded from
/// their results (the black hole).
public typealias BenchBody = (_ iterations: Int) -> UInt64

/// What one case measured. Times are nanoseconds per operation.
public struct BenchMeasurement {
    /// Batches measured (calibration and warm-up excluded).
    public var batches: Int
    /// Operations measured in all batches.
    public var operations: Int
    /// Measured time, all batches, seconds.
    public var seconds: Double
    public var p50: Double
    public var p90: Double
    public var p99: Double
    public var min: Double
    /// All measured time over all operations.
    public var mean: Double
    public var operationsPerSecond: Double
    /// The folded results of every batch, warm-up included.
    public var checksum: UInt64
}

/// The measuring loop (the file's header says how).
public enum BenchHarness {
    /// Fewest batches measured, whatever the budget (a 30 ms brute-force query at 1M regions).
    static let minimumBatches = 3
    /// The longest a batch is made (seconds): shorter than a scheduler's time slice, so that most
    /// batches run unpreempted on a loaded machine (see the file's header).
    static let targetBatchSeconds = 100e-6

    /// Measures `body` for about `budget` seconds.
    /// - Parameter operationsPerIteration: how many of the reported operations one iteration is
    ///   (sentences in one pass over a log; 1 otherwise).
    public static func measure(_ body: BenchBody, operationsPerIteration: Int = 1, budget: Double) -> BenchMeasurement {
        let targetBatch = min(max(budget / 200, 20e-6), Self.targetBatchSeconds)
        var checksum: UInt64 = 0

        // 1. Warm-up and calibration. The very first call is cold (page faults, lazy
        // initialization) and would stop the calibration at one iteration: it is not timed.
        checksum &+= body(1)
        var iterations = 1
        while true {
            var (t, c) = time(body, iterations)
            checksum &+= c
            if t >= targetBatch {
                // Confirm: on a loaded machine one batch may have been preempted.
                let again = time(body, iterations)
                checksum &+= again.checksum
                t = Swift.min(t, again.seconds)
            }
            if t >= targetBatch / 2 || iterations >= 1 << 40 { break }
            // Grow by the missing factor, at most ×10 at a time (the first batches are cold).
            let factor = t > 0 ? Swift.min(10, Swift.max(2, targetBatch / t)) : 10
            iterations = Int((Double(iterations) * factor).rounded(.up))
        }
        checksum &+= time(body, iterations).checksum

        // 2. Measurement.
        var means: [Double] = []
        var total = 0.0
        while total < budget || means.count < minimumBatches {
            let (t, c) = time(body, iterations)
            checksum &+= c
            total += t
            means.append(t * 1e9 / Double(iterations * operationsPerIteration))
        }

        // 3. Report.
        means.sort()
        let operations = means.count * iterations * operationsPerIteration
        return BenchMeasurement(
            batches: means.count, operations: operations, seconds: total,
            p50: percentile(means, 50), p90: percentile(means, 90), p99: percentile(means, 99),
            min: means[0], mean: total * 1e9 / Double(operations),
            operationsPerSecond: Double(operations) / total, checksum: checksum)
    }

    /// The nearest-rank `p`th percentile of `sorted` (not empty).
    static func percentile(_ sorted: [Double], _ p: Int) -> Double {
        let rank = (p * sorted.count + 99) / 100   // ⌈p·n/100⌉, 1-based
        return sorted[Swift.max(0, Swift.min(sorted.count - 1, rank - 1))]
    }

    /// Seconds taken by `body(iterations)`, and its result.
    private static func time(_ body: BenchBody, _ iterations: Int) -> (seconds: Double, checksum: UInt64) {
        let start = SystemClocks.boottimeNow().nanosecondsSinceBoot
        let c = body(iterations)
        let end = SystemClocks.boottimeNow().nanosecondsSinceBoot
        return (Double(end &- start) * 1e-9, c)
    }
}
