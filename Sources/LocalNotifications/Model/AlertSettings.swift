// The device's alert settings (Apple's notification settings) and quiet hours.
import CivilTime

/// Which outputs may signal a delivery. A delivery is recorded whatever these say: switching the
/// buzzer off makes deliveries silent, it never drops them.
public struct AlertSettings: Hashable, Sendable {
    public var buzzer: Bool
    public var led: Bool
    /// The badge LED: lit while unacknowledged deliveries exist.
    public var badge: Bool
    public var quietHours: QuietHours?

    public init(buzzer: Bool = true, led: Bool = true, badge: Bool = true, quietHours: QuietHours? = nil) {
        self.buzzer = buzzer; self.led = led; self.badge = badge; self.quietHours = quietHours
    }
}

/// A daily span of local time in the device zone, e.g. 22:00–06:30, during which `active`
/// deliveries light the LED but do not sound the buzzer. `start == end` means never.
public struct QuietHours: Hashable, Sendable {
    /// Minutes after local midnight, 0 ..< 1440.
    public var startMinute: Int
    public var endMinute: Int

    public init(startMinute: Int, endMinute: Int) { self.startMinute = startMinute; self.endMinute = endMinute }

    /// Whether local time `t` in `zone` falls within the span (which may wrap past midnight).
    public func contains(_ t: WallInstant, in zone: ZoneRules) -> Bool {
        let local = t.secondsSinceEpoch + Int64(zone.utcOffset(atSecondsSinceEpoch: t.secondsSinceEpoch))
        let minute = Int(((local % 86_400) + 86_400) % 86_400 / 60)
        if startMinute == endMinute { return false }
        if startMinute < endMinute { return minute >= startMinute && minute < endMinute }
        return minute >= startMinute || minute < endMinute
    }
}

/// How a delivery is signalled on the board, decided by the engine from the interruption level,
/// the sound, the alert settings and quiet hours.
public struct DeliverySignal: Hashable, Sendable {
    /// The buzzer pattern to play, nil for none.
    public var pattern: String?
    /// Repeat with escalation until acknowledged (critical).
    public var untilAcknowledged: Bool
    public var led: Bool
    /// Why the buzzer stays quiet, when it does although the content has a sound ("quiet hours",
    /// "buzzer off", "passive").
    public var quietReason: String?

    public init(pattern: String?, untilAcknowledged: Bool, led: Bool, quietReason: String?) {
        self.pattern = pattern; self.untilAcknowledged = untilAcknowledged; self.led = led; self.quietReason = quietReason
    }

    /// The signal for `content` at `t` under `settings`.
    public static func decide(for content: NotificationContent, at t: WallInstant?, settings: AlertSettings,
                              deviceZone: ZoneRules) -> DeliverySignal {
        let level = content.interruptionLevel
        if level == .critical {
            return DeliverySignal(pattern: "alarm", untilAcknowledged: true, led: true, quietReason: nil)
        }
        var reason: String? = nil
        var pattern = content.sound
        if pattern != nil {
            if level == .passive { reason = "passive" }
            else if !settings.buzzer { reason = "buzzer off" }
            else if level == .active, let q = settings.quietHours, let t, q.contains(t, in: deviceZone) {
                reason = "quiet hours"
            }
            if reason != nil { pattern = nil }
        }
        return DeliverySignal(pattern: pattern, untilAcknowledged: false, led: settings.led, quietReason: reason)
    }
}
