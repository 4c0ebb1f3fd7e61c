// GNSS time as the agent's wall clock (`clock_trust = "gnss"`), for a board with no RTC and no
// network, whose system clock may be off by years.
//
// Choice: the agent keeps its own wall time, GNSS time anchored to CLOCK_BOOTTIME, and does not
// set or discipline the system clock. Why:
//   - It works with what the unit has: the service runs without CAP_SYS_TIME (hardening), and a
//     minimal board has no chrony. Calendar triggers depend only on this process and the receiver.
//   - CLOCK_BOOTTIME is never set and counts suspend, so the wall time derived from it cannot be
//     stepped by anybody else (a tester's `date -s`, a late NTP) between two fixes.
//   - Disciplining the system clock is a separate job with a standard tool: gpsd feeds chrony
//     (`refclock SOCK /run/chrony.ttyS0.sock` or SHM), which the README shows. When chrony has
//     synchronised the system clock, the two agree, and `status` shows the offset between them.
//
// Estimation: a fix is stamped with its GNSS time (the start of the epoch) and arrives later
// (serial transmission, the receiver's own latency: tens to hundreds of ms, always ≥ 0). Each fix
// gives a sample `gnss − boottime at arrival`, which is at most the true offset; the estimate is
// the largest sample of the last minute (the least delayed one), re-chosen every minute so that
// the crystal's drift against GNSS time (≤ 50 ppm: 3 ms a minute) is followed. A sample larger
// than the estimate is taken at once. A sample more than `stepLimit` below it is a step (the
// receiver's time jumped back, a replay restarted): taken at once and reported. Readings never go
// back except at such a step, so a wall second the engine has passed does not come again.
//
// Drift of the system clock against GNSS time changes nothing here: trust comes from the
// receiver, and the calendar wheel keeps running on this time.
import CivilTime

/// GNSS time anchored to `CLOCK_BOOTTIME`: fixes in, wall readings out. Pure (the shell passes
/// boot times); O(1) per fix and per reading.
struct GNSSClock {
    /// Nanoseconds: GNSS wall time minus boot time, the current estimate (nil: no GNSS time yet).
    private(set) var offset: Int64?
    /// The largest sample of the window in progress, and when the window began (boot ns).
    private var windowBest: Int64?
    private var windowStart: UInt64 = 0
    /// The last wall reading handed out (ns since the epoch): readings never go below it.
    private var floor: Int64 = .min
    /// Boot time of the last sample taken (for `status`).
    private(set) var lastSampleAt: UInt64?

    /// A sample below the estimate by more than this is a step, not latency (nanoseconds).
    static let stepLimit: Int64 = 2_000_000_000
    /// How long a window of samples is (nanoseconds).
    static let window: UInt64 = 60_000_000_000

    /// What a sample did to the estimate.
    enum SampleEffect: Equatable {
        /// The first GNSS time: the clock is set.
        case first
        /// Within the latency (or a refinement of it).
        case refined
        /// The GNSS time moved by this many nanoseconds against boot time beyond the latency.
        case stepped(Int64)
    }

    /// Takes the GNSS time `seconds`.`nanoseconds` of a fix that arrived at boot time `arrival`.
    mutating func take(seconds: Int64, nanoseconds: Int32, arrival: UInt64) -> SampleEffect {
        // Saturating: a fix time from a corrupt source must not trap (InputRanges keep ours sane).
        let wall = SaturatingTime.add(SaturatingTime.multiply(seconds, 1_000_000_000), Int64(nanoseconds))
        let sample = SaturatingTime.subtract(wall, Int64(clamping: arrival))
        lastSampleAt = arrival
        guard let current = offset else {
            offset = sample
            windowBest = sample
            windowStart = arrival
            return .first
        }
        let moved = SaturatingTime.subtract(sample, current)
        if moved < -Self.stepLimit || moved > Self.stepLimit {
            offset = sample
            windowBest = sample
            windowStart = arrival
            floor = .min
            return .stepped(moved)
        }
        if sample > current { offset = sample }
        windowBest = max(windowBest ?? sample, sample)
        if arrival >= windowStart, arrival - windowStart >= Self.window {
            offset = windowBest
            windowBest = nil
            windowStart = arrival
        }
        return .refined
    }

    /// The GNSS wall time at boot time `boot`, nanoseconds since the epoch (nil before the first fix).
    mutating func wallNanoseconds(at boot: UInt64) -> Int64? {
        guard let offset else { return nil }
        let t = max(SaturatingTime.add(Int64(clamping: boot), offset), floor)
        floor = t
        return t
    }

    /// The boot time at which the wall clock reads `wall` (whole seconds): where to arm the
    /// monotonic timer for a calendar deadline. Never early: the boot time of the second's start.
    func bootTime(atWall wall: WallInstant) -> UInt64? {
        guard let offset else { return nil }
        let ns = SaturatingTime.subtract(SaturatingTime.multiply(wall.secondsSinceEpoch, 1_000_000_000), offset)
        return ns <= 0 ? 1 : UInt64(ns)
    }
}
