// The annunciator turns alerts (deliveries) into timed changes of three outputs: the buzzer, the alert
// LED and the badge LED. It is a pure state machine (design §1): time is an argument (monotonic
// nanoseconds), every mutating call returns the output changes the caller must carry out, and
// `nextDeadline` says when to call `advance(to:)` next. No clock, no I/O.
//
// Rules (design §5, "deliveries map to hardware by interruption level"):
//
//   level    buzzer            alert LED                    repeats
//   ledOnly  silent            follows the pattern's rhythm  no
//   normal   the pattern       follows the pattern's rhythm  no
//   loud     the pattern       follows the pattern's rhythm  yes, until acknowledged, escalating
//
//   badge: on while at least one alert is unacknowledged (it stays on after a pattern has finished).
//
// One pattern plays at a time; patterns are never interleaved. A pattern that is due while another
// plays waits in a queue and starts `gapBetweenPatterns` after the previous one ends, so two alerts
// stay distinguishable. Loud playbacks go ahead of waiting normal/ledOnly ones (never interrupting the
// one that plays). Each alert has at most one playback waiting or playing: a loud repeat that falls due
// while the alert's previous playback still waits is skipped, which bounds the queue by the number of
// alerts. Acknowledging an alert stops its playback at once (outputs off) and removes it from the queue.
// Starting an alert with an id that is already active replaces it (Apple: same identifier replaces).
//
// Reminders (``remind(_:usesLED:at:)``: deliveries left unanswered by a previous run) never delay a
// new alert. They count for the badge like any alert, but a backlog of them is summarised: one LED
// flash for all reminders given while no summary waits or plays, not one flash each (one each
// would queue 50 × 1.5 s of flashes for 50 unanswered deliveries in front of the next chime). A
// new alert goes ahead of a waiting summary and pre-empts one that plays: the summary stops and the
// new alert starts at once, without the gap.

/// Alerts in, timed output changes out. See the rules at the top of this file.
///
///     var a = Annunciator()
///     apply(a.start("break", pattern: .chime, level: .normal, at: now))
///     // when the loop wakes at a.nextDeadline:
///     apply(a.advance(to: now))
///     // button:
///     apply(a.acknowledge("break", at: now))
///
/// Times passed in must not decrease (a precondition): they come from one monotonic clock.
public struct Annunciator: Sendable {
    public struct Configuration: Hashable, Sendable {
        /// Silence between two patterns, nanoseconds.
        public var gapBetweenPatterns: UInt64
        /// Escalation of loud alerts, nanoseconds: the k-th repeat is due `loudRepeatIntervals[k]`
        /// after the previous one was due (the first after the alert started); the last interval
        /// repeats forever. Must not be empty; each at least 1 ms.
        public var loudRepeatIntervals: [UInt64]
        /// How long the alert LED lights for a silent pattern (`none`), nanoseconds.
        public var silentPatternFlash: UInt64

        /// Defaults: 0.5 s gap; loud every 30 s for two minutes, then every 10 s; 1 s flash.
        public init(
            gapBetweenPatterns: UInt64 = 500_000_000,
            loudRepeatIntervals: [UInt64] = [30, 30, 30, 30, 10].map { $0 * 1_000_000_000 },
            silentPatternFlash: UInt64 = 1_000_000_000
        ) {
            precondition(!loudRepeatIntervals.isEmpty, "loudRepeatIntervals must not be empty")
            precondition(loudRepeatIntervals.allSatisfy { $0 >= 1_000_000 }, "each loud repeat interval must be ≥ 1 ms")
            precondition(silentPatternFlash > 0, "silentPatternFlash must be > 0")
            self.gapBetweenPatterns = gapBetweenPatterns
            self.loudRepeatIntervals = loudRepeatIntervals
            self.silentPatternFlash = silentPatternFlash
        }
    }

    /// An unacknowledged alert.
    struct Alert: Sendable {
        var pattern: BuzzerPattern
        var level: AlertLevel
        /// A playback of this alert waits in `queue` or is `playing`.
        var scheduled: Bool
        /// Loud only: when the next repeat is due.
        var nextRepeat: UInt64?
        /// Loud only: how many repeats have fallen due (index into the escalation intervals).
        var repeatsDue: Int
        /// Order of the starts: a larger one was started later.
        var order: UInt64
        /// Whether its playback lights the alert LED (the device's `led` setting).
        var usesLED: Bool
        /// A reminder of an earlier delivery: summarised, pre-empted by any new alert.
        var isReminder = false
    }

