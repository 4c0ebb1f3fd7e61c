// What the daemon measures about itself while it runs: since when, the latencies of its
// deliveries (due → GPIO, fix → GPIO: fixed-size histograms) and how long its loop turns take.
// Logged at the end (summaryLines) and shown by `status` (the start instants).
import CivilTime

/// The daemon's own figures.
public struct DaemonStatistics {
    public let startedWall: WallInstant
    public let startedMonotonic: MonotonicInstant
    /// Due → GPIO and fix → GPIO latencies.
    public internal(set) var deliveries = DeliveryStatistics()
    /// How long loop turns take and on what; the warnings about slow ones.
    var turns = LoopTurnWatch()

    init(startedWall: WallInstant, startedMonotonic: MonotonicInstant) {
        self.startedWall = startedWall
        self.startedMonotonic = startedMonotonic
    }

    /// The lines logged at shutdown: the latencies, then the longest loop turn.
    func summaryLines() -> [String] {
        var lines = deliveries.summaryLines()
        if let l = turns.summary { lines.append(l) }
        return lines
    }
}
