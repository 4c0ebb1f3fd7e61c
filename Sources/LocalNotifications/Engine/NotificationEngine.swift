// The notification center's engine (design §1, §5): pure, no clock reads, no I/O. The shell
// hands it clock readings, fixes and responses; it answers with deliveries, outcomes and the state
// changes to persist, and tells the shell when to wake next.
//
// Time:
//   calendar triggers   a TimingWheel on wall seconds, held while the wall clock is untrusted;
//                       rebuilt when the clock is stepped back, trust returns or the zone changes
//   interval triggers   a TimingWheel on monotonic milliseconds (unaffected by wall steps); a
//                       repeating one fires at anchor + k·interval (no drift)
//   location triggers   a RegionMonitor on monotonic seconds
// A fire handled more than `onTimeTolerance` after its time was missed: the request's
// MissedFirePolicy decides (deliver late within a grace window, coalesce, skip), and every
// missed fire is reported as an Outcome. Each scheduled instant fires at most once per request
// generation: progress (`after`, `fires`) moves in the same StateChange batch as the delivery.
import CivilTime
import Geofencing
import Position
import RecentIDs
import TimingWheel

/// The pure core of the notification center.
public struct NotificationEngine {
    public var configuration: EngineConfiguration
    /// The zone of floating calendar triggers and of quiet hours.
    public internal(set) var deviceZone: ZoneRules
    let zoneLookup: (String) -> ZoneRules?

    /// The trigger's kind, kept beside the request so hot loops (a rebuild of 100k calendar
    /// timers) test a byte instead of matching the trigger enum and copying its payload.
    enum Kind: UInt8 { case calendar, interval, location }

    /// A calendar trigger's fixed zone, boxed: most triggers float (follow the device zone), and
    /// an inline `ZoneRules?` would make every slot ~170 bytes larger.
    final class FixedZone: Sendable {
        let rules: ZoneRules
        init(_ rules: ZoneRules) { self.rules = rules }
    }

    struct Entry {
        var request: NotificationRequest
        var progress: TriggerProgress
        var kind: Kind
        /// Calendar triggers with a `tz` only: that zone's rules.
        var fixedZone: FixedZone?
        /// The calendar trigger's compiled match with its policies, from one look at the trigger,
        /// made again at each use (validation and a few comparisons, once per fire) rather than
        /// kept: kept, it was ~400 of the ~600 bytes each calendar request cost beside its slot
        /// (a boxed copy of the match the request already holds, plus its date filter). nil for
        /// other kinds, and when the match cannot be compiled (a restored row): the request never
        /// fires.
        var calendarRule: (schedule: CalendarSchedule, policy: MatchingPolicy, repeatedTime: RepeatedTimePolicy)? {
            guard case .calendar(let t) = request.trigger,
                  let schedule = try? CalendarSchedule(t.match, weekRules: t.weekRules) else { return nil }
            return (schedule, t.policy, t.repeatedTime)
        }
        var timer: TimerHandle?
        /// Calendar: wall seconds of the next fire; interval: monotonic ms of the next fire.
        var due: Int64?
        /// Interval: the start, monotonic ms (may be negative after a restore: before this boot).
        var anchorMilliseconds: Int64 = 0
        var sequence: Int64
    }

    // The state, one value per concern (each in its own file); the engine routes between them.
    /// Pending requests by slot and identifier, and their counts per kind.
    var table = RequestTable()
    /// Add order and the last removals, for listings and their pages.
    var paging = PagingOrder()
    /// Calendar triggers' timers, on wall seconds.
    var calendar = CalendarSchedules()
    /// Interval triggers' timers, on monotonic milliseconds.
    var intervals = IntervalTimers()
    /// Location triggers' monitor and the mapped zone set's per-zone state.
    var location: LocationState
    var categoryList: [NotificationCategory] = []
    /// Delivered notifications, oldest first.
    var deliveries = DeliveredList()
    /// The next request generation (persisted: identifiers of deliveries never repeat).
    public internal(set) var nextGeneration: Int64 = 1
    /// The last clock reading and whether the wall clock is trusted.
    var trust = ClockTrust()
    /// The clock of the call that found more fires due than ``EngineConfiguration/firesPerTurn``:
    /// the fires it left are handled as of it by the next calls (see ``fireDue(_:into:)``); nil
    /// when none wait.
    var deferredClock: EngineClock?

    /// Whether the wall clock is trusted now (the shell's word or GNSS agreement, and plausible).
    public var wallTrusted: Bool { trust.wallTrusted }

