import Geofencing
import Position
import Testing
import SeededRandom

/// The monitor's rules, hand-checked on noiseless fixes (σ = 3 m) along a line through a 100 m
/// circle at Munich.
struct RegionMonitorTests {
    static let center = Coordinate(latitude: 48.137, longitude: 11.575)

    /// A fix `x` metres east of the centre.
    static func fix(_ x: Double, speed: Double? = 10, error: Double? = 3, valid: Bool = true) -> Fix {
        let c = x == 0 ? center : destination(center, bearing: x > 0 ? 90 : 270, distance: abs(x))
        return Fix(coordinate: c, mode: .threeD, isValid: valid, speed: speed, course: 90, horizontalError: error)
    }

    static func zone(_ configure: (inout Region) -> Void = { _ in }) -> Region {
        var r = try! Region.circle("zone", center: center, radius: 100)
        configure(&r)
        return r
    }

    /// Drives from −300 m to +300 m at 10 m/s starting at `t0`; returns the events.
    static func pass(_ m: inout RegionMonitor, t0: Double) -> [RegionEvent] {
        var events: [RegionEvent] = []
        for i in 0 ... 60 { m.process(fix(-300 + Double(i) * 10), at: t0 + Double(i), into: &events) }
        return events
    }

    @Test func entryAndExitAtInterpolatedTimes() {
        var m = RegionMonitor()
        m.add(Self.zone())
        let e = Self.pass(&m, t0: 0)
        #expect(e.map(\.kind) == [.enter, .exit])
        #expect(abs(e[0].time - 20) < 0.3 && abs(e[1].time - 40) < 0.3, "\(e)")
    }

