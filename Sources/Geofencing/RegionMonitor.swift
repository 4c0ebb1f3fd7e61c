// RegionMonitor: the pure state machine between fixes and region events (design §4).
//
// Size: one state machine: the design below and the decisions that carry it out share the
// private per-region tracks, the fix history and the gate; split, the design would sit apart from its code.
//
// Per region: Unknown / Inside / Outside. A region that has never been near a fix is implicitly
// Outside (after the first fix) and costs nothing; only regions near the fix (from the index) and
// regions not Outside (the "active" set) are examined, so a fix costs the same at 20 or 1M regions.
//
// Deciding from a noisy fix (σ = the fix's horizontal error, 1 σ along any direction):
//
//   margin  m = max(minimumMargin, k·σ_eff)         inside when d < −m, outside when d > +m,
//                                                   otherwise the state holds (hysteresis band 2m)
//   σ_eff   σ/√n for n fixes averaged. Stopped (Doppler speed < stationarySpeed — the receiver's
//           speed, not differences of noisy positions): the last ≤ 16 stopped fixes. Moving with a
//           course: the fixes of the last ≤ 4 s, each carried forward along the current velocity,
//           as long as their own velocity agrees (|Δv| ≤ 1 m/s + 10 %: a turn or a brake ends the
//           window). Caps are small because real receivers' errors are correlated in time. A fix
//           10σ from the current one ends the window too (a jump: two fixes differ that much by
//           noise with P ≈ 1e-11; at 6σ, P ≈ 1e-4, an outlier fix cut its own window short and was
//           judged alone — 7 flaps in 90 ten-minute stops at σ = 15 m in a 30-seed sweep).
//   k       kMoving (1.5) when the vehicle moves ≥ σ between fixes; rises linearly to kStationary (3)
//           as it slows to a stop. A moving vehicle looks at each stretch of boundary once or twice,
//           so a low k costs few false alarms and finds shallow passes; a stopped one looks at the
//           same spot every second, so each look must be much more certain — and averaging gives it
//           that certainty back.
//
//   Why both: a single raw look at a pass 2σ deep clears 1.5σ with P ≈ 0.69 only — at 130 km/h
//   through a 30 m zone that is one or two looks, and without averaging about one pass in four at
//   σ = 15 m was missed in the synthetic drives. Averaged over 4 fixes (σ/2) the same look clears
//   with P ≈ 0.99. A stop at the boundary needs a 3σ/√n excursion of the mean of up to 16 fixes.
//   Measured (Tests/GeofencingTests/SyntheticDriveTests, and its 30-seed sweep: 8,460 expected
//   crossings): 0 spurious, 0 missed, median entry latency 1–2 fixes at σ = 3, 8, 15 m. A stop
//   5 m inside at σ = 15 m (0.33σ) is confirmed only after a minute or more — the price of never
//   entering at a stop 5 m outside.
//
// Sparse fixes (segment test): between two consecutive good fixes the path is taken as the great
// circle between their estimates. A region outside at both ends is entered (and left) when the path
// goes deeper than k·σ_seg inside (k as above: a short segment of a slowing vehicle gets no
// discount), σ_seg the interpolated error ((1−t)σ₀ + tσ₁ at the deepest point t: consecutive
// averaged estimates share fixes, so their errors are correlated — the root-sum-square √((1−t)²σ₀²
// + t²σ₁²) shrank σ by up to 0.7 at a stop and let 3 of 90 ten-minute stops at σ = 15 m flap). Steps
// longer than maximumSpeed allows are not interpolated (a glitch). Crossing times are interpolated
// along the segment (bisection on d(t)). Not covered: a vehicle Inside that leaves and comes back
// between two fixes (no exit/enter pair is invented for it).
//
// Time and jumps: every fix first passes a ``FixGate`` (FixGate.swift): the interval between two
// fixes is that of their GNSS times when present and consistent (fixes that arrive in a burst are
// not teleports), and a jump no vehicle could make is held until the following fixes confirm it
// (a single wrong fix never decides). Everything below runs on the gate's fix time line; the
// public API takes and returns the caller's arrival clock, and the fix timeout runs on it.
//
// Poor fixes (no usable position, or error > maximumError) hold every state: no false exit in a
// tunnel. After unknownTimeout seconds without a good fix, regions that were Inside report
// `unknown` and become Unknown; the next good fix resolves them against their last known state
// (inside again: no event; outside: exit).
import CivilTime
import Position

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif hasFeature(Embedded)
import CLibm
#endif