    /// An engine with no requests.
    /// - Parameters:
    ///   - deviceZone: the zone of floating triggers and quiet hours.
    ///   - zoneLookup: resolves a request's `tz` name (the shell reads the TZif file); nil = unknown.
    public init(configuration: EngineConfiguration = EngineConfiguration(), deviceZone: ZoneRules,
                zoneLookup: @escaping (String) -> ZoneRules?) {
        self.configuration = configuration
        self.deviceZone = deviceZone
        self.zoneLookup = zoneLookup
        self.location = LocationState(monitor: RegionMonitor(configuration: configuration.monitor))
    }

    // MARK: Reading

    /// Pending requests in add order.
    /// - Complexity: O(n) plus their next fires.
    public func pending(clock: EngineClock) -> [PendingNotification] {
        var out: [PendingNotification] = []
        out.reserveCapacity(table.slotOf.count)
        forEachInAddOrder { out.append(describe($0, clock: clock)) }
        return out
    }

    /// Calls `body` with each pending entry in add order.
    /// - Complexity: O(n).
    func forEachInAddOrder(_ body: (Entry) -> Void) {
        for i in 0 ..< paging.added.count {
            if let e = liveEntry(paging.added[i]) { body(e) }
        }
    }

    /// The entry of `pair` when it is still pending (not removed, its slot not reused).
    func liveEntry(_ pair: AddOrder.Pair) -> Entry? {
        guard let e = table.slots[Int(pair.slot)], e.sequence == pair.sequence else { return nil }
        return e
    }

    /// One pending request, with its next fire or region state.
    public func pending(_ identifier: String, clock: EngineClock) -> PendingNotification? {
        table.slotOf[identifier].flatMap { table.slots[Int($0)] }.map { describe($0, clock: clock) }
    }

    /// Whether a request with `identifier` is pending.
    /// - Complexity: O(1).
    public func isPending(_ identifier: String) -> Bool { table.slotOf[identifier] != nil }

    /// The number of pending requests.
    public var pendingCount: Int { table.slotOf.count }

    /// Delivered notifications, oldest first.
    public var delivered: [DeliveredNotification] { deliveries.items }

    /// Registered categories.
    public var categories: [NotificationCategory] { categoryList }

    /// Unanswered deliveries: the badge LED is lit while this is > 0.
    public var badgeCount: Int { deliveries.badgeCount }

    func describe(_ e: Entry, clock: EngineClock) -> PendingNotification {
        var p = PendingNotification(request: e.request, nextFire: nil, regionState: nil, waitingFor: nil)
        switch e.request.trigger {
        case .calendar:
            p.nextFire = nextCalendarFire(e, after: e.progress.after ?? clock.wall.secondsSinceEpoch).map(WallInstant.init)
            if !trust.wallTrusted { p.waitingFor = "the wall clock is not trusted yet (no NTP sync or GNSS time); calendar triggers are held" }
        case .interval:
            if let due = e.due {
                let ms = due - Int64(clock.monotonicMilliseconds)
                p.nextFire = WallInstant(secondsSinceEpoch: clock.wall.secondsSinceEpoch + (ms + 999) / 1000)
            }
        case .location:
            p.regionState = location.monitor.state(of: e.request.identifier) ?? .unknown
        }
        return p
    }

    // MARK: Adding and removing

    /// Adds `request`; a pending request with the same identifier is replaced atomically.
    ///
    /// - Throws: the first rule the request breaks (``RequestError``); nothing changes then.
    /// - Returns: the changes to persist, and an `evicted` outcome for each request the pending
    ///   cap dropped (possibly this one, when it fires last).
    /// - Complexity: O(1) plus the first next-fire computation; O(pending) when the cap evicts.
    public mutating func add(_ request: NotificationRequest, clock: EngineClock) throws(RequestError) -> EngineOutput {
        let entry = try checkedEntry(request, clock: clock, categories: categoryList)
        // Nothing has changed yet; from here on nothing throws.
        var out = observe(clock)
        out.append(install(entry, clock: clock))
        return out
    }

    /// Checks `request` as ``add(_:clock:)`` does, changing nothing: its rules, its category
    /// (among `categories`, else the registered ones), its zone and schedule, a calendar rule's
    /// next fire. A list checked so can then be added in parts without one of them failing.
    /// - Complexity: as ``add(_:clock:)`` without the cap.
    public func check(_ request: NotificationRequest, clock: EngineClock, categories: [NotificationCategory]? = nil) throws(RequestError) {
        _ = try checkedEntry(request, clock: clock, categories: categories ?? categoryList)
    }

