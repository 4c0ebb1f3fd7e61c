import CivilTime
import Geofencing
import LocalNotifications
import Position
import SeededRandom

/// The notification-center workload of `Benchmarks/NotificationCenterBenchmarks`: seeded requests
/// of realistic shape, and an engine filled with them.
///
/// Pure: the caller loads the zones and passes a lookup.
public enum NotificationCenterWorkload {
    /// The zones of fixed-zone triggers (a floating trigger uses the device zone).
    public static let zoneNames = ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Sydney"]

    /// A fixed instant (2026-06-01T12:00:00Z) at which the benchmarks run, trusted.
    public static let clock = EngineClock(wall: WallInstant(secondsSinceEpoch: 1_780_315_200), wallTrusted: true,
                                          monotonic: MonotonicInstant(nanosecondsSinceBoot: 3_600_000_000_000))

    /// `count` calendar requests: daily, weekday, weekly, monthly shapes at random times, 3 in 4
    /// in a fixed zone; content with a title, body, sound and one userInfo entry.
    public static func calendarRequests(count: Int, seed: UInt64 = 0xCA1E_0001, prefix: String = "cal") -> [NotificationRequest] {
        var rng = SplitMix64(seed: seed)
        return (0 ..< count).map { i in
            var m = CalendarMatch(hour: Int(rng.next() % 24), minute: Int(rng.next() % 60))
            switch rng.next() % 4 {
            case 0: m.weekday = Int(rng.next() % 7) + 1
            case 1: m.day = Int(rng.next() % 28) + 1
            default: break
            }
            let zone = rng.next() % 4 == 0 ? nil : zoneNames[Int(rng.next() % UInt64(zoneNames.count))]
            return NotificationRequest(
                identifier: "\(prefix)-\(i)",
                content: NotificationContent(title: "Vehicle check \(i)", body: "Tyres, lights, mirrors", sound: "default",
                                             userInfo: [("route", "R\(i % 97)")]),
                trigger: .calendar(CalendarTrigger(match: m, zoneIdentifier: zone, repeats: true)))
        }
    }

    /// `count` interval requests (5 min … 1 day, repeating).
    public static func intervalRequests(count: Int, seed: UInt64 = 0x1A7E_0001, prefix: String = "int") -> [NotificationRequest] {
        var rng = SplitMix64(seed: seed)
        return (0 ..< count).map { i in
            NotificationRequest(identifier: "\(prefix)-\(i)", content: NotificationContent(title: "Break \(i)", sound: "chime"),
                                trigger: .interval(IntervalTrigger(seconds: Int64(300 + rng.next() % 86_100), repeats: true)))
        }
    }

    /// An engine holding `requests` (cap raised to fit), at ``clock``.
    public static func engine(_ requests: [NotificationRequest], deviceZone: ZoneRules,
                              zoneLookup: @escaping (String) -> ZoneRules?) -> NotificationEngine {
        var c = EngineConfiguration()
        c.pendingCap = max(64, requests.count * 2)
        var engine = NotificationEngine(configuration: c, deviceZone: deviceZone, zoneLookup: zoneLookup)
        for r in requests {
            do { _ = try engine.add(r, clock: clock) } catch { preconditionFailure("workload request \(r.identifier): \(error)") }
        }
        return engine
    }
}