/// What a region monitor reports.
public struct RegionEvent: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable { case enter, exit, dwell, unknown }
    public var kind: Kind
    public var identifier: String
    /// Seconds on the clock of the fixes (interpolated for crossings between two fixes).
    public var time: Double

    public init(_ kind: Kind, _ identifier: String, time: Double) {
        self.kind = kind; self.identifier = identifier; self.time = time
    }

    public var description: String { "\(kind.rawValue) \(identifier) @\(time)" }
}

/// A region's state as the monitor sees it.
public enum RegionState: UInt8, Hashable, Sendable { case unknown, inside, outside }

public struct MonitorConfiguration: Hashable, Sendable {
    /// Margin factor while moving (σ units).
    public var kMoving = 1.5
    /// Margin factor when stopped (σ_eff units).
    public var kStationary = 3.0
    /// Smallest margin, metres.
    public var minimumMargin = 2.0
    /// Fixes with a larger horizontal error are poor: they hold state. Metres.
    public var maximumError = 50.0
    /// Error assumed when a fix gives none, metres.
    public var assumedError = 10.0
    /// Seconds without a good fix after which Inside regions report `unknown`.
    public var unknownTimeout = 120.0
    /// Below this speed (m/s, from the fix) fixes are averaged.
    public var stationarySpeed = 1.0
    /// Most fixes averaged while stopped.
    public var stationaryWindow = 16
    /// Fastest plausible motion, m/s: a longer step between two fixes is not interpolated.
    public var maximumSpeed = 70.0
    /// Most fixes (and seconds) averaged while moving with a known course.
    public var movingWindow = 4
    /// Further fixes that must agree before a jump no vehicle could make is believed (``FixGate``).
    public var jumpConfirmations = 2

    /// The settings of the ``FixGate`` in front of a monitor with these settings.
    public var gate: FixGateConfiguration {
        var g = FixGateConfiguration()
        g.maximumSpeed = maximumSpeed
        g.maximumError = maximumError
        g.assumedError = assumedError
        g.confirmations = jumpConfirmations
        return g
    }

    public init() {}
}

public struct RegionMonitor: Sendable {
    struct Track: Sendable {
        var state: RegionState = .unknown
        /// State before a timeout made it Unknown (nil: never known).
        var lastKnown: RegionState?
        var dwellDue: Double?
        var visitReported = false
        var lastEnter = -Double.infinity, lastExit = -Double.infinity, lastDwell = -Double.infinity
        var finished = false
        var hasHistory: Bool { finished || lastEnter > -.infinity || lastExit > -.infinity || lastDwell > -.infinity }
    }

    struct Estimate: Sendable {
        var position: Vec3
        var time: Double
        var sigma: Double
    }

    public var configuration: MonitorConfiguration
    public private(set) var catalog = RegionCatalog()
    var tracks: [Int32: Track] = [:]
    /// Slots whose state is not Outside or that have a dwell pending: examined at every fix.
    var active: Set<Int32> = []
    private var previous: Estimate?
    private var lastGoodTime: Double?
    private var timedOut = false
    var hadFix = false
    /// Recent good fixes (position, time, velocity east/north in m/s when known), oldest first.
    private var history: [(position: Vec3, time: Double, velocity: SIMD2<Double>?)] = []
    private var scratch: [Int32] = []
    var candidates: [Int32] = []
    /// The zones of a mapped zone set, monitored besides the catalog's regions (slots from
    /// `ZoneSet.slotBase`); see RegionMonitor+ZoneSet.swift.
    public internal(set) var zoneSet: ZoneSet?
    var zoneCandidates: [Int32] = []
    /// Times fixes by their GNSS time and holds jumps until confirmed (its time line, τ, is the
    /// clock of everything below; the public API speaks the caller's arrival clock).
    private var gate: FixGate
    private var gated: [GatedFix] = []

