@testable import FencepostAgent
import SeededRandom
import Testing

/// The fixed-size latency histogram against the sorted samples it replaces.
struct LatencyHistogramTests {
    @Test func bucketsCoverEveryValueInOrder() {
        var previousUpper: UInt64? = nil
        for bucket in 0..<LatencyHistogram.bucketCount {
            let upper = LatencyHistogram.upperBound(of: bucket)
            #expect(LatencyHistogram.bucket(of: upper) == bucket, "bucket \(bucket)")
            if let p = previousUpper {
                #expect(LatencyHistogram.bucket(of: p + 1) == bucket, "bucket \(bucket) starts after \(p)")
            }
            previousUpper = upper
        }
        #expect(previousUpper == UInt64.max)
        #expect(LatencyHistogram.bucket(of: 0) == 0 && LatencyHistogram.bucket(of: UInt64.max) == LatencyHistogram.bucketCount - 1)
    }

    @Test(arguments: [1, 2, 3, 7, 100, 2_026])
    func percentilesAgreeWithSortedSamplesWithinABucket(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var h = LatencyHistogram()
        var samples: [UInt64] = []
        let n = rng.int(1...5_000)
        for _ in 0..<n {
            // Latencies from a few ns to minutes, log-uniform, as a month of deliveries spreads.
            let v = rng.below(1 << UInt64(rng.int(1...40)))
            samples.append(v)
            h.record(v)
        }
        samples.sort()
        #expect(h.count == UInt64(n) && h.maximum == samples.last && h.minimum == samples.first)
        for p in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
            let truth = samples[min(samples.count - 1, Int(Double(samples.count) * p))]
            let reported = h.percentile(p)!
            #expect(reported >= truth, "seed \(seed) p\(p): \(reported) < \(truth)")
            #expect(Double(reported) <= Double(truth) * (1 + 1.0 / 16) + 1, "seed \(seed) p\(p): \(reported) ≫ \(truth)")
        }
    }

    @Test func memoryDoesNotGrowWithSamples() {
        var h = LatencyHistogram()
        #expect(h.percentile(0.5) == nil)
        for i in 0..<1_000_000 { h.record(UInt64(i % 50_000) * 1_000) }
        #expect(h.count == 1_000_000)
        // 976 counters whatever the count (the old array held a million samples here).
        #expect(LatencyHistogram.bucketCount == 976)
        #expect(h.counts.count == LatencyHistogram.bucketCount)
        #expect(h.counts.capacity <= 2 * LatencyHistogram.bucketCount)
        var s = DeliveryStatistics()
        s.wakeDue = 1_000
        s.recordSignal(regionEvent: false, signalledAt: 251_000)
        s.recordSignal(regionEvent: true, signalledAt: 9_999)   // no fix arrival known: not counted
        #expect(s.timed.count == 1 && s.fix.count == 0)
        #expect(s.summaryLines() == ["latency due → GPIO over 1 deliveries: p50 250.0 µs, p99 250.0 µs, max 250.0 µs"])
    }
}
