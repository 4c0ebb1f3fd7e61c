// How fast deliveries reached the GPIO lines, kept in fixed-size histograms (a month of
// deliveries costs no more memory than the first).

/// Due → GPIO and fix → GPIO latencies of the deliveries whose signal began at once.
public struct DeliveryStatistics: Sendable {
    /// Due time → GPIO change, per timed delivery whose signal began at once.
    public private(set) var timed = LatencyHistogram()
    /// Fix arrival → GPIO change, per location delivery whose signal began at once.
    public private(set) var fix = LatencyHistogram()
    /// When the fix being processed arrived (latency of location deliveries).
    var fixArrival: UInt64?
    /// The deadline of the timer that woke the loop (latency of timed deliveries).
    var wakeDue: UInt64?

    public init() {}

    /// Counts a delivery signalled at `signalledAt` (boot-time nanoseconds): against the fix's
    /// arrival for a region event, else against the timer deadline that woke the loop; nothing
    /// when that instant is unknown (a delivery caused by a control request).
    mutating func recordSignal(regionEvent: Bool, signalledAt after: UInt64) {
        guard let due = regionEvent ? fixArrival : wakeDue else { return }
        let latency = after >= due ? after - due : 0
        if regionEvent { fix.record(latency) } else { timed.record(latency) }
    }

    /// The shutdown log lines: `latency due → GPIO over N deliveries: p50 … µs, p99 … µs, max … µs`.
    func summaryLines() -> [String] {
        var lines: [String] = []
        for (what, h) in [("due → GPIO", timed), ("fix → GPIO", fix)] {
            guard let p50 = h.percentile(0.5), let p99 = h.percentile(0.99), let max = h.maximum else { continue }
            lines.append("latency \(what) over \(h.count) deliveries: p50 \(Double(p50) / 1000) µs, p99 \(Double(p99) / 1000) µs, max \(Double(max) / 1000) µs")
        }
        return lines
    }
}
