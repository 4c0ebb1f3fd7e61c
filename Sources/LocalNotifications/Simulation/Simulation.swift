// The whole engine in virtual time, no hardware: what `fencepost simulate` and the scenario tests
// run. A virtual "true" time moves from wakeup to wakeup; the device's wall clock is the true time
// plus an offset that steps move, and its monotonic clock counts from a boot.
import CivilTime
import Position

/// One line of a simulation's record.
public struct SimulationEvent: Hashable, Sendable {
    /// True time, seconds since the epoch (what a reference clock would say).
    public var time: Int64
    /// What the device's wall clock said.
    public var wall: WallInstant
    public var requestIdentifier: String
    /// "delivered", "late", "coalesced", or an outcome kind ("missed", "evicted", …).
    public var event: String
    /// The delivery, for deliveries.
    public var delivery: DeliveredNotification?
    /// The outcome, for outcomes.
    public var outcome: Outcome?
}

extension SimulationEvent {
    /// The deliveries, then the outcomes, of `out`, as events at `time` (true) and `wall` (device).
    public static func events(of out: EngineOutput, time: Int64, wall: WallInstant) -> [SimulationEvent] {
        out.deliveries.map {
            SimulationEvent(time: time, wall: wall, requestIdentifier: $0.requestIdentifier,
                            event: $0.outcome == .onTime ? "delivered" : $0.outcome.name, delivery: $0, outcome: nil)
        } + out.outcomes.map {
            SimulationEvent(time: time, wall: wall, requestIdentifier: $0.requestIdentifier, event: $0.kind.rawValue,
                            delivery: nil, outcome: $0)
        }
    }
}

/// An engine driven through virtual time, with the durable state mirrored in a ``MemoryStore`` so
/// that a crash and restart can be simulated.
public struct Simulation {
    public var engine: NotificationEngine
    public private(set) var store = MemoryStore()
    /// True time, nanoseconds since the epoch.
    public private(set) var now: Int64
    /// True time of the last boot (the monotonic clock's zero).
    public private(set) var bootTime: Int64
    /// Seconds the device's wall clock is ahead of true time.
    public var wallOffset: Int64 = 0
    /// Whether the shell would call the wall clock trusted (NTP).
    public var wallTrusted = true
    public private(set) var events: [SimulationEvent] = []
    /// Every delivery so far, by identifier — to prove none is delivered twice.
    public private(set) var deliveryCount: [String: Int] = [:]

    /// A simulation starting at `start` (true time), the device booted then.
    public init(engine: NotificationEngine, start: WallInstant) {
        self.engine = engine
        self.now = start.secondsSinceEpoch * 1_000_000_000
        self.bootTime = now
    }

    /// The device's clock reading now.
    public var clock: EngineClock {
        EngineClock(wall: WallInstant(secondsSinceEpoch: floorDivide(now, 1_000_000_000) + wallOffset), wallTrusted: wallTrusted,
                    monotonic: MonotonicInstant(nanosecondsSinceBoot: UInt64(now - bootTime)))
    }

    /// True time in seconds.
    public var time: Int64 { floorDivide(now, 1_000_000_000) }

    func floorDivide(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

    /// Records an engine output: persists its changes, logs deliveries and outcomes.
    public mutating func take(_ out: EngineOutput) {
        store.apply(out.changes)
        for d in out.deliveries { deliveryCount[d.identifier, default: 0] += 1 }
        events += SimulationEvent.events(of: out, time: time, wall: clock.wall)
    }

    /// Runs the engine up to true time `end` (seconds), waking at every deadline it asks for.
    /// - Complexity: O(wakeups) engine steps.
    public mutating func run(until end: WallInstant) {
        runNanoseconds(until: SaturatingTime.multiply(end.secondsSinceEpoch, 1_000_000_000))
    }

    /// When `engine` next wants to be advanced, in true nanoseconds, for a device whose wall clock
    /// is `wallOffset` seconds ahead and whose monotonic clock started at true time `bootTime`.
    public static func nextWake(of engine: NotificationEngine, wallOffset: Int64, bootTime: Int64) -> Int64? {
        let w = engine.nextWakeup
        var next: Int64? = nil
        // Saturating: a calendar fire after 2262 (a yearly trigger, years up to 9999) or a deadline
        // that never comes is past any end the simulation can have.
        if let wall = w.wall { next = SaturatingTime.multiply(SaturatingTime.add(wall.secondsSinceEpoch, -wallOffset), 1_000_000_000) }
        if let m = w.monotonic {
            let t = SaturatingTime.add(bootTime, Int64(clamping: m.nanosecondsSinceBoot))
            next = min(next ?? t, t)
        }
        return next
    }

    /// The instant a virtual-time run advances to next: the engine's next wakeup, not before
    /// `now`, nil when it is after `end`. Shared by every run loop (in memory and durable).
    public static func nextStep(of engine: NotificationEngine, wallOffset: Int64, bootTime: Int64,
                                now: Int64, lastWake: Int64?, end: Int64) -> Int64? {
        // Fires left by the per-call budget: again at once, as the agent's loop does.
        if engine.hasDeferredFires && now <= end { return now }
        guard var t = nextWake(of: engine, wallOffset: wallOffset, bootTime: bootTime), t <= end else { return nil }
        t = max(t, now)
        // A guard against a run without progress: asked again for an instant already handled, go
        // 1 ms on (the engine's deadlines are rounded up, so this is not expected to happen).
        if t == lastWake { t += 1_000_000 }
        return t <= end ? t : nil
    }

    mutating func runNanoseconds(until end: Int64) {
        var lastWake: Int64? = nil
        while let t = Self.nextStep(of: engine, wallOffset: wallOffset, bootTime: bootTime, now: now, lastWake: lastWake, end: end) {
            now = t
            lastWake = t
            take(engine.advance(clock: clock))
        }
        if end > now { now = end }
        repeat { take(engine.advance(clock: clock)) } while engine.hasDeferredFires
    }

    /// Feeds a fix that arrives at true time `at` (nanoseconds), running the engine up to it first.
    public mutating func feed(_ fix: Fix, atNanoseconds at: Int64) {
        if at > now { runNanoseconds(until: at) }
        take(engine.process(fix, clock: clock))
    }

    /// Adds a request now.
    public mutating func add(_ request: NotificationRequest) throws(RequestError) {
        take(try engine.add(request, clock: clock))
    }

    /// Answers a delivery now.
    public mutating func respond(to identifier: String, action: String) throws(RequestError) {
        take(try engine.respond(to: identifier, action: action, clock: clock))
    }

    /// Steps the device's wall clock by `seconds` (true time does not move) and lets the engine see it.
    public mutating func stepWallClock(by seconds: Int64) {
        wallOffset += seconds
        take(engine.advance(clock: clock))
    }

    /// Changes the device zone now.
    public mutating func setDeviceZone(_ zone: ZoneRules) {
        take(engine.setDeviceZone(zone, clock: clock))
    }

    /// Simulates the agent going down now and starting again at true time `restart`: a new engine
    /// (`fresh`, with no requests) is restored from the durable state. With `reboot`, the monotonic
    /// clock restarts from zero at `restart`.
    public mutating func restart(at restart: WallInstant, reboot: Bool, fresh: NotificationEngine) {
        now = max(now, restart.secondsSinceEpoch * 1_000_000_000)
        if reboot { bootTime = now }
        engine = fresh
        take(engine.restore(store.snapshot, clock: clock))
    }
}
