// The computation both modes of `fencepost next` share: a schedule's next fires after an instant.
import CivilTime

extension NextRequest {
    /// Up to `count` fires strictly after `after`, each strictly after the one before; fewer when
    /// the schedule has no more.
    ///
    /// - Complexity: `count` calls of `CalendarSchedule.nextDate`.
    static func fires(
        of schedule: CalendarSchedule, after: WallInstant, in zone: ZoneRules, policy: MatchingPolicy,
        repeatedTime: RepeatedTimePolicy, count: Int
    ) -> [WallInstant] {
        var result: [WallInstant] = []
        result.reserveCapacity(min(count, 64))
        var t = after
        while result.count < count,
              let next = schedule.nextDate(after: t, in: zone, policy: policy, repeatedTime: repeatedTime),
              next > t
        {
            result.append(next)
            t = next
        }
        return result
    }

    /// Up to `count` fires of a recurrence set strictly after `after`.
    /// - Complexity: `count` calls of `RecurrenceSchedule.nextDate`.
    static func fires(of schedule: RecurrenceSchedule, after: WallInstant, in zone: ZoneRules, count: Int) -> [WallInstant] {
        var result: [WallInstant] = []
        result.reserveCapacity(min(count, 64))
        var t = after
        while result.count < count, let next = schedule.nextDate(after: t, in: zone), next > t {
            result.append(next)
            t = next
        }
        return result
    }
}
