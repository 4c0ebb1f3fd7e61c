import CivilTime
import Geofencing
import Position
import SeededRandom
import Testing

/// The fix gate in front of the region monitor: fixes timed by their
/// GNSS time when they arrive in bursts or at replay speed, and a jump no vehicle could make held
/// until later fixes confirm it.
struct FixGateTests {
    static let base: Int64 = 1_780_315_200

    /// The fixes of `drive` with GNSS times (base + t).
    static func timedFixes(_ drive: Drive, sigma: Double, seed: UInt64) -> [(time: Double, fix: Fix)] {
        var rng = SplitMix64(seed: seed)
        return drive.fixes(sigma: sigma, rng: &rng).map { f in
            var fix = f.fix
            fix.time = WallInstant(secondsSinceEpoch: base + Int64(f.time))
            return (f.time, fix)
        }
    }

    /// The events of `fixes` against `region`, each fix arriving at `arrival(i, t)`; times
    /// relative to the first event's time line origin (the first fix's τ).
    static func events(_ fixes: [(time: Double, fix: Fix)], _ region: Region,
                       arrival: (Int, Double) -> Double) -> [String] {
        var m = RegionMonitor()
        m.add(region)
        var out: [RegionEvent] = []
        let origin = arrival(0, fixes[0].time)
        for (i, f) in fixes.enumerated() {
            let a = arrival(i, f.time)
            while let d = m.nextDeadline, d < a { m.advance(to: d, into: &out) }
            m.process(f.fix, at: a, into: &out)
        }
        return out.map { "\($0.kind) \($0.identifier) @\(Int((($0.time - origin) * 1000).rounded()))ms" }
    }

    /// Fast passes (130 km/h through 30 m circles, 25 m/s through 100 m ones) give the same events —
    /// kinds, regions and times on the fixes' own clock — whether the fixes arrive one a second, at
    /// 100× (replay), or in bursts (held 5 s, then all at once, as after a serial stall). Before
    /// the gate a burst's fixes were teleports and fast passes were missed.
    @Test func burstsAndReplaySpeedsGiveTheSameEvents() throws {
        var differing: [String] = []
        var total = 0
        for seed: UInt64 in 1 ... 12 {
            var rng = SplitMix64(seed: seed)
            let origin = Coordinate(latitude: 48.137, longitude: 11.575)
            let radius = seed % 2 == 0 ? 30.0 : 100
            let speed = seed % 2 == 0 ? 36.1 : 25
            let off = rng.uniform(0, radius * 0.5)
            let drive = Drive(origin: origin, start: [-600 - rng.uniform(0, 36), off], legs: [.go(to: [600, off], speed: speed)])
            let region = try Region.circle("zone", center: origin, radius: radius)
            let fixes = Self.timedFixes(drive, sigma: 3 + Double(seed % 3) * 5, seed: seed &* 7919)
            let steady = Self.events(fixes, region) { _, t in 1000 + t }
            let fast = Self.events(fixes, region) { _, t in 1000 + t / 100 }
            // Held for 5 s, then written at once (a few microseconds apart).
            let bursts = Self.events(fixes, region) { i, t in 1000 + ((t / 5).rounded(.down) + 1) * 5 + Double(i % 5) * 1e-5 }
            total += steady.count
            if fast != steady { differing.append("seed \(seed): 100× \(fast) vs 1× \(steady)") }
            if bursts != steady { differing.append("seed \(seed): bursts \(bursts) vs 1× \(steady)") }
        }
        #expect(differing.isEmpty, "\(differing)")
        #expect(total >= 20, "the passes give events: \(total)")
    }

    /// Stopped inside a zone, one fix with a valid checksum 2.2 km off the road: no exit, no entry.
    @Test func aSingleWrongFixDoesNotDecide() throws {
        let center = RegionMonitorTests.center
        var m = try zoneMonitor(center)
        var events: [RegionEvent] = []
        for t in 0 ..< 20 { m.process(fix(center), at: Double(t), into: &events) }
        #expect(events.map(\.kind) == [.enter])
        m.process(fix(destination(center, bearing: 30, distance: 2200)), at: 20, into: &events)
        for t in 21 ..< 40 { m.process(fix(center), at: Double(t), into: &events) }
        #expect(events.map(\.kind) == [.enter], "\(events)")
        #expect(m.outliersDropped == 1)
    }

