import CivilTime
import FencepostLinux
import LocalNotifications

/// Zones from the system's tzdata, shared by the scenario tests.
enum TestZones {
    static let system = SystemZones()
    static func rules(_ name: String) -> ZoneRules {
        do { return try system.rules(named: name) } catch { fatalError("zone \(name): \(error)") }
    }
    static func lookup(_ name: String) -> ZoneRules? { try? system.rules(named: name) }
}

func instant(_ text: String) -> WallInstant {
    guard case .success(let t) = RFC3339.parse(text.utf8) else { fatalError("bad time \(text)") }
    return t.instant
}

func makeEngine(zone: String = "UTC", configure: (inout EngineConfiguration) -> Void = { _ in }) -> NotificationEngine {
    var c = EngineConfiguration()
    configure(&c)
    return NotificationEngine(configuration: c, deviceZone: TestZones.rules(zone), zoneLookup: TestZones.lookup)
}

func daily(_ id: String, hour: Int, minute: Int, tz: String?, policy: MatchingPolicy = .nextTime,
           missed: MissedFirePolicy = .coalesce) -> NotificationRequest {
    NotificationRequest(
        identifier: id, content: NotificationContent(title: id, sound: "default"),
        trigger: .calendar(CalendarTrigger(match: CalendarMatch(hour: hour, minute: minute), zoneIdentifier: tz, repeats: true,
                                           policy: policy)),
        missedFirePolicy: missed)
}

func interval(_ id: String, seconds: Int64, repeats: Bool = true, missed: MissedFirePolicy = .coalesce) -> NotificationRequest {
    NotificationRequest(identifier: id, content: NotificationContent(title: id),
                        trigger: .interval(IntervalTrigger(seconds: seconds, repeats: repeats)), missedFirePolicy: missed)
}

/// Local civil time of `t` in `zone`.
func local(_ t: WallInstant, _ zone: ZoneRules) -> CivilDateTime {
    CivilDateTime(localSeconds: t.secondsSinceEpoch + Int64(zone.utcOffset(atSecondsSinceEpoch: t.secondsSinceEpoch)))
}

extension Simulation {
    /// Deliveries of `id` (all outcomes), in order.
    func deliveries(_ id: String) -> [DeliveredNotification] {
        events.compactMap { $0.requestIdentifier == id ? $0.delivery : nil }
    }
    func outcomes(_ id: String, _ kind: Outcome.Kind) -> [Outcome] {
        events.compactMap { e in e.requestIdentifier == id && e.outcome?.kind == kind ? e.outcome : nil }
    }
    var noDuplicateDeliveries: Bool { deliveryCount.values.allSatisfy { $0 == 1 } }
}