    /// The pattern being played.
    struct Playback: Sendable {
        var id: String
        /// Step durations, nanoseconds; even indices are on, odd are off.
        var steps: [UInt64]
        var stepIndex: Int
        var stepEnds: UInt64
        var usesBuzzer: Bool
        var usesLED: Bool
    }

    public let configuration: Configuration
    var alerts: [String: Alert] = [:]
    /// The `order` of the next alert started.
    var nextOrder: UInt64 = 0
    /// Ids whose playback waits, in play order.
    var queue: [String] = []
    var playing: Playback?
    /// No playback starts before this instant.
    var gapEnds: UInt64 = 0
    /// The latest time seen.
    public private(set) var now: UInt64 = 0
    /// Reminders given since the last summary flash was queued.
    public private(set) var remindersSummarised = 0

    /// Current level of each output (all off when idle).
    public private(set) var buzzerIsOn = false
    public private(set) var ledIsOn = false
    public private(set) var badgeIsOn = false

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    // MARK: Queries

    /// Ids of the unacknowledged alerts, sorted.
    public var unacknowledged: [String] { alerts.keys.sorted() }

    /// The unacknowledged alert started last (what the button answers when nothing plays).
    ///
    /// - Complexity: O(a).
    public var newestUnacknowledged: String? { alerts.max { $0.value.order < $1.value.order }?.key }

    /// Whether `id` is an unacknowledged alert.
    public func isActive(_ id: String) -> Bool { alerts[id] != nil }

    /// The id whose pattern is playing, if any.
    public var playingID: String? { playing?.id }

    /// Whether `output` is on.
    public func isOn(_ output: AnnunciatorOutput) -> Bool {
        switch output {
        case .buzzer: return buzzerIsOn
        case .led: return ledIsOn
        case .badge: return badgeIsOn
        }
    }

    /// When `advance(to:)` next has something to do; nil when nothing is pending (the caller may sleep
    /// until the next alert or button press).
    ///
    /// - Complexity: O(a), a = number of unacknowledged alerts (loud repeat times are scanned; a is
    ///   small on a device, tens at most).
    public var nextDeadline: UInt64? {
        var best: UInt64? = playing?.stepEnds
        if playing == nil, !queue.isEmpty { best = min(best ?? .max, max(gapEnds, now)) }
        for alert in alerts.values {
            if let r = alert.nextRepeat { best = min(best ?? .max, r) }
        }
        return best
    }

    // MARK: Operations

    /// Shows alert `id` from `now` on. An active alert with the same id is replaced (its playback
    /// stops). Changes due before `now` are returned first. With `usesLED` false its playback
    /// leaves the alert LED dark (buzzer and badge as usual).
    ///
    /// - Complexity: O(a + q) (queue insertion and replacement), a alerts, q waiting playbacks.
    public mutating func start(
        _ id: String, pattern: BuzzerPattern, level: AlertLevel, usesLED: Bool = true, at now: UInt64
    ) -> [OutputChange] {
        var changes = advance(to: now)
        if alerts[id] != nil { remove(id, &changes) }
        // A reminder's flash never delays a new alert: it stops, and the new one starts at once.
        if let p = playing, alerts[p.id]?.isReminder == true {
            stopPlayback(&changes)
            gapEnds = now
        }
        alerts[id] = Alert(
            pattern: pattern, level: level, scheduled: false,
            nextRepeat: level == .loud ? now + configuration.loudRepeatIntervals[0] : nil, repeatsDue: 0, order: nextOrder,
            usesLED: usesLED)
        nextOrder += 1
        set(.badge, true, &changes)
        enqueue(id)
        run(until: now, &changes)
        _checkInvariants()
        return changes
    }

