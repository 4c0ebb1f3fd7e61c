// Time: clock readings, trust and steps, the two wheels, and the shell's next wakeup.
import CivilTime
import Geofencing
import Position
import TimingWheel

extension NotificationEngine {
    /// Whether `clock`'s wall time may be acted on.
    func isTrusted(_ clock: EngineClock) -> Bool {
        (clock.wallTrusted || trust.gnssAgreed) && clock.wall >= configuration.minimumTrustedWall
    }

    /// Takes in a clock reading: detects a step of the wall clock (against the last reading plus
    /// the monotonic time elapsed) and changes of trust, and rebuilds the calendar wheel when the
    /// clock went back, trust returned or the zone changed.
    mutating func observe(_ clock: EngineClock) -> EngineOutput {
        var out = EngineOutput()
        var steppedBack = false
        if let last = trust.lastClock, clock.monotonic >= last.monotonic {
            let elapsed = Int64((clock.monotonic.nanosecondsSinceBoot - last.monotonic.nanosecondsSinceBoot) / 1_000_000_000)
            let drift = clock.wall.secondsSinceEpoch - (last.wall.secondsSinceEpoch + elapsed)
            if abs(drift) > configuration.stepThreshold {
                trust.gnssAgreed = false
                steppedBack = drift < 0
            }
        }
        trust.lastClock = clock
        let trusted = isTrusted(clock)
        let wasTrusted = trust.wallTrusted
        trust.wallTrusted = trusted
        if trusted {
            if !wasTrusted {
                // Requests added while the clock was untrusted start from the first trusted time.
                for i in table.slots.indices {
                    guard var e = table.slots[i], case .calendar = e.request.trigger, e.progress.after == nil else { continue }
                    e.progress.after = clock.wall.secondsSinceEpoch
                    table.slots[i] = e
                    out.changes.append(.setProgress(requestIdentifier: e.request.identifier, e.progress))
                }
            }
            if wasTrusted && steppedBack { rewindCalendarProgress(to: clock, into: &out) }
            if !wasTrusted || steppedBack || clock.wall.secondsSinceEpoch < Int64(calendar.wheel.now) {
                rebuildWallWheel(at: clock.wall)
            }
        } else if wasTrusted {
            // Held: no calendar timer runs on an untrusted clock.
            deferredClock = nil
            calendar.wheel = TimingWheel()
            for i in table.slots.indices where table.slots[i]?.kind == .calendar {
                table.slots[i]!.timer = nil
                table.slots[i]!.due = nil
            }
        }
        return out
    }

    /// After the wall clock stepped back (by more than the step threshold), calendar triggers
    /// search their next fire from the new time, not from the fires handled while the clock was
    /// ahead: a tester who sets tomorrow and then resets the clock must not lose the real fires of
    /// today and tomorrow. The fires handled ahead that come again are recorded per request (a
    /// `repeated` outcome: how many, the first and last); their deliveries keep their own ids
    /// (the fire count goes on), so nothing is stored twice.
    /// - Complexity: O(calendar requests + fires counted), the count bounded per request.
    mutating func rewindCalendarProgress(to clock: EngineClock, into out: inout EngineOutput) {
        let now = clock.wall.secondsSinceEpoch
        for i in table.slots.indices {
            guard let e = table.slots[i], e.kind == .calendar, let after = e.progress.after, after > now else { continue }
            var count: Int64 = 0
            var first: Int64?, last: Int64?
            var t = now
            while count < Self.repeatedCountLimit, let n = nextCalendarFire(e, after: t), n <= after {
                if first == nil { first = n }
                last = n
                count += 1
                t = n
            }
            table.slots[i]!.progress.after = now
            out.changes.append(.setProgress(requestIdentifier: e.request.identifier, table.slots[i]!.progress))
            guard count > 0 else { continue }
            let o = Outcome(kind: .repeated, requestIdentifier: e.request.identifier, date: clock.wall, count: count,
                            firstFire: first.map(WallInstant.init(secondsSinceEpoch:)), lastFire: last.map(WallInstant.init(secondsSinceEpoch:)),
                            detail: "the wall clock went back to \(clock.wall): \(count == Self.repeatedCountLimit ? "at least " : "")\(count) fire\(count == 1 ? "" : "s") handled while it was ahead will come again")
            out.outcomes.append(o)
            out.changes.append(.outcome(o))
        }
    }

