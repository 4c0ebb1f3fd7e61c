// A recorded drive replayed at a speed from the moment the daemon starts: each fix is due at its
// offset from the first divided by the speed. It has no descriptor: the loop's timer wakes it.
import CivilTime
import FencepostLinux
import Geofencing
import Position

/// `[gps] source = "replay"`.
final class ReplayGPSSource: GPSSource {
    let name: String
    let fixes: [Fix]
    let speed: Double
    /// End the daemon after the last fix.
    let exitAtEnd: Bool
    private var index = 0
    private var startedAt: UInt64 = 0

    init(name: String, fixes: [Fix], speed: Double, exitAtEnd: Bool) {
        self.name = name
        self.fixes = fixes
        self.speed = speed
        self.exitAtEnd = exitAtEnd
    }

    var descriptor: FileDescriptor? { nil }
    var isConnected: Bool { index < fixes.count }
    var description: String { "replay of \(name) (\(fixes.count) fixes) at \(speed)×" }
    var finished: Bool { exitAtEnd && index >= fixes.count }
    /// A recording: its dates are history, not a receiver's week-rollover bug.
    var isLive: Bool { false }

    var nextDeadline: UInt64? {
        guard index < fixes.count, let t0 = fixes.first?.secondsSinceEpoch, let t = fixes[index].secondsSinceEpoch else { return nil }
        return due(t - t0)
    }

    /// When a fix `offset` seconds into the replay is due (saturating: a log spanning centuries at
    /// a low speed is due never, not a trap).
    private func due(_ offset: Double) -> UInt64 {
        SaturatingTime.add(startedAt, SaturatingTime.nanosecondsRoundedUp(offset / speed))
    }

    func start(at now: UInt64) { startedAt = now }

    func handleDeadline(at now: UInt64) -> [Fix] {
        guard let t0 = fixes.first?.secondsSinceEpoch else { return [] }
        var out: [Fix] = []
        while index < fixes.count, let t = fixes[index].secondsSinceEpoch, due(t - t0) <= now {
            out.append(fixes[index])
            index += 1
        }
        return out
    }

    func handleReadable(at now: UInt64, hangup: Bool, counters: inout GPSDiagnostics) -> [Fix] { [] }

    func close() {}
}