    /// Puts back alert `id` from an earlier run as a reminder: it lights the badge and is answered
    /// like any alert, but all reminders given while no summary flash waits share one flash (a
    /// silent LED flash, dark without `usesLED`), which goes behind every other alert and stops
    /// when a new alert starts. An active alert with the same id is left as it is.
    ///
    /// - Complexity: O(q).
    public mutating func remind(_ id: String, usesLED: Bool = true, at now: UInt64) -> [OutputChange] {
        var changes = advance(to: now)
        guard alerts[id] == nil else { return changes }
        alerts[id] = Alert(pattern: .none, level: .ledOnly, scheduled: false, nextRepeat: nil, repeatsDue: 0,
                           order: nextOrder, usesLED: usesLED, isReminder: true)
        nextOrder += 1
        set(.badge, true, &changes)
        let summaryWaits = queue.contains { alerts[$0]?.isReminder == true }
            || playing.map { alerts[$0.id]?.isReminder == true } == true
        if summaryWaits {
            remindersSummarised += 1
        } else {
            enqueue(id)
            run(until: now, &changes)
        }
        _checkInvariants()
        return changes
    }

    /// Acknowledges `id`: its playback stops at once and it no longer counts for the badge. Unknown
    /// ids are ignored (an empty result apart from changes due before `now`).
    ///
    /// - Complexity: O(a + q).
    public mutating func acknowledge(_ id: String, at now: UInt64) -> [OutputChange] {
        var changes = advance(to: now)
        if alerts[id] != nil {
            remove(id, &changes)
            if alerts.isEmpty { set(.badge, false, &changes) }
            run(until: now, &changes)
        }
        _checkInvariants()
        return changes
    }

    /// Acknowledges every alert: outputs off, queue empty.
    ///
    /// - Complexity: O(a + q).
    public mutating func acknowledgeAll(at now: UInt64) -> [OutputChange] {
        var changes = advance(to: now)
        if playing != nil { stopPlayback(&changes) }
        queue.removeAll()
        alerts.removeAll()
        set(.badge, false, &changes)
        _checkInvariants()
        return changes
    }

    /// The caller switched the outputs of the changes just returned at `time`, later than the
    /// instant they were computed for (work between its clock reading and the pins: the first
    /// delivery after start-up runs code that was out of memory, a driver is slow). The pattern step
    /// that began with those changes is timed from `time`, so it keeps its full length (a 150 ms
    /// beep switched on 120 ms late would otherwise last 30 ms); so is a gap that began with them.
    /// Nothing else moves: loud repeats keep their schedule, and so do steps that began earlier
    /// (after a late wake the next step is shorter, which keeps the pattern's rhythm).
    ///
    /// - Complexity: O(1).
    public mutating func outputsSwitched(at time: UInt64) {
        guard time > now else { return }
        if var p = playing {
            if p.stepEnds - p.steps[p.stepIndex] == now {
                p.stepEnds = time + p.steps[p.stepIndex]
                playing = p
            }
        } else if !queue.isEmpty, gapEnds == now + configuration.gapBetweenPatterns {
            gapEnds = time + configuration.gapBetweenPatterns
        }
        _checkInvariants()
    }

    /// Carries out everything due up to and including `now`, in time order.
    ///
    /// - Complexity: O(e · a log a) for e events due (steps, pattern starts, repeats) and a
    ///   unacknowledged alerts (each event rescans the alerts' repeat times in id order).
    public mutating func advance(to now: UInt64) -> [OutputChange] {
        precondition(now >= self.now, "time went backwards: \(now) < \(self.now)")
        var changes: [OutputChange] = []
        run(until: now, &changes)
        _checkInvariants()
        return changes
    }

    /// Shutdown: every output that is on is switched off at `now`, and all alerts are forgotten.
    public mutating func allOff(at now: UInt64) -> [OutputChange] {
        precondition(now >= self.now, "time went backwards: \(now) < \(self.now)")
        self.now = now
        var changes: [OutputChange] = []
        for output in AnnunciatorOutput.allCases { set(output, false, &changes) }
        playing = nil
        queue.removeAll()
        alerts.removeAll()
        gapEnds = now
        _checkInvariants()
        return changes
    }

    // MARK: Internals