    /// Most fires counted per request by ``rewindCalendarProgress(to:into:)`` (a per-second
    /// trigger and a step back of a year would otherwise count 31 million).
    static var repeatedCountLimit: Int64 { 10_000 }

    /// Reschedules every calendar trigger on a new wheel at `wall`.
    /// - Complexity: O(calendar requests × next-fire cost): 100k in a few milliseconds.
    mutating func rebuildWallWheel(at wall: WallInstant) {
        // Fires left by the budget are then handled as of the new clock (see fireDue).
        deferredClock = nil
        var wheel = TimingWheel<Int32>(now: UInt64(max(0, wall.secondsSinceEpoch)), capacity: table.timeBasedCount)
        let device = deviceZone
        let trusted = trust.wallTrusted
        // Through the buffer, in place: reading `slots[i]?.kind` copies the whole entry (a dozen
        // retains and releases), which made a 100k rebuild cost ~1 µs a request.
        table.slots.withUnsafeMutableBufferPointer { buffer in
            for i in buffer.indices where buffer[i]?.kind == .calendar {
                Self.schedule(&buffer[i]!, slot: Int32(i), on: &wheel, deviceZone: device, trusted: trusted)
            }
        }
        calendar.wheel = wheel
    }

    /// Arms `e`'s calendar timer on `wheel` (the rebuild's inner step, on an entry in place).
    static func schedule(_ e: inout Entry, slot: Int32, on wheel: inout TimingWheel<Int32>, deviceZone: ZoneRules, trusted: Bool) {
        e.timer = nil
        e.due = nil
        guard trusted, let after = e.progress.after else { return }
        let due = nextCalendarFire(e, after: after, deviceZone: deviceZone)
        e.due = due
        if let due { e.timer = wheel.schedule(at: UInt64(max(0, due)), slot) }
    }

    /// The first fire of `e` strictly after `after` (wall seconds), in its zone.
    func nextCalendarFire(_ e: Entry, after: Int64) -> Int64? {
        Self.nextCalendarFire(e, after: after, deviceZone: deviceZone)
    }

    /// The first fire of `e` strictly after `after` (wall seconds), in its fixed zone or else
    /// `deviceZone`.
    static func nextCalendarFire(_ e: Entry, after: Int64, deviceZone: ZoneRules) -> Int64? {
        let t = WallInstant(secondsSinceEpoch: after)
        if case .calendar(let trigger) = e.request.trigger, let recurrence = trigger.recurrence {
            if let zone = e.fixedZone?.rules { return recurrence.nextDate(after: t, in: zone)?.secondsSinceEpoch }
            return recurrence.nextDate(after: t, in: deviceZone)?.secondsSinceEpoch
        }
        guard let rule = e.calendarRule else { return nil }
        // Branches rather than `e.fixedZone?.rules ?? deviceZone`, which would copy (retain) the zone's arrays.
        if let zone = e.fixedZone?.rules {
            return rule.schedule.nextDate(after: t, in: zone, policy: rule.policy, repeatedTime: rule.repeatedTime)?.secondsSinceEpoch
        }
        return rule.schedule.nextDate(after: t, in: deviceZone, policy: rule.policy, repeatedTime: rule.repeatedTime)?.secondsSinceEpoch
    }

    /// Arms the calendar timer of `slot` (in place: the entry is not copied out and back).
    mutating func scheduleCalendar(_ slot: Int32) {
        let i = Int(slot)
        guard trust.wallTrusted, let after = table.slots[i]?.progress.after else { return }
        let due = nextCalendarFire(table.slots[i]!, after: after)
        table.slots[i]!.due = due
        if let due { table.slots[i]!.timer = calendar.wheel.schedule(at: UInt64(max(0, due)), slot) }
    }

