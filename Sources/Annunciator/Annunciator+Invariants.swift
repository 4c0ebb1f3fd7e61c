// Structural checks, run at the end of every mutating method in debug builds and compiled out in
// release (as swift-collections' `Heap+Invariants.swift`).

extension Annunciator {
    /// Verifies the state; traps on the first violation.
    ///
    /// - Complexity: O(a + q) in debug builds; nothing in release builds.
    @inline(__always)
    public func _checkInvariants() {
        #if DEBUG
        // Queue: known alerts, no duplicates, not the playing one; loud ones first.
        var seen = Set<String>()
        var sawNotLoud = false
        var sawReminder = false
        for id in queue {
            guard let alert = alerts[id] else { preconditionFailure("queued id \(id) is not an alert") }
            precondition(alert.scheduled, "queued alert \(id) is not marked scheduled")
            precondition(seen.insert(id).inserted, "alert \(id) is queued twice")
            precondition(playing?.id != id, "alert \(id) is both queued and playing")
            if alert.level == .loud {
                precondition(!sawNotLoud, "loud alert \(id) waits behind a quieter one")
            } else {
                sawNotLoud = true
            }
            if alert.isReminder {
                sawReminder = true
            } else {
                precondition(!sawReminder, "alert \(id) waits behind a reminder")
            }
        }
        // Playback.
        if let p = playing {
            guard let alert = alerts[p.id] else { preconditionFailure("playing id \(p.id) is not an alert") }
            precondition(alert.scheduled, "playing alert \(p.id) is not marked scheduled")
            precondition(p.stepIndex < p.steps.count, "step index past the end")
            precondition(p.stepEnds > now, "the playing step ended at \(p.stepEnds) but now is \(now)")
            precondition(ledIsOn == (p.usesLED && p.stepIndex % 2 == 0), "LED does not follow the pattern step")
            precondition(buzzerIsOn == (p.usesBuzzer && p.stepIndex % 2 == 0), "buzzer does not follow the pattern step")
        } else {
            precondition(!buzzerIsOn && !ledIsOn, "buzzer or LED on while nothing plays")
            precondition(queue.isEmpty || gapEnds > now, "a playback waits although the player is free")
        }
        // Alerts.
        let scheduledCount = alerts.values.reduce(0) { $0 + ($1.scheduled ? 1 : 0) }
        precondition(scheduledCount == queue.count + (playing == nil ? 0 : 1), "scheduled flags do not match queue + playing")
        for (id, alert) in alerts {
            if alert.level == .loud {
                guard let r = alert.nextRepeat else { preconditionFailure("loud alert \(id) has no repeat time") }
                precondition(r > now, "loud alert \(id) repeat \(r) is not after now \(now)")
            } else {
                precondition(alert.nextRepeat == nil, "non-loud alert \(id) has a repeat time")
            }
        }
        precondition(badgeIsOn == !alerts.isEmpty, "badge \(badgeIsOn) but \(alerts.count) unacknowledged alerts")
        #endif
    }
}