    /// Fixes the gate dropped as outliers (a jump no later fix confirmed).
    public var outliersDropped: Int { gate.outliersDropped }

    public init(configuration: MonitorConfiguration = MonitorConfiguration()) {
        self.configuration = configuration
        self.gate = FixGate(configuration: configuration.gate)
    }

    // MARK: Regions

    /// Adds `region` (the same identifier replaces, and starts afresh).
    public mutating func add(_ region: Region) {
        let (slot, replaced) = catalog.add(region)
        if let r = replaced { forget(r) }
        forget(slot)
    }

    /// Adds many regions; the index is rebuilt once, at the next fix.
    public mutating func add(contentsOf regions: some Sequence<Region>) {
        for r in regions { add(r) }
    }

    /// Builds the spatial index now if adds or removals made it due (otherwise the next fix
    /// would): a burst of adds — a configuration of a million zones — pays for it here, not at
    /// the first fix.
    /// - Complexity: O(n) when due (~0.3 s at 1M regions), O(1) otherwise.
    public mutating func prepareIndex() { catalog.rebuildIfDue() }

    /// The regions to build the index from elsewhere, when a rebuild is due (RegionCatalog).
    public mutating func indexSnapshot() -> RegionCatalog.IndexSnapshot? { catalog.indexSnapshot() }

    /// Installs an index built from ``indexSnapshot()``; false when the regions changed since.
    @discardableResult
    public mutating func installIndex(_ built: RegionCatalog.BuiltIndex) -> Bool { catalog.install(built) }

    /// The snapshot's index will not come.
    public mutating func abandonIndexSnapshot() { catalog.abandonSnapshot() }

    /// Stops monitoring `identifier`; returns whether it was monitored.
    @discardableResult
    public mutating func remove(identifier: String) -> Bool {
        guard let slot = catalog.remove(identifier: identifier) else { return false }
        forget(slot)
        return true
    }

    private mutating func forget(_ slot: Int32) {
        tracks.removeValue(forKey: slot)
        active.remove(slot)
    }

    /// Puts back the last confirmed state of region `identifier` from a previous run: the region
    /// is Unknown until the next good fix, which resolves it against `lastKnown` (inside again: no
    /// event; outside after inside: exit; inside after outside: entry). No-op for `.unknown`.
    public mutating func restore(_ identifier: String, lastKnown: RegionState) {
        guard lastKnown != .unknown, let slot = catalog.slot(of: identifier) else { return }
        var track = Track()
        track.lastKnown = lastKnown
        tracks[slot] = track
        active.insert(slot)
    }

    /// The state of region `identifier` (nil if not monitored).
    public func state(of identifier: String) -> RegionState? {
        guard let slot = catalog.slot(of: identifier) ?? zoneSlot(of: identifier) else { return nil }
        if let t = tracks[slot] { return t.state }
        return hadFix ? .outside : .unknown
    }

    /// When ``advance(to:into:)`` next has something to do (a dwell falls due, or the fix timeout
    /// expires); nil when nothing is pending.
    /// - Complexity: O(active regions).
    public var nextDeadline: Double? {
        var next: Double? = nil
        if let g = lastGoodTime, !timedOut { next = g + configuration.unknownTimeout }
        for s in active { if let d = tracks[s]?.dwellDue { next = min(next ?? d, d) } }
        return next.map { gate.arrival(atTime: $0) }
    }

