// The three triggers of design §5: calendar, time interval, location.
import CivilTime
import Geofencing

/// Fires when the civil time matches (Apple's `UNCalendarNotificationTrigger`).
public struct CalendarTrigger: Hashable, Sendable {
    public var match: CalendarMatch
    /// An IANA zone name (fixed zone: 07:00 in Berlin wherever the vehicle is), or nil for a
    /// floating trigger that follows the device zone (07:00 wherever the vehicle is now).
    public var zoneIdentifier: String?
    public var repeats: Bool
    public var policy: MatchingPolicy
    public var repeatedTime: RepeatedTimePolicy
    public var weekRules: WeekRules
    /// A recurrence set (RFC 5545 RRULE from a DTSTART, EXDATE, RDATE; or components with sets
    /// and last days) in place of `match`, which is then empty. SEMANTICS.md §6.
    public var recurrence: RecurrenceSchedule?

    public init(match: CalendarMatch, zoneIdentifier: String? = nil, repeats: Bool,
                policy: MatchingPolicy = .nextTime, repeatedTime: RepeatedTimePolicy = .first,
                weekRules: WeekRules = .gregorianDefault) {
        self.match = match; self.zoneIdentifier = zoneIdentifier; self.repeats = repeats
        self.policy = policy; self.repeatedTime = repeatedTime; self.weekRules = weekRules
    }

    /// A trigger from a recurrence set.
    public init(recurrence: RecurrenceSchedule, zoneIdentifier: String? = nil, repeats: Bool = true) {
        self.init(match: CalendarMatch(), zoneIdentifier: zoneIdentifier, repeats: repeats)
        self.recurrence = recurrence
    }

    /// What fires, for messages: the components, or the rule with its DTSTART.
    public var ruleDescription: String {
        if let r = recurrence { return "RRULE \(r.rule.text) from DTSTART \(r.start.iso8601)" }
        return match.componentsDescription
    }
}

/// Fires after a span of monotonic time (Apple's `UNTimeIntervalNotificationTrigger`): unaffected
/// by wall-clock steps and zone changes.
public struct IntervalTrigger: Hashable, Sendable {
    /// The interval in milliseconds (> 0; ≥ 60 s when repeating).
    public var milliseconds: Int64
    public var repeats: Bool

    public init(milliseconds: Int64, repeats: Bool) { self.milliseconds = milliseconds; self.repeats = repeats }
    public init(seconds: Int64, repeats: Bool) { self.init(milliseconds: SaturatingTime.multiply(seconds, 1000), repeats: repeats) }
}

/// Fires on entering or leaving a region (Apple's `UNLocationNotificationTrigger` with a
/// `CLCircularRegion`, plus polygons, dwell and cooldown from design §4).
public struct LocationTrigger: Hashable, Sendable {
    public var shape: RegionShape
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool
    public var repeats: Bool
    /// Seconds inside before an entry counts (nil: at once).
    public var dwell: Double?
    /// Seconds during which a second event of the same kind is suppressed.
    public var cooldown: Double

    public init(shape: RegionShape, notifyOnEntry: Bool = true, notifyOnExit: Bool = false, repeats: Bool,
                dwell: Double? = nil, cooldown: Double = 0) {
        self.shape = shape; self.notifyOnEntry = notifyOnEntry; self.notifyOnExit = notifyOnExit
        self.repeats = repeats; self.dwell = dwell; self.cooldown = cooldown
    }
}

/// One of the three triggers.
///
/// A calendar trigger is boxed (`indirect`): inline, its match made every request 376 bytes,
/// whatever its kind — a million location requests paid for it.
public enum NotificationTrigger: Hashable, Sendable {
    indirect case calendar(CalendarTrigger)
    case interval(IntervalTrigger)
    case location(LocationTrigger)

    public var repeats: Bool {
        switch self {
        case .calendar(let t): t.repeats
        case .interval(let t): t.repeats
        case .location(let t): t.repeats
        }
    }

    /// "calendar", "interval" or "location".
    public var kind: String {
        switch self {
        case .calendar: "calendar"
        case .interval: "interval"
        case .location: "location"
        }
    }
}
