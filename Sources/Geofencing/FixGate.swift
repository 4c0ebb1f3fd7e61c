// FixGate: between the position source and a region monitor's decisions (design §8, "Time of a
// fix"). Any monitor — RegionMonitor, or a zone set's — feeds every fix
// through one gate and decides only on what the gate releases, at the time the gate gives.
//
// Time. A fix reaches the shell at its *arrival* time (the monotonic clock of the loop), but fixes
// arrive in bursts: gpsd catching up, a serial buffer after a stall, a busy loop, a replay at 100×.
// Between two fixes the interval that matters for averaging and the "faster than any vehicle" test
// is the one between their *solutions*. So the gate keeps a fix time line τ:
//
//   first fix, or after an inconsistency:   τ = τ_prev + max(0, a − a_prev)   (arrival; first: τ = a)
//   GNSS time g present and consistent:     τ = g + offset   (offset fixed at the last anchor)
//   consistent:  0 < g − g_prev ≤ timeRatio · max(0, a − a_prev) + gapAllowance
//
// so τ advances by the GNSS interval when the receiver's clock is believable and by the arrival
// interval when it is not (no date, time repeated or going back, or a jump no replay speed
// explains: a receiver reset to 1980, a week rollover). Timeouts stay on the monotonic clock: the
// time line continues from the last fix at the arrival clock's rate (``time(atArrival:)``), so
// 120 s without a fix is 120 s of the board's clock, whatever the fixes' own clock says.
//
// Jumps. A good fix (usable position, error ≤ maximumError) that no vehicle could have reached
// from the last accepted one is *held*. Reachable, for Δτ between them and speeds v₀, v₁:
//
//   distance ≤ Δτ · min(maximumSpeed, max(v₀, v₁) + maximumAcceleration · Δτ / 2) + slack
//   and, with a Doppler velocity at the accepted fix, the distance from where that velocity would
//   have carried it ≤ Δτ · (1 m/s + 5 % of v₀) + maximumAcceleration · Δτ² / 2 + slack
//   slack = jumpSigmas · (σ₀ + σ₁) + 2 m
//
// A held fix is released (with those held after it) once `confirmations` further fixes are each
// reachable from the one before them; it is dropped (counted in ``outliersDropped``) as soon as a
// fix is reachable from the last accepted one again. So a single wrong fix — a valid checksum, 2 km
// off the road — never decides, and a real jump costs `confirmations` fixes of latency. Poor fixes
// only let time pass: released at once while nothing is held; while a jump is held they join the
// held run (neither a confirmation nor a reference), so they are released in order with it and
// never decide at a time later than good fixes still to come; dropped with the run (time passes
// with the next fix anyway). A stretch of poor fixes in the run is kept as its last one.
import Position

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif hasFeature(Embedded)
import CLibm
#endif

/// Settings of a ``FixGate``.
public struct FixGateConfiguration: Hashable, Sendable {
    /// Fastest plausible motion, m/s.
    public var maximumSpeed = 70.0
    /// Largest plausible change of velocity, m/s² (hard braking is ~9 m/s²).
    public var maximumAcceleration = 10.0
    /// Noise allowance of the jump test, in σ of each of the two fixes.
    public var jumpSigmas = 3.0
    /// Further fixes that must agree before a jump is believed.
    public var confirmations = 2
    /// Fixes with a larger error are poor: released at once, never held, never a reference. Metres.
    public var maximumError = 50.0
    /// Error assumed when a fix gives none, metres.
    public var assumedError = 10.0
    /// GNSS time may run at most this many times faster than arrival (replay speeds up to 10,000×).
    public var timeRatio = 10_000.0
    /// GNSS gap accepted on top of `timeRatio` × the arrival gap, seconds.
    public var gapAllowance = 300.0

    public init() {}
}

/// A fix the gate lets through, and its time on the gate's fix time line (seconds).
public struct GatedFix: Sendable {
    public var fix: Fix
    public var time: Double
    public init(fix: Fix, time: Double) { self.fix = fix; self.time = time }
}

/// Turns fixes as they arrive into fixes to decide on, each with the time of its solution.
///
/// Pure: the caller passes the arrival time (any clock that never goes back). The gate's time line
/// starts at the first arrival, so with GNSS time absent it *is* the arrival clock.
public struct FixGate: Sendable {
    public var configuration: FixGateConfiguration

    /// Fixes held as a possible jump, oldest first: at most `confirmations` + 1 good ones, each
    /// followed by at most one poor one.
    private var held: [GatedFix] = []
    /// The good fixes in `held`.
    private var heldGood = 0
    /// The last good fix released.
    private var accepted: (position: Coordinate, time: Double, sigma: Double, speed: Double?, course: Double?)?
    /// The time line: τ of the last fix, its arrival, and GNSS anchor (τ − g).
    private var lastTime: Double?
    private var lastArrival: Double?
    private var lastGNSS: Double?
    private var offset: Double?

    /// Fixes dropped as outliers so far.
    public private(set) var outliersDropped = 0
    /// Fixes whose GNSS time was absent or inconsistent, timed by arrival.
    public private(set) var arrivalTimed = 0

    public init(configuration: FixGateConfiguration = FixGateConfiguration()) {
        self.configuration = configuration
    }

    /// Whether a fix is held, waiting for confirmation.
    public var isHolding: Bool { !held.isEmpty }

    /// The fix time line at arrival time `arrival` when no fix comes: the last fix's τ plus the
    /// arrival time since (timeouts on the monotonic clock). Before any fix, `arrival` itself.
    /// - Complexity: O(1).
    public func time(atArrival arrival: Double) -> Double {
        guard let t = lastTime, let a = lastArrival else { return arrival }
        return t + max(0, arrival - a)
    }