    // MARK: Time and fixes

    /// Processes one fix received at `time` (seconds, any clock that never goes back, the same for
    /// all calls: the arrival clock); appends the resulting events to `events`, in time order.
    ///
    /// The fix goes through the monitor's ``FixGate`` first: intervals between fixes come from
    /// their GNSS times when present and consistent (a burst of fixes is not a teleport), and a
    /// jump no vehicle could make is held until the following fixes confirm it. Event times are
    /// on the gate's fix time line, which starts at the first arrival.
    /// - Complexity: O(log n + regions near the fix + active regions).
    public mutating func process(_ fix: Fix, at time: Double, into events: inout [RegionEvent]) {
        gate.configuration = configuration.gate
        gated.removeAll(keepingCapacity: true)
        gate.admit(fix, arrival: time, into: &gated)
        for g in gated { decide(g.fix, at: g.time, into: &events) }
    }

    /// Decides on one fix at `time` on the fix time line.
    private mutating func decide(_ fix: Fix, at time: Double, into events: inout [RegionEvent]) {
        catalog.rebuildIfDue()
        let sigmaFix = fix.horizontalError ?? configuration.assumedError
        // Dwells and the fix timeout that fall due before this fix, at their own times: a batch of
        // their own, ordered as `advance(to:into:)` orders it (replay serves them that way).
        let dueEvent = events.count
        advanceLine(to: time, into: &events)
        Self.orderBatch(&events, from: dueEvent)
        guard let c = fix.usablePosition, sigmaFix.isFinite, sigmaFix <= configuration.maximumError else { return }
        let firstEvent = events.count
        let v = Vec3(c)
        let sigma = max(sigmaFix, 0.1)

        // Averaging: stopped, the recent stopped fixes; moving with a known course, the fixes of the
        // last `movingWindow` seconds carried forward along the Doppler velocity.
        let speed = fix.speed ?? .infinity
        var velocity: SIMD2<Double>? = nil
        if speed < configuration.stationarySpeed {
            velocity = SIMD2(0, 0)
        } else if speed.isFinite, let course = fix.course, course.isFinite {
            let r = course * Double.pi / 180
            velocity = SIMD2(speed * sin(r), speed * cos(r))
        }
        var position = v
        var averaged = 1
        if let vel = velocity, !history.isEmpty {
            let plane = TangentPlane(center: v)
            var sum = SIMD2<Double>(0, 0)
            let stopped = speed < configuration.stationarySpeed
            let window = stopped ? configuration.stationaryWindow : configuration.movingWindow
            for h in history.reversed() {
                guard averaged < window, let hv = h.velocity, time - h.time <= Double(window) + 0.5 else { break }
                let dv = hv - vel
                guard (dv * dv).sum().squareRoot() <= 1 + 0.1 * speed.clamped(0, 100) else { break }
                guard let q = plane.project(h.position) else { break }
                let carried = q + vel * (time - h.time)
                guard (carried * carried).sum().squareRoot() < 10 * sigma else { break }   // a jump, not noise
                sum += carried
                averaged += 1
            }
            if averaged > 1 {
                let m = sum / Double(averaged)
                position = (plane.center + plane.east * (m.x / Geodesy.earthRadius)
                            + plane.north * (m.y / Geodesy.earthRadius)).normalized
            }
        }
        history.append((v, time, velocity))
        if history.count > max(configuration.stationaryWindow, configuration.movingWindow) { history.removeFirst() }
        let sigmaEff = sigma / Double(averaged).squareRoot()
        let dt = previous.map { time - $0.time } ?? 1
        let step = speed.isFinite ? speed * max(dt, 1e-3) : .infinity
        let slow = speed < configuration.stationarySpeed ? 1 : min(1, max(0, 1 - step / sigma))
        let k = configuration.kMoving + (configuration.kStationary - configuration.kMoving) * slow
        let margin = max(configuration.minimumMargin, k * sigmaEff)
        let current = Estimate(position: position, time: time, sigma: sigmaEff)

        // The segment from the previous estimate, if recent enough to interpolate over.
        var segment: (from: Estimate, length: Double)? = nil
        if let p = previous, !timedOut, time > p.time, time - p.time <= configuration.unknownTimeout {
            let length = p.position.angle(to: position)
            // A jump faster than any vehicle (the gate held it until later fixes confirmed it, or the
            // fix came after a timeout): decide at the fix alone.
            if length * Geodesy.earthRadius <= configuration.maximumSpeed * (time - p.time) + 3 * (p.sigma + sigma) {
                segment = (p, length)
            }
        }

        // Candidates: regions whose boxes meet the cap around the segment (or fix), plus active ones.
        let reach = (max(margin, segment.map { max($0.from.sigma, sigmaEff) * configuration.kMoving } ?? 0)
                     + configuration.minimumMargin) / Geodesy.earthRadius
        if let seg = segment {
            let mid = (seg.from.position + position).normalized
            catalog.candidates(near: mid.coordinate, angularRadius: seg.length / 2 + reach, into: &candidates)
            appendZoneSetCandidates(near: mid.coordinate, angularRadius: seg.length / 2 + reach)
        } else {
            catalog.candidates(near: position.coordinate, angularRadius: reach, into: &candidates)
            appendZoneSetCandidates(near: position.coordinate, angularRadius: reach)
        }
        candidates.append(contentsOf: active)
        RegionIndex.deduplicate(&candidates)

        let firstFix = !hadFix
        hadFix = true
        for slot in candidates {
            guard let region = region(at: slot) else { continue }
            var track = tracks[slot] ?? Track(state: firstFix ? .unknown : .outside)
            let decision = region.shape.side(of: position.coordinate, margin: margin)
            switch track.state {
            case .unknown:
                guard let now = decision else { break }
                let was = track.lastKnown
                track.state = now
                track.lastKnown = nil
                if now == .inside, was != .inside {
                    let t = segment.flatMap { crossing(region.shape, from: $0.from, to: current, entering: true) } ?? time
                    enter(&track, region, at: t, into: &events)
                } else if now == .outside, was == .inside {
                    let t = segment.flatMap { crossing(region.shape, from: $0.from, to: current, entering: false) } ?? time
                    exit(&track, region, at: t, into: &events)
                }
            case .outside:
                if decision == .inside {
                    let t = segment.flatMap { crossing(region.shape, from: $0.from, to: current, entering: true) } ?? time
                    track.state = .inside
                    enter(&track, region, at: t, into: &events)
                } else if let seg = segment, let pass = deepestPoint(region.shape, from: seg.from, to: current) {
                    // Segment test: both ends not inside, the path between them deep inside.
                    let sigmaSeg = k * pass.sigma
                    if pass.depth < -max(configuration.minimumMargin, sigmaSeg) {
                        let tIn = bisect(region.shape, seg.from, current, lo: 0, hi: pass.t)
                        enter(&track, region, at: seg.from.time + tIn * (time - seg.from.time), into: &events)
                        if decision == .outside {
                            let tOut = bisect(region.shape, seg.from, current, lo: pass.t, hi: 1)
                            exit(&track, region, at: seg.from.time + tOut * (time - seg.from.time), into: &events)
                            track.state = .outside
                        } else {
                            track.state = .inside
                        }
                    }
                }
            case .inside:
                if decision == .outside {
                    let t = segment.flatMap { crossing(region.shape, from: $0.from, to: current, entering: false) } ?? time
                    track.state = .outside
                    exit(&track, region, at: t, into: &events)
                }
            }
            store(track, slot)
        }
        previous = current
        lastGoodTime = time
        timedOut = false
        // Interpolated times of different regions may come out of order.
        Self.orderBatch(&events, from: firstEvent)
    }

