import CivilTime
import Foundation
import Geofencing
import LocalNotifications
import Position
import Testing

/// Zones of a mapped zone set through the engine: delivered as location requests are (same ids,
/// records), with only zones that fired holding state; an unchanged zone keeps its cooldown across
/// a new set and a restart, an edited one starts afresh.
@Suite struct ZoneSetScenarioTests {
    static let start = instant("2026-08-01T10:00:00Z")
    static let depot = Coordinate(latitude: 52.5, longitude: 13.4)

    /// A set's bytes at a 64-byte aligned address, kept alive by the test.
    final class Bytes {
        let buffer: UnsafeMutableRawBufferPointer
        let set: ZoneSet
        init(_ regions: [Region]) throws {
            var b = ZoneSetBuilder()
            for r in regions { b.add(r, content: ZoneContent(title: "T " + r.identifier, sound: "chime", level: 2)) }
            let bytes = b.finish(sourceHash: 1).bytes
            let m = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 64)
            bytes.withUnsafeBytes { m.copyMemory(from: $0) }
            buffer = m
            set = try ZoneSet(UnsafeRawBufferPointer(m))
        }
        deinit { buffer.deallocate() }
    }

    func fix(_ metres: Double, _ t: Int64) -> Fix {
        let lon = Self.depot.longitude + metres / (111_320 * cos(Self.depot.latitude * .pi / 180))
        return Fix(time: Self.start.adding(seconds: t), coordinate: Coordinate(latitude: Self.depot.latitude, longitude: lon),
                   mode: .threeD, isValid: true, speed: 10, course: 90, horizontalError: 3)
    }

    func drive(_ sim: inout Simulation, from: Double, to: Double, startingAt t0: Int64) -> Int64 {
        var x = from, t = t0
        let step: Double = to >= from ? 10 : -10
        while (step > 0 && x <= to) || (step < 0 && x >= to) {
            sim.feed(fix(x, t), atNanoseconds: (Self.start.secondsSinceEpoch + t) * 1_000_000_000)
            x += step; t += 1
        }
        return t
    }

    static func zones(depotRadius: Double = 100, cooldown: Double = 600) throws -> [Region] {
        var far: [Region] = []
        for k in 0 ..< 500 {
            far.append(try Region.circle("far\(k)", center: Coordinate(latitude: 48 + Double(k) * 0.001, longitude: 11), radius: 50))
        }
        var depot = try Region.circle("depot", center: depot, radius: depotRadius)
        depot.cooldown = cooldown
        return far + [depot]
    }

    @Test func zonesDeliverLikeRequestsAndKeepTheirCooldown() throws {
        let first = try Bytes(Self.zones())
        var sim = Simulation(engine: makeEngine(), start: Self.start)
        sim.take(sim.engine.setZoneSet(first.set, clock: sim.clock))
        #expect(sim.engine.zoneCount == 501)
        var t = drive(&sim, from: -400, to: 400, startingAt: 0)
        let d = sim.deliveries("depot")
        #expect(d.map(\.regionEvent) == ["enter", "exit"], "\(d)")
        #expect(d.first?.identifier.hasPrefix("depot/") == true && d.first?.identifier.hasSuffix("/1") == true)
        #expect(d.first?.content.title == "T depot" && d.first?.content.sound == "chime" && d.first?.content.interruptionLevel == .timeSensitive)
        // Only the depot holds state.
        let status = sim.engine.zonesWithState(limit: 10, clock: sim.clock)
        #expect(status.total == 1 && status.zones.first?.identifier == "depot", "\(status)")
        let entries = d.filter { $0.regionEvent == "enter" }.count

        // The same zone in a new set (others changed): the entry cooldown still runs.
        let second = try Bytes(Array(Self.zones().dropFirst(10)))
        sim.take(sim.engine.setZoneSet(second.set, clock: sim.clock))
        t = drive(&sim, from: 400, to: -400, startingAt: t)
        #expect(sim.deliveries("depot").filter { $0.regionEvent == "enter" }.count == entries, "cooldown lost across a new set")

        // A restart (same boot): the cooldown survives it too.
        sim.restart(at: Self.start.adding(seconds: t + 5), reboot: false, fresh: makeEngine())
        sim.take(sim.engine.setZoneSet(second.set, clock: sim.clock))
        t = drive(&sim, from: -400, to: 400, startingAt: t + 5)
        #expect(sim.deliveries("depot").filter { $0.regionEvent == "enter" }.count == entries, "cooldown lost across a restart")

        // After the cooldown: entries again, the fire count going on (ids never repeat).
        t = drive(&sim, from: 400, to: -400, startingAt: t + 700)
        let after = sim.deliveries("depot")
        #expect(after.filter { $0.regionEvent == "enter" }.count == entries + 1)
        #expect(Set(after.map(\.identifier)).count == after.count)
        #expect(sim.noDuplicateDeliveries)

        // An edited zone (another radius) starts afresh: no cooldown, a new generation.
        let edited = try Bytes(Self.zones(depotRadius: 120))
        sim.take(sim.engine.setZoneSet(edited.set, clock: sim.clock))
        #expect(sim.engine.zoneState("depot") == nil)
        _ = drive(&sim, from: -400, to: 400, startingAt: t + 1)
        let fresh = sim.deliveries("depot").dropFirst(after.count)
        #expect(fresh.first?.regionEvent == "enter", "\(fresh)")
        #expect(fresh.first?.identifier.hasSuffix("/1") == true, "\(String(describing: fresh.first?.identifier))")
        #expect(Set(sim.deliveries("depot").map(\.identifier)).count == sim.deliveries("depot").count)
    }
}