    /// A real jump (the first fixes were wrong, or the vehicle was carried) is believed once the
    /// following fixes agree: two confirmations, then the exit.
    @Test func aConfirmedJumpDecides() throws {
        let center = RegionMonitorTests.center
        var m = try zoneMonitor(center)
        var events: [RegionEvent] = []
        for t in 0 ..< 5 { m.process(fix(center), at: Double(t), into: &events) }
        let away = destination(center, bearing: 30, distance: 2200)
        m.process(fix(away), at: 5, into: &events)
        m.process(fix(away), at: 6, into: &events)
        #expect(events.map(\.kind) == [.enter], "held until a second confirmation: \(events)")
        m.process(fix(away), at: 7, into: &events)
        #expect(events.map(\.kind) == [.enter, .exit], "\(events)")
        #expect(m.outliersDropped == 0)
    }

    /// A poor fix while a jump is held waits with it: before, it went out at once, the monitor's
    /// time line passed a dwell's due time, and the held fixes then decided the exit at an earlier
    /// time — a dwell reported for a visit that ended before it was due.
    @Test func aPoorFixDoesNotOvertakeAHeldJump() throws {
        let center = RegionMonitorTests.center
        var m = try zoneMonitor(center, dwell: 10)
        var events: [RegionEvent] = []
        for t in 0 ..< 9 { m.process(fix(center), at: Double(t), into: &events) }
        let away = destination(center, bearing: 30, distance: 2200)
        m.process(fix(away), at: 9.5, into: &events)                  // held: a jump
        m.process(fix(away, error: 200), at: 10.5, into: &events)     // poor, after the dwell's due time
        m.process(fix(away), at: 11.5, into: &events)
        m.process(fix(away), at: 12.5, into: &events)                 // the jump confirmed
        for t in 13 ..< 30 { m.process(fix(away), at: Double(t), into: &events) }
        #expect(events.isEmpty, "left after 9.5 s of a 10 s dwell: \(events)")
    }

    /// Handmade: what the gate lets out is in time order, with poor fixes released in place within a
    /// confirmed run and dropped with a run no fix confirmed.
    @Test func gatedFixesStayInTimeOrderAroundPoorFixes() {
        let center = RegionMonitorTests.center
        let away = destination(center, bearing: 30, distance: 2200)
        let poor = Fix()   // no position: poor
        var gate = FixGate()
        var out: [GatedFix] = []
        // Confirmed run: good, good, jump, poor, poor (kept as the later), confirmation, poor, confirmation.
        let run: [Fix] = [fix(center), fix(center), fix(away), poor, fix(away, error: 300), fix(away), poor, fix(away)]
        for (i, f) in run.enumerated() { gate.admit(f, arrival: Double(i), into: &out) }
        #expect(out.map(\.time) == [0, 1, 2, 4, 5, 6, 7], "\(out.map(\.time))")
        #expect(!gate.isHolding && gate.outliersDropped == 0)
        // Dropped runs: a wrong fix and a poor one, then a fix reachable from the accepted one
        // again; a wrong fix and a poor one replaced by another wrong fix (and a poor one), then a
        // fix reachable from the accepted one. The poor fixes go with their runs.
        out.removeAll()
        let elsewhere = destination(center, bearing: 200, distance: 9000)
        let dropped: [Fix] = [fix(center), poor, fix(away), fix(center), poor, fix(elsewhere), poor, fix(away)]
        for (i, f) in dropped.enumerated() { gate.admit(f, arrival: 8 + Double(i), into: &out) }
        #expect(out.map(\.time) == [10, 15], "\(out.map(\.time))")
        #expect(!gate.isHolding && gate.outliersDropped == 3)
    }

    /// GNSS time that repeats, goes back or jumps by years falls back to arrival time; the time
    /// line never goes back and stays finite.
    @Test func inconsistentGNSSTimeFallsBackToArrival() {
        var gate = FixGate()
        var out: [GatedFix] = []
        let times: [Int64] = [100, 101, 101, 99, 102, 400_000_000, 103, 104]
        for (i, g) in times.enumerated() {
            var f = RegionMonitorTests.fix(Double(i))
            f.time = WallInstant(secondsSinceEpoch: g)
            gate.admit(f, arrival: 50 + Double(i), into: &out)
        }
        let t = out.map(\.time)
        #expect(t == t.sorted(), "\(t)")
        #expect(t.allSatisfy { $0.isFinite && $0 < 100 }, "\(t)")
        #expect(gate.arrivalTimed >= 3)
    }
}

/// A still fix at `c` (3D, speed 0) with `error` metres of horizontal error.
private func fix(_ c: Coordinate, error: Double = 5) -> Fix {
    Fix(coordinate: c, mode: .threeD, isValid: true, speed: 0, horizontalError: error)
}

/// A monitor with one circle zone of 100 m, "zone", at `center`.
private func zoneMonitor(_ center: Coordinate, dwell: Double? = nil) throws -> RegionMonitor {
    var zone = try Region.circle("zone", center: center, radius: 100)
    if let dwell { zone.dwell = dwell }
    var m = RegionMonitor()
    m.add(zone)
    return m
}