    /// Puts the events appended since `first` in time order, and events at one time by region
    /// identifier (then as appended). Their order then follows neither the regions' slots nor a
    /// zone set's numbering (zones are numbered in its tree's order): the agent on a zone set and
    /// `fencepost replay` on the same zones deliver simultaneous events in the same order.
    /// - Complexity: O(k log k) for k events, usually 0 or 1.
    static func orderBatch(_ events: inout [RegionEvent], from first: Int) {
        guard events.count - first > 1 else { return }
        let sorted = events[first...].enumerated().sorted { a, b in
            if a.element.time != b.element.time { return a.element.time < b.element.time }
            if a.element.identifier != b.element.identifier { return a.element.identifier < b.element.identifier }
            return a.offset < b.offset
        }
        for (k, e) in sorted.enumerated() { events[first + k] = e.element }
    }

    /// Processes one fix; returns its events.
    public mutating func process(_ fix: Fix, at time: Double) -> [RegionEvent] {
        var events: [RegionEvent] = []
        process(fix, at: time, into: &events)
        return events
    }

    /// Lets time pass without a fix (`time` on the arrival clock of ``process(_:at:into:)``):
    /// fires dwells that fall due and the fix timeout, which runs on the arrival clock from the
    /// last fix.
    public mutating func advance(to time: Double, into events: inout [RegionEvent]) {
        let first = events.count
        advanceLine(to: gate.time(atArrival: time), into: &events)
        Self.orderBatch(&events, from: first)
    }

