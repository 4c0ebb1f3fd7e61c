import CivilTime
import SeededRandom

/// The calendar next-fire workload, shared by `Benchmarks/NextFireBenchmarks` (against Foundation)
/// and by the on-device `fencepost bench`: one definition, no copies.
///
/// Pure: the caller loads the zones. Starts are seeded, so two runs measure the same instants.
public enum NextFireWorkload {
    /// A named trigger shape.
    public struct Shape: Sendable {
        public let name: String
        public let match: CalendarMatch
    }

    /// The five benchmarked shapes: daily 07:00, weekly Monday 08:30, monthly day 31 09:00,
    /// yearly Feb 29 12:00, hourly :15.
    public static let shapes: [Shape] = [
        Shape(name: "daily 07:00", match: CalendarMatch(hour: 7, minute: 0)),
        Shape(name: "weekly Mon 08:30", match: CalendarMatch(hour: 8, minute: 30, weekday: 2)),
        Shape(name: "monthly day 31 09:00", match: CalendarMatch(day: 31, hour: 9, minute: 0)),
        Shape(name: "yearly Feb 29 12:00", match: CalendarMatch(month: 2, day: 29, hour: 12, minute: 0)),
        Shape(name: "hourly :15", match: CalendarMatch(minute: 15)),
    ]

    /// The zones measured: no DST, a US and a European rule, and a 30-minute DST.
    public static let zoneNames = ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe"]

    /// `count` start instants, uniformly random whole seconds in 2000…2100 (SplitMix64 from `seed`).
    public static func starts(count: Int, seed: UInt64 = 0x5EED_F1E7) -> [WallInstant] {
        var rng = SplitMix64(seed: seed)
        let lo: Int64 = 946_684_800        // 2000-01-01
        let span: UInt64 = 3_155_760_000   // 100 years
        return (0..<count).map { _ in
            WallInstant(secondsSinceEpoch: lo + Int64(rng.next() % span))
        }
    }
}