    mutating func scheduleInterval(_ slot: Int32) {
        guard var e = table.slots[Int(slot)], case .interval(let t) = e.request.trigger else { return }
        // Saturating: fires and the anchor may come from a state file (see InputRanges).
        let due = SaturatingTime.add(e.anchorMilliseconds, SaturatingTime.multiply(SaturatingTime.add(e.progress.fires, 1), t.milliseconds))
        e.due = due
        e.timer = intervals.wheel.schedule(at: UInt64(max(0, due)), slot)
        table.slots[Int(slot)] = e
    }

    /// Moves the engine to `clock`: fires what is due (calendar triggers only on a trusted wall
    /// clock), applies missed-fire policies to fires handled late, lets the region monitor's
    /// timeouts and dwells run.
    ///
    /// The shell calls this when a timer it armed from ``nextWakeup`` expires, when the wall clock
    /// was set (`ECANCELED` from the `TFD_TIMER_CANCEL_ON_SET` timer), at start, and at once
    /// while ``hasDeferredFires`` (at most ``EngineConfiguration/firesPerTurn`` timer fires are
    /// handled a call).
    /// - Complexity: O(``EngineConfiguration/firesPerTurn`` + region events + rebuild when the
    ///   clock went back).
    public mutating func advance(clock: EngineClock) -> EngineOutput {
        var out = observe(clock)
        fireDue(clock, into: &out)
        return out
    }

    /// Whether fires that were due at an earlier call wait (more than
    /// ``EngineConfiguration/firesPerTurn`` were): the shell calls ``advance(clock:)`` again at once.
    public var hasDeferredFires: Bool { deferredClock != nil }

    /// Fires what the wheels hold due, at most ``EngineConfiguration/firesPerTurn`` of it, then
    /// the region monitor's timeouts and dwells and the delivered list's pruning.
    ///
    /// Fires left over by the budget are handled as of the clock of the call that found them due
    /// (``deferredClock``): same lateness, same missed-fire outcome, same delivery time as if that
    /// call had handled them all, in the same order (calendar before interval, each wheel in
    /// deadline order). Only after them come fires due at a later clock. A wall clock step or a
    /// change of trust meanwhile (``observe(_:)`` rebuilds or holds the calendar wheel) ends that:
    /// what is left is handled as of the new clock.
    mutating func fireDue(_ clock: EngineClock, into out: inout EngineOutput) {
        var budget = max(1, configuration.firesPerTurn)
        if let held = deferredClock {
            deferredClock = nil
            fireWheels(held, budget: &budget, into: &out)
        }
        if deferredClock == nil { fireWheels(clock, budget: &budget, into: &out) }
        location.events.removeAll(keepingCapacity: true)
        location.monitor.advance(to: clock.monotonicSeconds, into: &location.events)
        handleRegionEvents(clock, into: &out)
        pruneDelivered(clock, into: &out)
    }

    /// Fires at most `budget` of what both wheels hold due at `clock` (spending it); when fires
    /// due at `clock` are left, ``deferredClock`` keeps `clock`.
    /// - Complexity: O(`budget` fires + the wheels' cascades).
    mutating func fireWheels(_ clock: EngineClock, budget: inout Int, into out: inout EngineOutput) {
        if trust.wallTrusted {
            let target = max(UInt64(max(0, clock.wall.secondsSinceEpoch)), calendar.wheel.now)
            let (fired, more) = calendar.wheel.advance(to: target, limit: budget)
            budget -= fired.count
            for (_, _, slot) in fired {
                table.slots[Int(slot)]?.timer = nil
                handleCalendarDue(slot, clock, into: &out)
            }
            if more { deferredClock = clock; return }
        }
        let nowMs = max(clock.monotonicMilliseconds, intervals.wheel.now)
        let (fired, more) = intervals.wheel.advance(to: nowMs, limit: budget)
        budget -= fired.count
        for (_, _, slot) in fired {
            table.slots[Int(slot)]?.timer = nil
            handleIntervalDue(slot, clock, into: &out)
        }
        if more { deferredClock = clock }
    }