    /// The arrival time at which the time line reaches `time` (inverse of ``time(atArrival:)``).
    /// - Complexity: O(1).
    public func arrival(atTime time: Double) -> Double {
        guard let t = lastTime, let a = lastArrival else { return time }
        return a + (time - t)
    }

    /// Admits one fix that arrived at `arrival`; appends what may be decided now, in order.
    /// - Complexity: O(confirmations).
    public mutating func admit(_ fix: Fix, arrival: Double, into out: inout [GatedFix]) {
        let time = timeline(fix, arrival: arrival)
        guard let c = good(fix) else {
            let here = GatedFix(fix: fix, time: time)
            if held.isEmpty {
                out.append(here)
            } else if let last = held.last, good(last.fix) == nil {
                held[held.count - 1] = here   // it only carries time: the later one suffices
            } else {
                held.append(here)
            }
            return
        }
        let sigma = fix.horizontalError ?? configuration.assumedError
        let here = GatedFix(fix: fix, time: time)
        guard let a = accepted else {
            accept(here, c, sigma, into: &out)
            return
        }
        if reachable(from: (a.position, a.time, a.sigma, a.speed, a.course), to: here, c, sigma) {
            dropHeld()
            accept(here, c, sigma, into: &out)
            return
        }
        if let k = held.lastIndex(where: { good($0.fix) != nil }) {
            let last = held[k], lc = good(last.fix)!
            let ls = last.fix.horizontalError ?? configuration.assumedError
            if reachable(from: (lc, last.time, ls, last.fix.speed, last.fix.course), to: here, c, sigma) {
                held.append(here)
                heldGood += 1
                if heldGood > configuration.confirmations {
                    let run = held
                    held.removeAll()
                    heldGood = 0
                    for h in run {
                        if let hc = good(h.fix) {
                            accept(h, hc, h.fix.horizontalError ?? configuration.assumedError, into: &out)
                        } else {
                            out.append(h)
                        }
                    }
                }
                return
            }
        }
        // Reachable from neither: a jump of its own. It replaces what was held.
        dropHeld()
        held = [here]
        heldGood = 1
    }

    /// The position of a good fix (usable, error known or assumed and ≤ maximumError), or nil.
    private func good(_ fix: Fix) -> Coordinate? {
        let sigma = fix.horizontalError ?? configuration.assumedError
        guard let c = fix.usablePosition, sigma.isFinite, sigma >= 0, sigma <= configuration.maximumError else { return nil }
        return c
    }

    /// Drops the held run: its good fixes as outliers, its poor ones (time only) with them.
    private mutating func dropHeld() {
        outliersDropped += heldGood
        held.removeAll()
        heldGood = 0
    }

    private mutating func accept(_ g: GatedFix, _ c: Coordinate, _ sigma: Double, into out: inout [GatedFix]) {
        accepted = (c, g.time, sigma, g.fix.speed, g.fix.course)
        out.append(g)
    }

    /// Whether a vehicle at `p` could be seen at `q` (see the file's head).
    private func reachable(from p: (position: Coordinate, time: Double, sigma: Double, speed: Double?, course: Double?),
                           to q: GatedFix, _ qc: Coordinate, _ qs: Double) -> Bool {
        let dt = max(0, q.time - p.time)
        let slack = configuration.jumpSigmas * (max(p.sigma, 0.1) + max(qs, 0.1)) + 2
        let distance = Geodesy.distance(p.position, qc)
        let v0 = p.speed.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        let v1 = q.fix.speed.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        let v = max(v0 ?? configuration.maximumSpeed, v1 ?? 0)
        let speedBound = min(configuration.maximumSpeed, v + configuration.maximumAcceleration * dt / 2)
        if distance > dt * speedBound + slack { return false }
        // With a Doppler velocity at p: how far from where it would have carried the vehicle.
        if let v0, v0 >= 1, let course = p.course, course.isFinite {
            let r = course * Double.pi / 180
            let east = v0 * sin(r) * dt, north = v0 * cos(r) * dt
            let lat = p.position.latitude * Double.pi / 180
            let predicted = Coordinate(
                latitude: p.position.latitude + north / Geodesy.earthRadius * 180 / Double.pi,
                longitude: p.position.longitude + east / (Geodesy.earthRadius * max(cos(lat), 1e-6)) * 180 / Double.pi)
            let deviation = Geodesy.distance(predicted, qc)
            let allowed = dt * (1 + 0.05 * v0) + configuration.maximumAcceleration * dt * dt / 2 + slack
            if deviation > allowed { return false }
        }
        return true
    }

    /// τ for a fix arriving at `arrival` (see the file's head).
    private mutating func timeline(_ fix: Fix, arrival: Double) -> Double {
        let g = fix.secondsSinceEpoch.flatMap { $0.isFinite ? $0 : nil }
        defer { lastArrival = max(arrival, lastArrival ?? arrival) }
        guard let t0 = lastTime, let a0 = lastArrival else {
            lastTime = arrival
            if let g { lastGNSS = g; offset = arrival - g } else { arrivalTimed += 1 }
            return arrival
        }
        let da = max(0, arrival - a0)
        if let g, let g0 = lastGNSS, let off = offset {
            let dg = g - g0
            if dg > 0, dg <= configuration.timeRatio * da + configuration.gapAllowance {
                let t = max(t0, g + off)
                lastTime = t
                lastGNSS = g
                return t
            }
        }
        arrivalTimed += 1
        let t = t0 + da
        lastTime = t
        if let g { lastGNSS = g; offset = t - g } else { lastGNSS = nil; offset = nil }
        return t
    }
}
