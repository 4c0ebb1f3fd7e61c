import Geofencing
import SeededRandom
import Position
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Seeded synthetic drives with ground truth through the region monitor (design §4):
/// straight and grazing passes, 10-minute stops just inside and just outside a boundary, a tunnel
/// with a 60 s dropout, 130 km/h through a 30 m zone — each under σ = 3, 8 and 15 m, at three places
/// in turn (Munich; Longyearbyen at 78°N; Fiji across the antimeridian).
///
/// Counting: a true crossing is *expected* when its visit reaches 2σ inside. A reported event is
/// matched to the last true crossing of its kind before it, if no other true crossing followed
/// (30 s of slack for interpolated times) and none matched it already; otherwise it is *spurious*; an expected crossing without a
/// matching event is *missed*; a shallower true crossing may be reported or not (2σ: 1 mm of
/// tolerance for the refined sampling of the truth). Latency: good fixes received after the true
/// entry, up to and including the one that reported it; its median is asserted per σ over all
/// scenarios (a stop 5 m inside at σ = 15 m cannot be confirmed in 2 fixes without a false entry at
/// a stop 5 m outside: that row's own median is printed).
///
/// The stops are approached at 3 m/s for the last 35 m (a vehicle slows before stopping).
///
/// Every run also has single wrong fixes, 200 m to 5 km off (``injectOutliers``): they
/// must give no event (held by the monitor's fix gate and dropped when the next fixes disagree).
struct SyntheticDriveTests {
    struct Run {
        var drive: Drive
        var region: Region
    }

    struct Row {
        var scenario: String
        var sigma: Double
        var expected = 0, detected = 0, spurious = 0, missed = 0, outliers = 0
        var latencies: [Int] = []
        var timeErrors: [Double] = []
        var failures: [String] = []

        var medianLatency: Double? {
            guard !latencies.isEmpty else { return nil }
            let s = latencies.sorted()
            return s.count % 2 == 1 ? Double(s[s.count / 2]) : Double(s[s.count / 2 - 1] + s[s.count / 2]) / 2
        }
    }

    static let sigmas: [Double] = [3, 8, 15]
    static let origins = [
        Coordinate(latitude: 48.137, longitude: 11.575),
        Coordinate(latitude: 78.223, longitude: 15.65),
        Coordinate(latitude: -16.8, longitude: 179.9995),
    ]

    static func circle(_ id: String, _ origin: Coordinate, radius: Double) -> Region {
        try! Region.circle(id, center: origin, radius: radius)
    }

    /// The runs of a scenario for noise σ; `n` numbers the runs so each gets its own place.
    static func runs(_ scenario: String, sigma: Double, rng: inout SplitMix64) -> [Run] {
        var out: [Run] = []
        func origin() -> Coordinate { origins[out.count % origins.count] }
        switch scenario {
        case "straight pass":
            for off in [0.0, 40, 70] {
                for v in [8.3, 13.9, 25] {
                    let o = origin()
                    out.append(Run(drive: Drive(origin: o, start: [-600, off], legs: [.go(to: [600, off], speed: v)]),
                                   region: circle("zone", o, radius: 100)))
                }
            }
            for off in [0.0, 50] {
                let o = origin()
                let d = Drive(origin: o, start: [-600, off], legs: [.go(to: [600, off], speed: 13.9)])
                let ring = [SIMD2(-100.0, -100), [100, -100], [100, 100], [-100, 100]].map { d.coordinate($0) }
                out.append(Run(drive: d, region: try! Region.polygon("square", vertices: ring)))
            }
        case "grazing pass":
            for depth in [2 * sigma, 3 * sigma, -2 * sigma, -3 * sigma] {
                for v in [8.3, 13.9] {
                    let o = origin()
                    let off = 200 - depth
                    out.append(Run(drive: Drive(origin: o, start: [-800, off], legs: [.go(to: [800, off], speed: v)]),
                                   region: circle("zone", o, radius: 200)))
                }
            }
        case "10 min stop just inside":
            for _ in 0 ..< 3 {
                let o = origin()
                out.append(Run(drive: Drive(origin: o, start: [-700, 0], legs: [
                    .go(to: [-330, 0], speed: 13.9), .go(to: [-295, 0], speed: 3), .stop(seconds: 600), .go(to: [700, 0], speed: 13.9),
                ]), region: circle("zone", o, radius: 300)))
            }
        case "10 min stop just outside":
            for _ in 0 ..< 3 {
                let o = origin()
                out.append(Run(drive: Drive(origin: o, start: [-700, 0], legs: [
                    .go(to: [-340, 0], speed: 13.9), .go(to: [-305, 0], speed: 3), .stop(seconds: 600), .go(to: [-700, 0], speed: 13.9),
                ]), region: circle("zone", o, radius: 300)))
            }
        case "tunnel, 60 s dropout":
            // Through a zone entirely inside the tunnel, and inside a large zone during the dropout.
            for _ in 0 ..< 2 {
                let o = origin()
                out.append(Run(drive: Drive(origin: o, start: [-1200, 0], legs: [.go(to: [1200, 0], speed: 20)],
                                            dropouts: [30 ... 89.5]),
                               region: circle("zone", o, radius: 150)))
                let o2 = origin()
                out.append(Run(drive: Drive(origin: o2, start: [-2500, 0], legs: [.go(to: [2500, 0], speed: 20)],
                                            dropouts: [95 ... 154.5]),
                               region: circle("zone", o2, radius: 1500)))
            }
        case "130 km/h, 30 m zone":
            for off in [0.0, 10] {
                for _ in 0 ..< 4 {
                    let o = origin()
                    let x0 = -400 - rng.uniform(0, 36)
                    out.append(Run(drive: Drive(origin: o, start: [x0, off], legs: [.go(to: [400, off], speed: 36.1)]),
                                   region: circle("zone", o, radius: 30)))
                }
            }
        default: preconditionFailure(scenario)
        }
        return out
    }