    /// Processes every event with a time ≤ `limit`, in time order; then `now = limit`.
    mutating func run(until limit: UInt64, _ changes: inout [OutputChange]) {
        while let due = nextDeadline, due <= limit {
            now = max(now, due)
            // 1. The step of the playing pattern that ends now.
            if var p = playing, p.stepEnds == now {
                p.stepIndex += 1
                if p.stepIndex == p.steps.count {
                    stopPlayback(&changes)
                } else {
                    let on = p.stepIndex % 2 == 0
                    p.stepEnds = now + p.steps[p.stepIndex]
                    playing = p
                    setPatternOutputs(on, usesBuzzer: p.usesBuzzer, usesLED: p.usesLED, &changes)
                }
            }
            // 2. Loud repeats due now (in id order, for determinism).
            for id in alerts.keys.sorted() {
                guard var alert = alerts[id], let r = alert.nextRepeat, r == now else { continue }
                alert.repeatsDue += 1
                let intervals = configuration.loudRepeatIntervals
                alert.nextRepeat = r + intervals[min(alert.repeatsDue, intervals.count - 1)]
                alerts[id] = alert
                if !alert.scheduled { enqueue(id) }
            }
            // 3. The next waiting pattern, when idle and the gap has passed.
            if playing == nil, !queue.isEmpty, gapEnds <= now {
                startPlayback(queue.removeFirst(), &changes)
            }
        }
        now = max(now, limit)
    }

    /// Puts a playback of `id` in the queue: loud ones after the waiting loud ones, reminders at the
    /// end, others before the first waiting reminder.
    mutating func enqueue(_ id: String) {
        guard var alert = alerts[id] else { preconditionFailure("enqueue of unknown alert \(id)") }
        precondition(!alert.scheduled, "alert \(id) already has a playback")
        alert.scheduled = true
        alerts[id] = alert
        if alert.level == .loud {
            let firstNotLoud = queue.firstIndex { alerts[$0]?.level != .loud } ?? queue.endIndex
            queue.insert(id, at: firstNotLoud)
        } else if alert.isReminder {
            queue.append(id)
        } else {
            let firstReminder = queue.firstIndex { alerts[$0]?.isReminder == true } ?? queue.endIndex
            queue.insert(id, at: firstReminder)
        }
    }

    mutating func startPlayback(_ id: String, _ changes: inout [OutputChange]) {
        guard let alert = alerts[id] else { preconditionFailure("playback of unknown alert \(id)") }
        let steps: [UInt64]
        let usesBuzzer: Bool
        if alert.pattern.isSilent {
            steps = [configuration.silentPatternFlash]
            usesBuzzer = false
        } else {
            steps = alert.pattern.steps.map { UInt64($0) * 1_000_000 }
            usesBuzzer = alert.level != .ledOnly
        }
        playing = Playback(id: id, steps: steps, stepIndex: 0, stepEnds: now + steps[0], usesBuzzer: usesBuzzer,
                           usesLED: alert.usesLED)
        setPatternOutputs(true, usesBuzzer: usesBuzzer, usesLED: alert.usesLED, &changes)
    }

    /// Ends the playing pattern now: its outputs off, its alert unscheduled, the gap starts.
    mutating func stopPlayback(_ changes: inout [OutputChange]) {
        guard let p = playing else { preconditionFailure("nothing is playing") }
        setPatternOutputs(false, usesBuzzer: true, usesLED: true, &changes)
        playing = nil
        alerts[p.id]?.scheduled = false
        gapEnds = now + configuration.gapBetweenPatterns
    }

    /// Forgets alert `id` (it exists): stops or dequeues its playback.
    mutating func remove(_ id: String, _ changes: inout [OutputChange]) {
        if playing?.id == id { stopPlayback(&changes) }
        queue.removeAll { $0 == id }
        alerts[id] = nil
    }

    mutating func setPatternOutputs(_ on: Bool, usesBuzzer: Bool, usesLED: Bool, _ changes: inout [OutputChange]) {
        if usesBuzzer { set(.buzzer, on, &changes) }
        if usesLED { set(.led, on, &changes) }
    }

    /// Switches `output`, recording a change only when its level differs.
    mutating func set(_ output: AnnunciatorOutput, _ on: Bool, _ changes: inout [OutputChange]) {
        switch output {
        case .buzzer:
            if buzzerIsOn == on { return }
            buzzerIsOn = on
        case .led:
            if ledIsOn == on { return }
            ledIsOn = on
        case .badge:
            if badgeIsOn == on { return }
            badgeIsOn = on
        }
        changes.append(OutputChange(time: now, output: output, isOn: on))
    }
}