    /// When the shell must call ``advance(clock:)`` next: a wall time (arm the CLOCK_REALTIME
    /// timer; nil while the clock is untrusted or no calendar fire is pending) and a monotonic time
    /// (arm the CLOCK_BOOTTIME timer: intervals, dwell, the fix timeout).
    /// - Complexity: O(1) for the wheels; O(active regions) for the monitor.
    public var nextWakeup: (wall: WallInstant?, monotonic: MonotonicInstant?) {
        let wall = trust.wallTrusted ? calendar.wheel.nextDeadline.map { WallInstant(secondsSinceEpoch: Int64($0)) } : nil
        // Saturating (a deadline past UInt64 nanoseconds is one that never comes; InputRanges keeps
        // outside durations far below that).
        var mono = intervals.wheel.nextDeadline.map { SaturatingTime.multiply($0, 1_000_000) }
        if let m = location.monitor.nextDeadline, m.isFinite, m >= 0 {
            // Rounded up, and 1 ns past: the monitor's tests are strict (`age > timeout`), so a
            // wakeup at its deadline rounded down would find nothing due and be asked for again.
            let ns = SaturatingTime.add(SaturatingTime.nanosecondsRoundedUp(m), 1)
            mono = min(mono ?? ns, ns)
        }
        return (wall, mono.map(MonotonicInstant.init(nanosecondsSinceBoot:)))
    }

    /// Sets the device zone (floating calendar triggers and quiet hours follow it). A floating
    /// trigger fires at each matching local time the device lives through in its new zone; a fire
    /// whose local time the change jumped over is not delivered late.
    public mutating func setDeviceZone(_ zone: ZoneRules, clock: EngineClock) -> EngineOutput {
        var out = observe(clock)
        deviceZone = zone
        if trust.wallTrusted {
            let now = clock.wall.secondsSinceEpoch
            for i in table.slots.indices {
                guard var e = table.slots[i], case .calendar = e.request.trigger, e.fixedZone == nil,
                      let after = e.progress.after, after < now else { continue }
                e.progress.after = now
                table.slots[i] = e
                out.changes.append(.setProgress(requestIdentifier: e.request.identifier, e.progress))
            }
            rebuildWallWheel(at: clock.wall)
        }
        fireDue(clock, into: &out)
        return out
    }

    // MARK: Fires

    mutating func handleCalendarDue(_ slot: Int32, _ clock: EngineClock, into out: inout EngineOutput) {
        guard var e = table.slots[Int(slot)], let first = e.due else { return }
        let now = clock.wall.secondsSinceEpoch
        var count: Int64 = 1, last = first
        var previous: Int64? = nil
        if e.request.trigger.repeats {
            while count < 1_000_000, let n = nextCalendarFire(e, after: last), n <= now {
                previous = last; last = n; count += 1
            }
        }
        e.progress.after = last
        e.progress.fires += count
        e.due = nil
        table.slots[Int(slot)] = e
        let more = e.request.trigger.repeats && nextCalendarFire(e, after: last) != nil
        record(slot, more: more, into: &out)
        settle(e, count: count, first: WallInstant(secondsSinceEpoch: first),
               previous: previous.map(WallInstant.init(secondsSinceEpoch:)), last: WallInstant(secondsSinceEpoch: last),
               lateness: now - last, clock, into: &out)
        if more { scheduleCalendar(slot) }
    }

    mutating func handleIntervalDue(_ slot: Int32, _ clock: EngineClock, into out: inout EngineOutput) {
        guard var e = table.slots[Int(slot)], let due = e.due, case .interval(let t) = e.request.trigger else { return }
        let nowMs = Int64(clock.monotonicMilliseconds)
        var count: Int64 = 1, last = due
        if t.repeats, nowMs > due {
            let extra = (nowMs - due) / t.milliseconds
            count += extra
            last = due + extra * t.milliseconds
        }
        e.progress.fires += count
        e.due = nil
        table.slots[Int(slot)] = e
        let trusted = trust.wallTrusted
        let wallOf = { (ms: Int64) -> WallInstant? in
            trusted ? WallInstant(secondsSinceEpoch: clock.wall.secondsSinceEpoch - (nowMs - ms) / 1000) : nil
        }
        record(slot, more: t.repeats, into: &out)
        settle(e, count: count, first: wallOf(due), previous: count > 1 ? wallOf(last - t.milliseconds) : nil,
               last: wallOf(last), lateness: (nowMs - last) / 1000, clock, into: &out)
        if t.repeats { scheduleInterval(slot) }
    }