    /// Replaces about one good fix in 40 (at least two a run) by a single wrong one, 200 m to 5 km
    /// from the truth (log-uniform), with the fix's own speed, course and error (a valid checksum:
    /// nothing marks it). Half of them are aimed: at the zone's centre when that is 200 m–5 km away
    /// (a false entry), otherwise in a random direction — from inside the zone, a false exit. Only
    /// fixes whose neighbours are good and 1 s away are replaced: a single jump that no vehicle
    /// could make (after a dropout a vehicle can have gone far). Returns their indices.
    static func injectOutliers(_ fixes: inout [(time: Double, fix: Fix)], _ run: Run,
                               rng: inout SplitMix64) -> Set<Int> {
        var chosen = Set<Int>()
        let candidates = fixes.indices.filter { i in
            i > 0 && i + 1 < fixes.count && fixes[i - 1].fix.usablePosition != nil
                && fixes[i].fix.usablePosition != nil && fixes[i + 1].fix.usablePosition != nil
        }
        guard !candidates.isEmpty else { return chosen }
        let count = max(2, fixes.count / 40)
        let center = run.drive.origin
        for _ in 0 ..< count {
            let i = candidates[Int(rng.next() % UInt64(candidates.count))]
            // Single jumps: not next to another outlier.
            guard !chosen.contains(i - 1), !chosen.contains(i + 1), !chosen.contains(i) else { continue }
            let (q, _, _) = run.drive.truth(at: fixes[i].time)
            let truth = run.drive.coordinate(q)
            let toCenter = Geodesy.distance(truth, center)
            let c: Coordinate
            if rng.next() % 2 == 0, toCenter >= 200, toCenter <= 5000 {
                c = center
            } else {
                let distance = 200 * pow(25, rng.uniform(0, 1))
                c = destination(truth, bearing: rng.uniform(0, 360), distance: distance)
            }
            fixes[i].fix.coordinate = c
            chosen.insert(i)
        }
        return chosen
    }

    static let scenarios = ["straight pass", "grazing pass", "10 min stop just inside", "10 min stop just outside",
                            "tunnel, 60 s dropout", "130 km/h, 30 m zone"]

    static func evaluate(_ scenario: String, sigma: Double, seed: UInt64) -> Row {
        var row = Row(scenario: scenario, sigma: sigma)
        var rng = SplitMix64(seed: seed)
        for (n, run) in runs(scenario, sigma: sigma, rng: &rng).enumerated() {
            var monitor = RegionMonitor()
            monitor.add(run.region)
            var fixes = run.drive.fixes(sigma: sigma, rng: &rng)
            let outliers = injectOutliers(&fixes, run, rng: &rng)
            row.outliers += outliers.count
            var events: [(RegionEvent, Int)] = []
            var goodTimes: [Double] = []
            for (i, f) in fixes.enumerated() {
                var out: [RegionEvent] = []
                monitor.process(f.fix, at: f.time, into: &out)
                if f.fix.usablePosition != nil && !outliers.contains(i) { goodTimes.append(f.time) }
                for e in out { events.append((e, goodTimes.count)) }
            }
            let truths = run.drive.transitions(run.region.shape)
            var matched = [Bool](repeating: false, count: truths.count)
            for (e, goodCount) in events {
                // The latest true transition of this kind before the report (interpolated times may
                // run ahead by up to 30 s), with no opposite transition after it: late is not spurious.
                let j = truths.indices.last(where: { truths[$0].kind == e.kind && truths[$0].time <= e.time + 30 })
                let stale = j.map { j in truths[(j + 1)...].contains { $0.time <= e.time - 30 } } ?? true
                if let j, !matched[j], !stale {
                    matched[j] = true
                    let truth = truths[j]
                    if truth.depth >= 2 * sigma - 0.001 {
                        row.detected += 1
                        row.timeErrors.append(abs(truth.time - e.time))
                        if e.kind == .enter {
                            let before = goodTimes.prefix(goodCount).filter { $0 <= truth.time }.count
                            row.latencies.append(goodCount - before)
                        }
                    }
                } else {
                    row.spurious += 1
                    row.failures.append("run \(n): spurious \(e) (truth \(truths.map { "\($0.kind)@\($0.time)" }))")
                }
            }
            for (j, t) in truths.enumerated() where t.depth >= 2 * sigma - 0.001 {
                row.expected += 1
                if !matched[j] {
                    row.missed += 1
                    row.failures.append("run \(n): missed \(t.kind) at \(t.time) (depth \(t.depth)); events \(events.map { $0.0 })")
                }
            }
        }
        return row
    }