    /// Events at one time come by identifier, whatever order the regions were added in (their
    /// slots) — as a zone set, which numbers zones in its tree's order, needs to agree with
    /// replay. The first fix inside five concentric circles, added in reverse; then the timeout.
    @Test func simultaneousEventsComeByIdentifierNotBySlot() {
        for ids in [["e", "d", "c", "b", "a"], ["c", "a", "e", "b", "d"]] {
            var m = RegionMonitor()
            for id in ids { m.add(try! Region.circle(id, center: Self.center, radius: 100)) }
            var events = m.process(Self.fix(0), at: 0)
            #expect(events.map { $0.identifier } == ["a", "b", "c", "d", "e"], "added as \(ids): \(events)")
            #expect(events.allSatisfy { $0.kind == .enter && $0.time == 0 })
            events = []
            m.advance(to: 10_000, into: &events)
            #expect(events.map { $0.identifier } == ["a", "b", "c", "d", "e"] && events.allSatisfy { $0.kind == .unknown },
                    "added as \(ids): \(events)")
        }
        // Dwells due together, served by the next fix rather than by `advance`: the same order.
        for ids in [["e", "d", "c", "b", "a"], ["c", "a", "e", "b", "d"]] {
            var m = RegionMonitor()
            for id in ids {
                var r = try! Region.circle(id, center: Self.center, radius: 100)
                r.dwell = 5
                m.add(r)
            }
            _ = m.process(Self.fix(0, speed: 0), at: 0)
            let events = m.process(Self.fix(0, speed: 0), at: 6)
            #expect(events.map { $0.identifier } == ["a", "b", "c", "d", "e"] && events.allSatisfy { $0.kind == .dwell },
                    "added as \(ids): \(events)")
        }
    }

    /// Building the index ahead (as the agent does after applying its zones) changes no event:
    /// 600 circles along the drive (beyond the delta list, so the index is due), the same pass
    /// with and without `prepareIndex()`, and again after removing a third of them.
    @Test func preparedIndexGivesTheSameEvents() throws {
        var rng = SplitMix64(seed: 7)
        let regions = try (0..<600).map { i in
            let x = rng.uniform(-400, 400)
            return try Region.circle("c\(i)", center: destination(Self.center, bearing: x < 0 ? 270 : 90, distance: abs(x)),
                                     radius: rng.uniform(5, 60))
        }
        var lazy = RegionMonitor(), prepared = RegionMonitor()
        lazy.add(contentsOf: regions)
        prepared.add(contentsOf: regions)
        prepared.prepareIndex()
        let a = Self.pass(&lazy, t0: 0), b = Self.pass(&prepared, t0: 0)
        #expect(a == b, "seed 7")
        #expect(a.count > 50, "the drive crosses many circles: \(a.count) events")
        for i in stride(from: 0, to: 600, by: 3) {
            lazy.remove(identifier: "c\(i)")
            prepared.remove(identifier: "c\(i)")
        }
        prepared.prepareIndex()
        #expect(Self.pass(&lazy, t0: 1000) == Self.pass(&prepared, t0: 1000), "seed 7, after removals")
    }

    @Test func insideAtStartFiresEntry() {
        var m = RegionMonitor()
        m.add(Self.zone())
        #expect(m.state(of: "zone") == .unknown)
        do { let e = m.process(Self.fix(0, speed: 0), at: 0); #expect(e.map(\.kind) == [.enter]) }
        #expect(m.state(of: "zone") == .inside)
        var far = RegionMonitor()
        far.add(Self.zone())
        do { let e = far.process(Self.fix(500), at: 0); #expect(e.isEmpty) }
        #expect(far.state(of: "zone") == .outside)
    }

    @Test func poorFixesHoldThenTimeoutReportsUnknown() {
        var m = RegionMonitor()
        m.add(Self.zone())
        _ = m.process(Self.fix(0, speed: 0), at: 0)
        // Invalid, no position, and too large an error: all hold.
        do { let e = m.process(Self.fix(500, valid: false), at: 1); #expect(e.isEmpty) }
        do { let e = m.process(Fix(), at: 2); #expect(e.isEmpty) }
        do { let e = m.process(Self.fix(500, error: 80), at: 3); #expect(e.isEmpty) }
        #expect(m.state(of: "zone") == .inside)
        #expect(m.nextDeadline == 120)
        var events: [RegionEvent] = []
        m.advance(to: 119, into: &events)
        #expect(events.isEmpty)
        m.advance(to: 121, into: &events)
        #expect(events == [RegionEvent(.unknown, "zone", time: 120)])
        #expect(m.state(of: "zone") == .unknown)
        // Back inside: no new entry. Then out: exit.
        do { let e = m.process(Self.fix(0, speed: 0), at: 200); #expect(e.isEmpty) }
        // 200 s without a fix while inside: the timeout falls due at 320 before this fix is decided
        // (as the agent's timer and replay's deadlines would serve it), then the exit.
        do { let e = m.process(Self.fix(400), at: 400); #expect(e.map(\.kind) == [.unknown, .exit]); #expect(e.first?.time == 320) }
    }

    @Test func dwellReplacesEntry() {
        var m = RegionMonitor()
        m.add(Self.zone { $0.dwell = 30 })
        var events: [RegionEvent] = []
        for t in 0 ..< 60 { m.process(Self.fix(0, speed: 0), at: Double(t), into: &events) }
        #expect(events == [RegionEvent(.dwell, "zone", time: 30)])
        // A short visit: neither dwell nor exit.
        var short = RegionMonitor()
        short.add(Self.zone { $0.dwell = 30 })
        do { let e = Self.pass(&short, t0: 0); #expect(e.isEmpty) }
        // The deadline is announced.
        var d = RegionMonitor()
        d.add(Self.zone { $0.dwell = 30 })
        _ = d.process(Self.fix(0, speed: 0), at: 5)
        #expect(d.nextDeadline == 35)
        d.advance(to: 35, into: &events)
        #expect(events.last == RegionEvent(.dwell, "zone", time: 35))
    }

    @Test func cooldownAndRepeats() {
        var m = RegionMonitor()
        m.add(Self.zone { $0.cooldown = 300 })
        var all = Self.pass(&m, t0: 0) + Self.pass(&m, t0: 100) + Self.pass(&m, t0: 400)
        #expect(all.map(\.kind) == [.enter, .exit, .enter, .exit])
        #expect(all.map { Int($0.time / 100) } == [0, 0, 4, 4])
        var once = RegionMonitor()
        once.add(Self.zone { $0.repeats = false })
        all = Self.pass(&once, t0: 0) + Self.pass(&once, t0: 100)
        #expect(all.map(\.kind) == [.enter])
        var exitsOnly = RegionMonitor()
        exitsOnly.add(Self.zone { $0.notifyOnEntry = false })
        do { let e = Self.pass(&exitsOnly, t0: 0); #expect(e.map(\.kind) == [.exit]) }
    }

    @Test func sameIdentifierReplacesAndRemoveForgets() throws {
        var m = RegionMonitor()
        m.add(Self.zone())
        _ = m.process(Self.fix(0, speed: 0), at: 0)
        // Replaced by a zone 1 km away: the vehicle is outside it, nothing fires.
        m.add(try Region.circle("zone", center: destination(Self.center, bearing: 0, distance: 1000), radius: 100))
        #expect(m.catalog.count == 1)
        do { let e = m.process(Self.fix(0, speed: 0), at: 1); #expect(e.isEmpty) }
        #expect(m.state(of: "zone") == .outside)
        let first = m.remove(identifier: "zone"), second = m.remove(identifier: "zone")
        #expect(first && !second)
        #expect(m.state(of: "zone") == nil)
    }

    @Test func manyRegionsAddedOneByOneMatchTheIndex() throws {
        // 2,000 adds and 700 removals through the catalog's delta list and lazy rebuilds.
        var catalog = RegionCatalog()
        var rng = SplitMix64(seed: 0xCA7A)
        var live: [String: RegionShape] = [:]
        for i in 0 ..< 2_000 {
            let c = destination(Self.center, bearing: rng.uniform(0, 360), distance: rng.uniform(0, 5_000))
            let r = try Region.circle("r\(i % 1_500)", center: c, radius: rng.uniform(20, 300))
            catalog.add(r)
            live[r.identifier] = r.shape
            if i % 3 == 0, let victim = live.keys.randomElement(using: &rng) {
                catalog.remove(identifier: victim)
                live[victim] = nil
            }
            if i % 97 == 0 { catalog.rebuildIfDue() }
        }
        #expect(catalog.count == live.count)
        var got: [Int32] = []
        for q in 0 ..< 500 {
            let p = destination(Self.center, bearing: rng.uniform(0, 360), distance: rng.uniform(0, 5_500))
            catalog.query(p, margin: 0, into: &got)
            let ids = Set(got.map { catalog.regions[Int($0)]!.identifier })
            let expected = Set(live.filter { $0.value.isWithin(p, margin: 0) }.keys)
            #expect(ids == expected, "query \(q), seed 0xCA7A")
        }
    }

    @Test func anIndexBuiltFromASnapshotIsUsedOnlyWhenNothingChangedSince() throws {
        // The tree built elsewhere (another thread) from a snapshot: while it is built, queries
        // scan the delta and stay exact; installed when no region came or went since, refused
        // (and rebuilt lazily again) when one did.
        var catalog = RegionCatalog()
        var rng = SplitMix64(seed: 0x5A17)
        var live: [String: RegionShape] = [:]
        func add(_ i: Int) throws {
            let c = destination(Self.center, bearing: rng.uniform(0, 360), distance: rng.uniform(0, 5_000))
            let r = try Region.circle("s\(i)", center: c, radius: rng.uniform(20, 300))
            catalog.add(r)
            live[r.identifier] = r.shape
        }
        func check(_ when: String) {
            var got: [Int32] = []
            for q in 0 ..< 200 {
                let p = destination(Self.center, bearing: rng.uniform(0, 360), distance: rng.uniform(0, 5_500))
                catalog.query(p, margin: 0, into: &got)
                let ids = Set(got.map { catalog.regions[Int($0)]!.identifier })
                #expect(ids == Set(live.filter { $0.value.isWithin(p, margin: 0) }.keys), "\(when), query \(q), seed 0x5A17")
            }
        }
        var none = catalog.indexSnapshot()
        #expect(none == nil, "no rebuild is due in an empty catalog")
        for i in 0 ..< 1_000 { try add(i) }
        let first = catalog.indexSnapshot()
        #expect(first != nil)
        check("while the first tree is built")
        var installed = first.map { catalog.install($0.build()) }
        #expect(installed == true)
        check("with the first tree")
        none = catalog.indexSnapshot()
        #expect(none == nil, "installed: no rebuild is due")
        // A snapshot, then changes before its tree comes: refused, and the next query rebuilds.
        for i in 1_000 ..< 1_400 { try add(i) }
        let second = catalog.indexSnapshot()
        #expect(second != nil)
        try add(1_400)
        catalog.remove(identifier: "s3")
        live["s3"] = nil
        installed = second.map { catalog.install($0.build()) }
        #expect(installed == false)
        check("after a refused tree")
        catalog.rebuildIfDue()   // as the monitor does at each fix: the rebuild is due again
        none = catalog.indexSnapshot()
        #expect(none == nil, "the refused tree's rebuild was not due again")
    }
}