    /// Persists a request's progress after a fire, or removes it when it has no more fires.
    mutating func record(_ slot: Int32, more: Bool, into out: inout EngineOutput) {
        guard let e = table.slots[Int(slot)] else { return }
        if more {
            out.changes.append(.setProgress(requestIdentifier: e.request.identifier, e.progress))
        } else {
            removeEntry(at: slot)
            out.changes.append(.removeRequest(e.request.identifier))
        }
    }

    /// Applies the missed-fire policy to `count` fires of `e` handled now, the last `lateness`
    /// seconds late, and delivers or records them.
    mutating func settle(_ e: Entry, count: Int64, first: WallInstant?, previous: WallInstant?, last: WallInstant?,
                         lateness: Int64, _ clock: EngineClock, into out: inout EngineOutput) {
        let id = e.request.identifier
        func missed(_ n: Int64, _ from: WallInstant?, _ to: WallInstant?, _ why: String) {
            let o = Outcome(kind: .missed, requestIdentifier: id, date: trust.wallTrusted ? clock.wall : nil, count: n,
                            firstFire: from, lastFire: to, detail: why)
            out.outcomes.append(o)
            out.changes.append(.outcome(o))
        }
        if lateness <= configuration.onTimeTolerance {
            if count == 1 { deliver(e, .onTime, scheduled: last, event: nil, clock, into: &out); return }
            switch e.request.missedFirePolicy {
            case .coalesce:
                deliver(e, .coalesced(count: count), scheduled: last, event: nil, clock, into: &out)
            case .skip, .deliverLate:
                deliver(e, .onTime, scheduled: last, event: nil, clock, into: &out)
                missed(count - 1, first, previous, "missed while the agent could not deliver; the latest fire was delivered on time")
            }
            return
        }
        switch e.request.missedFirePolicy {
        case .coalesce:
            deliver(e, count == 1 ? .late : .coalesced(count: count), scheduled: last, event: nil, clock, into: &out)
        case .deliverLate(let grace):
            if lateness <= grace {
                deliver(e, .late, scheduled: last, event: nil, clock, into: &out)
                if count > 1 { missed(count - 1, first, previous, "missed; only the latest fire is delivered late") }
            } else {
                missed(count, first, last, "missed by \(lateness) s, beyond the grace window of \(grace) s")
            }
        case .skip:
            missed(count, first, last, "missed by \(lateness) s; the request's policy is skip")
        }
    }

    /// Records and returns one delivery of `e`'s content.
    mutating func deliver(_ e: Entry, _ outcome: DeliveryOutcome, scheduled: WallInstant?, event: String?,
                          _ clock: EngineClock, into out: inout EngineOutput) {
        deliver(e.request.identifier, generation: e.progress.generation, fire: e.progress.fires, content: e.request.content,
                outcome, scheduled: scheduled, event: event, clock, into: &out)
    }

    /// Delivers fire `fire` of generation `generation` of `identifier` (a request or a zone of the
    /// zone set): the delivery's id is `identifier/generation/fire`.
    mutating func deliver(_ identifier: String, generation: Int64, fire: Int64, content: NotificationContent,
                          _ outcome: DeliveryOutcome, scheduled: WallInstant?, event: String?,
                          _ clock: EngineClock, into out: inout EngineOutput) {
        let date = trust.wallTrusted ? clock.wall : nil
        let d = DeliveredNotification(
            identifier: "\(identifier)/\(generation)/\(fire)",
            requestIdentifier: identifier, content: content, scheduled: scheduled, date: date,
            outcome: outcome, regionEvent: event,
            signal: DeliverySignal.decide(for: content, at: date, settings: configuration.alertSettings, deviceZone: deviceZone),
            response: nil, respondedAt: nil)
        deliveries.items.append(d)
        out.deliveries.append(d)
        out.changes.append(.putDelivery(d))
    }
}