    @Test func syntheticDrives() {
        var rows: [Row] = []
        for (s, scenario) in Self.scenarios.enumerated() {
            for (k, sigma) in Self.sigmas.enumerated() {
                let seed: UInt64 = 0xD41E_0000 &+ UInt64(s * 16 + k)
                let row = Self.evaluate(scenario, sigma: sigma, seed: seed)
                rows.append(row)
                #expect(row.spurious == 0, "seed \(seed): \(scenario) σ=\(sigma): \(row.failures)")
                #expect(row.missed == 0, "seed \(seed): \(scenario) σ=\(sigma): \(row.failures)")
            }
        }
        for sigma in Self.sigmas {
            let l = rows.filter { $0.sigma == sigma }.flatMap(\.latencies).sorted()
            #expect(!l.isEmpty && l[l.count / 2] <= 2, "σ=\(sigma): median entry latency \(l.isEmpty ? -1 : l[l.count / 2]) fixes")
        }
        var table = "| scenario | σ (m) | crossings expected | detected | spurious | missed | median entry latency (fixes) | median time error (s) | outlier fixes |\n"
        table += "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        for r in rows {
            let lat = r.medianLatency.map { "\($0)" } ?? "–"
            let te = r.timeErrors.sorted()
            let err = te.isEmpty ? "–" : String(Double(Int(te[te.count / 2] * 10)) / 10)
            table += "| \(r.scenario) | \(Int(r.sigma)) | \(r.expected) | \(r.detected) | \(r.spurious) | \(r.missed) | \(lat) | \(err) | \(r.outliers) |\n"
        }
        for sigma in Self.sigmas {
            let l = rows.filter { $0.sigma == sigma }.flatMap(\.latencies).sorted()
            table += "\nσ = \(Int(sigma)) m: median entry latency \(l.isEmpty ? -1 : l[l.count / 2]) fixes over \(l.count) expected entries."
        }
        table += "\n"
        print(table)
    }
}

extension SyntheticDriveTests {
    /// The same scenarios over more seeds (3 by default; `GEOFENCING_DRIVE_SEEDS=30 swift test
    /// --filter seedSweep` for a soak): no spurious transition and no missed crossing. With 30 (2026-11-21):
    /// 8,460 expected crossings, 0 spurious, 0 missed; it found two flaws the single seed hid (a
    /// window cut short by its own outlier, and segment σ shrunk by interpolating correlated
    /// estimates), both fixed in RegionMonitor.
    @Test func seedSweep() {
        let n = getenv("GEOFENCING_DRIVE_SEEDS").flatMap { Int(String(cString: $0)) } ?? 3
        var table = "| scenario | σ (m) | seeds | expected | detected | spurious | missed | median latency | outlier fixes |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        for (s, scenario) in Self.scenarios.enumerated() {
            for (k, sigma) in Self.sigmas.enumerated() {
                var total = Row(scenario: scenario, sigma: sigma)
                for sweep in 1 ... n {
                    let seed: UInt64 = 0xD41E_0000 &+ UInt64(s * 16 + k) &+ UInt64(sweep) << 32
                    let r = Self.evaluate(scenario, sigma: sigma, seed: seed)
                    total.expected += r.expected; total.detected += r.detected
                    total.spurious += r.spurious; total.missed += r.missed
                    total.latencies += r.latencies
                    total.outliers += r.outliers
                    #expect(r.spurious + r.missed == 0, "seed \(seed): \(scenario) σ=\(sigma): \(r.failures.map { String($0.prefix(160)) })")
                }
                let lat = total.medianLatency.map { "\($0)" } ?? "–"
                table += "| \(scenario) | \(Int(sigma)) | \(n) | \(total.expected) | \(total.detected) | \(total.spurious) | \(total.missed) | \(lat) | \(total.outliers) |\n"
            }
        }
        print(table)
    }
}