    /// ``advance(to:into:)`` with `time` on the fix time line: dwells due up to the timeout, the
    /// timeout, then dwells up to `time`.
    private mutating func advanceLine(to time: Double, into events: inout [RegionEvent]) {
        guard let g = lastGoodTime, !timedOut, time - g > configuration.unknownTimeout else {
            fireDwells(upTo: time, into: &events)
            return
        }
        let due = g + configuration.unknownTimeout
        fireDwells(upTo: due, into: &events)
        defer { fireDwells(upTo: time, into: &events) }
        timedOut = true
        history.removeAll()
        for slot in active.sorted() {
            guard var track = tracks[slot], track.state == .inside, let region = region(at: slot) else { continue }
            track.state = .unknown
            track.lastKnown = .inside
            track.dwellDue = nil
            if !track.finished { events.append(RegionEvent(.unknown, region.identifier, time: due)) }
            tracks[slot] = track
        }
    }

    // MARK: Helpers

    private mutating func store(_ track: Track, _ slot: Int32) {
        if track.state == .outside && track.dwellDue == nil {
            active.remove(slot)
            if track.hasHistory || track.lastKnown != nil { tracks[slot] = track } else { tracks.removeValue(forKey: slot) }
        } else {
            active.insert(slot)
            tracks[slot] = track
        }
    }

    private mutating func fireDwells(upTo time: Double, into events: inout [RegionEvent]) {
        var due: [(Double, Int32)] = []
        for s in active { if let d = tracks[s]?.dwellDue, d <= time { due.append((d, s)) } }
        guard !due.isEmpty else { return }
        for (d, s) in due.sorted(by: { $0 < $1 }) {
            guard var track = tracks[s], let region = region(at: s) else { continue }
            track.dwellDue = nil
            if track.state == .inside {
                if region.notifyOnEntry { emit(.dwell, &track, region, at: d, into: &events) }
                track.visitReported = true
            }
            store(track, s)
        }
    }

    private func enter(_ track: inout Track, _ region: Region, at t: Double, into events: inout [RegionEvent]) {
        track.visitReported = false
        if let dwell = region.dwell {
            track.dwellDue = t + dwell
        } else if region.notifyOnEntry {
            emit(.enter, &track, region, at: t, into: &events)
            track.visitReported = true
        }
    }

    private func exit(_ track: inout Track, _ region: Region, at t: Double, into events: inout [RegionEvent]) {
        track.dwellDue = nil
        if region.notifyOnExit && (region.dwell == nil || track.visitReported) {
            emit(.exit, &track, region, at: t, into: &events)
        }
        track.visitReported = false
    }

