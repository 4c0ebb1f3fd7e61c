import CivilTime
import Foundation

/// Foundation's answer for a calendar-oracle case: `Calendar.nextDate(after:matching:
/// matchingPolicy:repeatedTimePolicy:)`, Gregorian, in the case's zone and week rules.
///
/// Not Sendable-shared: each test shard makes its own (calendars are cached per zone and rules).
final class FoundationCalendarOracle {
    private var calendars: [String: Calendar] = [:]
    private var zones: [String: TimeZone] = [:]

    func timeZone(_ name: String) -> TimeZone {
        if let z = zones[name] { return z }
        guard let z = TimeZone(identifier: name) else { fatalError("Foundation does not know \(name)") }
        zones[name] = z
        return z
    }

    func calendar(_ zone: String, _ w: WeekRules) -> Calendar {
        let key = "\(zone)|\(w.firstWeekday)|\(w.minimumDaysInFirstWeek)"
        if let c = calendars[key] { return c }
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = timeZone(zone)
        cal.firstWeekday = w.firstWeekday
        cal.minimumDaysInFirstWeek = w.minimumDaysInFirstWeek
        calendars[key] = cal
        return cal
    }

    static func components(_ m: CalendarMatch) -> DateComponents {
        var c = DateComponents()
        c.year = m.year; c.month = m.month; c.day = m.day
        c.hour = m.hour; c.minute = m.minute; c.second = m.second
        c.weekday = m.weekday; c.weekdayOrdinal = m.weekdayOrdinal; c.weekOfMonth = m.weekOfMonth
        c.weekOfYear = m.weekOfYear; c.yearForWeekOfYear = m.yearForWeekOfYear; c.dayOfYear = m.dayOfYear
        return c
    }

    static func policy(_ p: MatchingPolicy) -> Calendar.MatchingPolicy {
        switch p {
        case .strict: .strict
        case .nextTime: .nextTime
        case .nextTimePreservingSmallerComponents: .nextTimePreservingSmallerComponents
        case .previousTimePreservingSmallerComponents: .previousTimePreservingSmallerComponents
        }
    }

    static func repeated(_ r: RepeatedTimePolicy) -> Calendar.RepeatedTimePolicy {
        r == .first ? .first : .last
    }

    /// Foundation's next date, in whole seconds (Foundation's results for whole-second starts
    /// are whole seconds; a fraction would be reported as such by `exact`).
    func nextDate(after: Int64, matching m: CalendarMatch, zone: String, policy: MatchingPolicy,
                  repeated: RepeatedTimePolicy, weekRules: WeekRules) -> (seconds: Int64?, exact: Double?) {
        let cal = calendar(zone, weekRules)
        guard let d = cal.nextDate(after: Date(timeIntervalSince1970: TimeInterval(after)),
                                   matching: Self.components(m), matchingPolicy: Self.policy(policy),
                                   repeatedTimePolicy: Self.repeated(repeated)) else { return (nil, nil) }
        let s = d.timeIntervalSince1970
        return (Int64(s.rounded(.down)), s)
    }

    /// Foundation's UTC offset at an instant.
    func offset(_ zone: String, at t: Int64) -> Int {
        timeZone(zone).secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t)))
    }
}
