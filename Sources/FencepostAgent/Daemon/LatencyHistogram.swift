// A latency histogram of fixed size (design §8, "bounded everything"): the daemon records one
// sample per delivery for months, so it keeps counts per bucket, never the samples.
//
// Buckets are log-linear, as in HdrHistogram: values below 16 ns have a bucket each; above, each
// power of two [2^e, 2^(e+1)) is split into 16 equal buckets. A bucket's width is at most 1/16 of
// its lower bound, so a reported percentile is at most 6.25 % above the true sample (never below:
// the bucket's upper end is reported, clamped to the largest sample seen).
//
//   value range          bucket width
//   0 … 15 ns            1 ns (exact)
//   16 … 31 ns           1 ns
//   1 µs  (2^10)         64 ns
//   1 ms  (2^20)         65.5 µs
//   1 s   (2^30)         67 ms
//   every UInt64         976 buckets, 7.8 KB

/// Counts of nanosecond latencies in 976 log-linear buckets: O(1) record, O(buckets) percentile,
/// memory fixed whatever the number of samples.
public struct LatencyHistogram: Sendable {
    static let subBits = 4
    static let subCount = 1 << subBits
    /// 16 exact buckets, then 16 for each exponent 4 … 63.
    static let bucketCount = subCount + (64 - subBits) * subCount

    /// One counter per bucket: the histogram's whole memory, fixed at ``bucketCount``.
    private(set) var counts: [UInt64]
    /// Samples recorded.
    public private(set) var count: UInt64 = 0
    /// The largest and smallest sample (nil before the first).
    public private(set) var maximum: UInt64?
    public private(set) var minimum: UInt64?

    public init() { counts = [UInt64](repeating: 0, count: Self.bucketCount) }

    /// The bucket of `value`.
    static func bucket(of value: UInt64) -> Int {
        if value < UInt64(subCount) { return Int(value) }
        let exponent = 63 - value.leadingZeroBitCount            // ≥ subBits
        let sub = Int((value >> UInt64(exponent - subBits)) & UInt64(subCount - 1))
        return subCount + (exponent - subBits) * subCount + sub
    }

    /// The largest value that falls in `bucket`.
    static func upperBound(of bucket: Int) -> UInt64 {
        if bucket < subCount { return UInt64(bucket) }
        let exponent = (bucket - subCount) / subCount + subBits
        let sub = UInt64((bucket - subCount) % subCount)
        let width = UInt64(1) << UInt64(exponent - subBits)
        let lower = (UInt64(1) << UInt64(exponent)) + sub * width
        return lower &+ (width - 1)     // exponent 63, last bucket: UInt64.max
    }

    /// Counts one sample.
    /// - Complexity: O(1).
    public mutating func record(_ value: UInt64) {
        counts[Self.bucket(of: value)] += 1
        count += 1
        maximum = Swift.max(maximum ?? value, value)
        minimum = Swift.min(minimum ?? value, value)
    }

    /// The sample at rank `min(count − 1, ⌊count · p⌋)` in sorted order, as the upper end of its
    /// bucket (at most 6.25 % above it, never below), clamped to ``maximum``; nil when empty.
    /// - Complexity: O(buckets).
    public func percentile(_ p: Double) -> UInt64? {
        guard count > 0, let maximum else { return nil }
        let scaled = Double(count) * Swift.max(0, p)
        let rank = scaled >= Double(count) ? count - 1 : Swift.min(count - 1, UInt64(scaled))
        var seen: UInt64 = 0
        for (bucket, n) in counts.enumerated() where n > 0 {
            seen += n
            if seen > rank { return Swift.min(Self.upperBound(of: bucket), maximum) }
        }
        preconditionFailure("LatencyHistogram counts do not add up to count")
    }
}