    /// The entry ``add(_:clock:)`` installs, or the first rule `request` breaks.
    private func checkedEntry(_ request: NotificationRequest, clock: EngineClock, categories: [NotificationCategory]) throws(RequestError) -> Entry {
        try request.validate(limits: configuration.limits)
        if let c = request.content.categoryIdentifier, !categories.contains(where: { $0.identifier == c }) {
            let known = categories.isEmpty ? "none are registered" : "registered: " + categories.map { $0.identifier }.joined(separator: ", ")
            throw RequestError(.unknownCategory, "content.categoryIdentifier \"\(c)\" is not a registered category (\(known))")
        }
        let entry = try makeEntry(request, generation: nextGeneration, clock: clock)
        if case .calendar = request.trigger, nextCalendarFire(entry, after: entry.progress.after ?? clock.wall.secondsSinceEpoch) == nil {
            guard case .calendar(let t) = request.trigger else { preconditionFailure("a calendar entry") }
            throw RequestError(.neverFires, "trigger.calendar \(t.ruleDescription) has no fire after \(entry.progress.after.map { "\(WallInstant(secondsSinceEpoch: $0))" } ?? "now")")
        }
        return entry
    }

    /// Puts a new entry (made with ``nextGeneration``) in place of any pending request with its
    /// identifier, under the next add sequence, and applies the caps.
    mutating func install(_ entry: Entry, clock: EngineClock) -> EngineOutput {
        var entry = entry
        var out = EngineOutput()
        nextGeneration += 1
        out.changes.append(.setNextGeneration(nextGeneration))
        if let old = table.slotOf[entry.request.identifier] { removeEntry(at: old) }
        entry.sequence = paging.nextSequence
        paging.nextSequence += 1
        out.changes.append(.putRequest(entry.request, entry.progress))
        insert(entry, clock: clock)
        out.append(enforceCaps(clock: clock))
        return out
    }

    /// Builds the entry for `request`: resolves its zone and schedule, starts its progress.
    func makeEntry(_ request: NotificationRequest, generation: Int64, clock: EngineClock) throws(RequestError) -> Entry {
        var entry = Entry(request: request, progress: TriggerProgress(generation: generation), kind: Self.kind(of: request.trigger), sequence: 0)
        switch request.trigger {
        case .calendar(let t):
            // Validated here; compiled again at each use (see Entry.calendarRule).
            if t.recurrence == nil {
                do { _ = try CalendarSchedule(t.match, weekRules: t.weekRules) } catch {
                    throw RequestError(.calendar, "trigger.calendar.match: \(error)")
                }
            }
            if let name = t.zoneIdentifier {
                guard let rules = zoneLookup(name) else {
                    throw RequestError(.zone, "trigger.calendar.tz \"\(name)\" is not a zone this device knows (an IANA name such as Europe/Berlin)")
                }
                entry.fixedZone = FixedZone(rules)
            }
            entry.progress.after = isTrusted(clock) ? clock.wall.secondsSinceEpoch : nil
        case .interval:
            entry.anchorMilliseconds = Int64(clock.monotonicMilliseconds)
            entry.progress.anchorWall = isTrusted(clock) ? clock.wall.secondsSinceEpoch : nil
        case .location:
            break
        }
        return entry
    }

    static func kind(of trigger: NotificationTrigger) -> Kind {
        switch trigger {
        case .calendar: .calendar
        case .interval: .interval
        case .location: .location
        }
    }

    /// Removes pending requests by identifier (unknown identifiers are ignored, as on iOS).
    /// - Returns: the removals to persist.
    public mutating func removePending(_ identifiers: [String]) -> EngineOutput {
        var out = EngineOutput()
        for id in identifiers {
            guard let slot = table.slotOf[id] else { continue }
            removeEntry(at: slot)
            out.changes.append(.removeRequest(id))
        }
        return out
    }

    /// Removes every pending request.
    public mutating func removeAllPending() -> EngineOutput {
        for slot in table.slotOf.values { removeEntry(at: slot) }
        paging.added.removeAll()
        var out = EngineOutput()
        out.changes.append(.removeAllRequests)
        return out
    }

