import CivilTime
import Foundation
import Geofencing
import LocalNotifications
import Position
import Testing

/// Location triggers through the engine: entry and exit become deliveries, a one-shot request ends
/// with its fire, the region's state survives a restart (no second entry), a lost fix reports
/// `positionUnknown`.
@Suite struct LocationScenarioTests {
    static let start = instant("2026-08-01T10:00:00Z")
    static let depot = Coordinate(latitude: 52.5, longitude: 13.4)

    /// A fix `metres` east of the depot at true time `t` (seconds after start), moving east at 10 m/s.
    func fix(_ metres: Double, _ t: Int64) -> Fix {
        let lon = Self.depot.longitude + metres / (111_320 * cos(Self.depot.latitude * .pi / 180))
        return Fix(time: Self.start.adding(seconds: t), coordinate: Coordinate(latitude: Self.depot.latitude, longitude: lon),
                   mode: .threeD, isValid: true, speed: 10, course: 90, horizontalError: 3)
    }

    func request(_ id: String, entry: Bool = true, exit: Bool = true, repeats: Bool = true) throws -> NotificationRequest {
        NotificationRequest(identifier: id, content: NotificationContent(title: id, sound: "chime"),
                            trigger: .location(LocationTrigger(shape: .circle(try CircularRegion(center: Self.depot, radius: 100)),
                                                               notifyOnEntry: entry, notifyOnExit: exit, repeats: repeats)))
    }

    func drive(_ sim: inout Simulation, from: Double, to: Double, startingAt t0: Int64) {
        var x = from, t = t0
        while x <= to {
            sim.feed(fix(x, t), atNanoseconds: (Self.start.secondsSinceEpoch + t) * 1_000_000_000)
            x += 10; t += 1
        }
    }

    @Test func passThroughTheDepot() throws {
        var sim = Simulation(engine: makeEngine(), start: Self.start)
        try sim.add(request("both"))
        try sim.add(request("once", exit: false, repeats: false))
        drive(&sim, from: -400, to: 400, startingAt: 0)
        let both = sim.deliveries("both")
        #expect(both.map(\.regionEvent) == ["enter", "exit"])
        #expect(sim.deliveries("once").map(\.regionEvent) == ["enter"])
        #expect(sim.engine.pending("once", clock: sim.clock) == nil)
        // Entered at about x = -100 m (t ≈ 30 s), left at x = +100 m (t ≈ 50 s); a fix or two late at most.
        let times = sim.events.filter { $0.requestIdentifier == "both" }.map { $0.time - Self.start.secondsSinceEpoch }
        #expect(times.count == 2)
        #expect((30...33).contains(times[0]), "\(times)")
        #expect((50...53).contains(times[1]), "\(times)")
        #expect(sim.noDuplicateDeliveries)
    }

    @Test func stateSurvivesARestartInside() throws {
        var sim = Simulation(engine: makeEngine(), start: Self.start)
        try sim.add(request("depot"))
        drive(&sim, from: -300, to: 0, startingAt: 0)       // now at the centre
        #expect(sim.deliveries("depot").map(\.regionEvent) == ["enter"])
        sim.restart(at: Self.start.adding(seconds: 60), reboot: true, fresh: makeEngine())
        // Still inside after the restart: no second entry; then out: one exit.
        drive(&sim, from: 0, to: 300, startingAt: 60)
        #expect(sim.deliveries("depot").map(\.regionEvent) == ["enter", "exit"])
    }

    @Test func lostFixInsideReportsUnknown() throws {
        var sim = Simulation(engine: makeEngine(), start: Self.start)
        try sim.add(request("depot"))
        drive(&sim, from: -300, to: 0, startingAt: 0)
        sim.run(until: Self.start.adding(seconds: 400))      // tunnel: no fixes for > 120 s
        #expect(sim.outcomes("depot", .positionUnknown).count == 1)
        #expect(sim.deliveries("depot").count == 1)          // no false exit
    }
}
