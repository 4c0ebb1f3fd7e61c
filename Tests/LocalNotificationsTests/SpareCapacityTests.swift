import CivilTime
import LocalNotifications
import SeededRandom
import Testing

/// `releaseSpareCapacity()` copies the engine's arrays into smaller buffers: nothing the engine
/// does may change because of it. Two engines get the same seeded requests, removals and days;
/// one shrinks its arrays after every step, and both must deliver the same notifications at the
/// same times and list the same pending requests.
@Suite struct SpareCapacityTests {
    @Test func shrinkingChangesNothingTheEngineDoes() throws {
        for seed: UInt64 in [0x5EED_5C01, 0x5EED_5C02] {
            var rng = SplitMix64(seed: seed)
            let start = instant("2026-03-27T00:00:00Z")   // a DST change in Europe on the 29th
            var plain = Simulation(engine: makeEngine(zone: "Europe/Berlin") { $0.pendingCap = 10_000 }, start: start)
            var shrunk = plain
            let zones: [String?] = [nil, nil, "Europe/Berlin", "America/New_York", "UTC"]
            let policies: [MatchingPolicy] = [.nextTime, .nextTimePreservingSmallerComponents, .previousTimePreservingSmallerComponents, .strict]
            var added: [String] = []
            for day in 0 ..< 3 {
                for i in 0 ..< 100 {
                    let id = "r\(day)-\(i)"
                    let request = rng.int(0 ... 5) == 0
                        ? interval(id, seconds: Int64(rng.int(1800 ... 7200)))
                        : daily(id, hour: rng.int(0 ... 23), minute: rng.int(0 ... 59), tz: zones[rng.int(0 ... zones.count - 1)],
                                policy: policies[rng.int(0 ... policies.count - 1)])
                    try plain.add(request)
                    try shrunk.add(request)
                    added.append(id)
                }
                shrunk.engine.releaseSpareCapacity()
                // Remove a third of what is there (free slots, holes in the add order), then add again.
                let gone = added.filter { _ in rng.int(0 ... 2) == 0 }
                _ = plain.engine.removePending(gone)
                _ = shrunk.engine.removePending(gone)
                added.removeAll { gone.contains($0) }
                shrunk.engine.releaseSpareCapacity()
                let end = WallInstant(secondsSinceEpoch: start.secondsSinceEpoch + Int64(day + 1) * 86_400)
                plain.run(until: end)
                shrunk.run(until: end)
                shrunk.engine.releaseSpareCapacity()
                let where_ = "seed \(String(seed, radix: 16)), day \(day)"
                #expect(Self.firstDifference(plain.events, shrunk.events) == nil, "\(where_): the deliveries differ")
                #expect(Self.firstDifference(plain.engine.pendingIdentifiers, shrunk.engine.pendingIdentifiers) == nil,
                        "\(where_): the pending lists differ")
                #expect(Self.firstDifference(plain.engine.pending(clock: plain.clock), shrunk.engine.pending(clock: shrunk.clock)) == nil,
                        "\(where_): the pending requests' next fires differ")
            }
            #expect(plain.events.count > 300, "seed \(String(seed, radix: 16)): too few deliveries (\(plain.events.count)) to compare")
        }
    }

    /// The first place where `a` and `b` differ (index, both sides, counts), nil when equal: a
    /// failure names one item instead of printing two arrays of hundreds.
    static func firstDifference<T: Equatable>(_ a: [T], _ b: [T]) -> String? {
        for i in 0 ..< max(a.count, b.count) where i >= a.count || i >= b.count || a[i] != b[i] {
            let x = i < a.count ? "\(a[i])" : "nothing", y = i < b.count ? "\(b[i])" : "nothing"
            return "item \(i) of \(a.count) / \(b.count): \(x) / \(y)"
        }
        return nil
    }
}