    /// Puts `entry` in a slot and schedules it.
    @discardableResult
    mutating func insert(_ entry: Entry, clock: EngineClock) -> Int32 {
        let slot: Int32
        if let s = table.freeSlots.popLast() { slot = s; table.slots[Int(s)] = entry } else { slot = Int32(table.slots.count); table.slots.append(entry) }
        table.slotOf[entry.request.identifier] = slot
        paging.added.append(sequence: entry.sequence, slot: slot)
        do {
            // A second reference to the slots, read by the check while addOrder changes; it must
            // end before the slots are written below, or that write copies all of them (a debug
            // build keeps a local alive to the end of its scope: every insert copied the array).
            let current = table.slots
            paging.added.compactIfSparse(live: table.slotOf.count) { current[Int($0.slot)]?.sequence == $0.sequence }
        }
        switch entry.request.trigger {
        case .calendar:
            table.timeBasedCount += 1
            scheduleCalendar(slot)
        case .interval:
            table.timeBasedCount += 1
            scheduleInterval(slot)
        case .location(let t):
            table.locationCount += 1
            location.monitor.add(Region(identifier: entry.request.identifier, shape: t.shape, notifyOnEntry: t.notifyOnEntry,
                               notifyOnExit: t.notifyOnExit, dwell: t.dwell, cooldown: t.cooldown, repeats: t.repeats))
            if entry.progress.regionState != .unknown {
                location.monitor.restore(entry.request.identifier, lastKnown: entry.progress.regionState)
            }
        }
        return slot
    }

    mutating func removeEntry(at slot: Int32) {
        guard let e = table.slots[Int(slot)] else { return }
        if let h = e.timer {
            switch e.request.trigger {
            case .calendar: calendar.wheel.cancel(h)
            case .interval: intervals.wheel.cancel(h)
            case .location: break
            }
        }
        switch e.request.trigger {
        case .calendar, .interval: table.timeBasedCount -= 1
        case .location: table.locationCount -= 1; location.monitor.remove(identifier: e.request.identifier)
        }
        table.slotOf.removeValue(forKey: e.request.identifier)
        table.slots[Int(slot)] = nil
        table.freeSlots.append(slot)
        paging.recentlyRemoved.write(e.request.identifier, e.sequence)
    }

    // MARK: Categories

    /// Replaces the registered categories (Apple's `setNotificationCategories`).
    /// - Throws: `.category` for an empty or repeated identifier, or a repeated action
    ///   (``checkCategories(_:)``); then nothing has changed.
    public mutating func setCategories(_ categories: [NotificationCategory]) throws(RequestError) -> EngineOutput {
        try Self.checkCategories(categories)
        categoryList = categories
        var out = EngineOutput()
        out.changes.append(.setCategories(categories))
        return out
    }

    /// Checks `categories` as ``setCategories(_:)`` does, changing nothing.
    public static func checkCategories(_ categories: [NotificationCategory]) throws(RequestError) {
        var seen: Set<String> = []
        for c in categories {
            guard !c.identifier.isEmpty else { throw RequestError(.category, "a category identifier must not be empty") }
            guard seen.insert(c.identifier).inserted else { throw RequestError(.category, "category \"\(c.identifier)\" is given twice") }
            var actions: Set<String> = []
            for a in c.actions {
                guard !a.identifier.isEmpty else { throw RequestError(.category, "category \"\(c.identifier)\": an action identifier must not be empty") }
                guard a.identifier != ActionIdentifier.default, a.identifier != ActionIdentifier.dismiss else {
                    throw RequestError(.category, "category \"\(c.identifier)\": \"\(a.identifier)\" is a reserved action")
                }
                guard actions.insert(a.identifier).inserted else {
                    throw RequestError(.category, "category \"\(c.identifier)\": action \"\(a.identifier)\" is given twice")
                }
                if let s = a.snoozeSeconds, s <= 0 {
                    throw RequestError(.category, "category \"\(c.identifier)\": action \"\(a.identifier)\" has snoozeSeconds \(s); it must be > 0")
                }
                if let s = a.snoozeSeconds {
                    do { _ = try InputRanges.duration(seconds: s, "category \"\(c.identifier)\": action \"\(a.identifier)\" snoozeSeconds", minimum: 1) } catch {
                        throw RequestError(error, rule: .category)
                    }
                }
            }
        }
    }

    // MARK: Delivered

    /// Removes delivered notifications by identifier; their signals stop.
    public mutating func removeDelivered(_ identifiers: [String]) -> EngineOutput { deliveries.remove(identifiers) }

    /// Removes every delivered notification; their signals stop.
    public mutating func removeAllDelivered() -> EngineOutput { deliveries.removeAll() }
}