    private func emit(_ kind: RegionEvent.Kind, _ track: inout Track, _ region: Region, at t: Double,
                      into events: inout [RegionEvent]) {
        guard !track.finished else { return }
        switch kind {
        case .enter: if t < track.lastEnter + region.cooldown { return }; track.lastEnter = t
        case .exit: if t < track.lastExit + region.cooldown { return }; track.lastExit = t
        case .dwell: if t < track.lastDwell + region.cooldown { return }; track.lastDwell = t
        case .unknown: break
        }
        if !region.repeats { track.finished = true }
        events.append(RegionEvent(kind, region.identifier, time: t))
    }

    /// The point of the great-circle segment `from`→`to` at fraction t.
    private func point(_ a: Estimate, _ b: Estimate, _ t: Double) -> Vec3 {
        (a.position * (1 - t) + b.position * t).normalized
    }

    /// The deepest point of the segment inside `shape` (sampled every ≤ 2 m, at most 256 samples;
    /// between samples a circle's depth changes by less than (1 m)²/(2r)), when it is inside at all.
    private func deepestPoint(_ shape: RegionShape, from a: Estimate, to b: Estimate)
        -> (t: Double, depth: Double, sigma: Double)? {
        let length = Geodesy.earthRadius * a.position.angle(to: b.position)
        let n = min(256, max(2, Int(length / 2)))
        // Point location first (O(1) for a circle, a descent of the edge index for a polygon):
        // the distance, which costs more, only for samples inside. A segment outside the shape,
        // the common case, costs no distance at all.
        var best = (t: 0.0, depth: Double.infinity)
        for i in 1 ..< n {
            let t = Double(i) / Double(n)
            let p = point(a, b, t).coordinate
            guard shape.isWithin(p, margin: 0) else { continue }
            let d = shape.signedDistance(to: p)
            if d < best.depth { best = (t, d) }
        }
        guard best.depth < 0 else { return nil }
        let t = best.t
        // Linear, not root-sum-square: consecutive averaged estimates share most of their fixes,
        // so their errors are correlated and interpolation does not shrink them.
        let sigma = a.sigma * (1 - t) + b.sigma * t
        return (t, best.depth, sigma)
    }

    /// The fraction of `a`→`b` where the path crosses the boundary, or nil when both ends are on
    /// the same side.
    private func crossing(_ shape: RegionShape, from a: Estimate, to b: Estimate, entering: Bool) -> Double? {
        // Sides only: point location, no distance (a polygon's costs a search of its edges).
        let in0 = shape.isWithin(a.position.coordinate, margin: 0)
        let in1 = shape.isWithin(b.position.coordinate, margin: 0)
        guard in0 != in1 else { return nil }
        let t = bisect(shape, a, b, lo: 0, hi: 1)
        return a.time + t * (b.time - a.time)
    }

    /// Bisection for the sign change of d(t) on [lo, hi] (30 steps: < 1 mm on a 1 km segment).
    private func bisect(_ shape: RegionShape, _ a: Estimate, _ b: Estimate, lo: Double, hi: Double) -> Double {
        var lo = lo, hi = hi
        let sLo = shape.isWithin(point(a, b, lo).coordinate, margin: 0)
        for _ in 0 ..< 30 {
            let m = (lo + hi) / 2
            if shape.isWithin(point(a, b, m).coordinate, margin: 0) == sLo { lo = m } else { hi = m }
        }
        return (lo + hi) / 2
    }
}

extension Fix {
    /// The fix's UTC time as seconds since the epoch with the fraction, for ``RegionMonitor`` (nil
    /// without a date).
    public var secondsSinceEpoch: Double? {
        time.map { Double($0.secondsSinceEpoch) + Double(nanoseconds) / 1e9 }
    }
}
