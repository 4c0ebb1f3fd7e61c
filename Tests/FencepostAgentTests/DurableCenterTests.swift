import CivilTime
@testable import FencepostAgent
import FencepostLinux
import Foundation
import LocalNotifications
import SeededRandom
import Testing

/// The engine over a real SQLite file: a seeded run of operations, with restarts from the file
/// at random points, gives exactly what the same run gives over the in-memory reference store.
@Suite struct DurableCenterTests {
    static let zones = SystemZones()

    func engine() -> NotificationEngine {
        var c = EngineConfiguration()
        c.pendingCap = 12
        return NotificationEngine(configuration: c, deviceZone: try! Self.zones.rules(named: "Europe/Berlin"),
                                  zoneLookup: { try? Self.zones.rules(named: $0) })
    }

    func randomRequest(_ rng: inout SplitMix64, _ n: Int) -> NotificationRequest {
        let id = "r\(rng.next() % 20)"
        let missed: MissedFirePolicy = [.coalesce, .skip, .deliverLate(graceSeconds: 1800)][Int(rng.next() % 3)]
        var content = NotificationContent(title: "\(id) #\(n)", sound: "default")
        if rng.next() % 3 == 0 { content.categoryIdentifier = "REMINDER" }
        switch rng.next() % 3 {
        case 0:
            let m = CalendarMatch(minute: Int(rng.next() % 60))
            return NotificationRequest(identifier: id, content: content,
                                       trigger: .calendar(CalendarTrigger(match: m, zoneIdentifier: rng.next() % 2 == 0 ? "America/New_York" : nil,
                                                                          repeats: rng.next() % 4 != 0)), missedFirePolicy: missed)
        default:
            return NotificationRequest(identifier: id, content: content,
                                       trigger: .interval(IntervalTrigger(seconds: Int64(60 + rng.next() % 3600), repeats: rng.next() % 3 != 0)),
                                       missedFirePolicy: missed)
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func sqliteStateEqualsTheReference(seed: UInt64) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-center-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("state.sqlite").path

        var rng = SplitMix64(seed: seed)
        var wall: Int64 = 1_790_000_000, mono: UInt64 = 5_000_000_000
        func clock() -> EngineClock { EngineClock(wall: WallInstant(secondsSinceEpoch: wall), wallTrusted: true, monotonic: MonotonicInstant(nanosecondsSinceBoot: mono)) }

        var center = try DurableNotificationCenter(path: path, engine: engine(), clock: clock())
        var reference = engine()
        var memory = MemoryStore()
        let categories = [NotificationCategory(identifier: "REMINDER", actions: [NotificationAction(identifier: "snooze", title: "Later", snoozeSeconds: 300)])]
        _ = try center.perform { (e: inout NotificationEngine) throws(RequestError) in try e.setCategories(categories) }
        memory.apply(try reference.setCategories(categories).changes)

        for step in 0 ..< 400 {
            let advance = Int64(rng.next() % 900)
            wall += advance; mono += UInt64(advance) * 1_000_000_000
            let c = clock()
            switch rng.next() % 10 {
            case 0 ... 3:
                let r = randomRequest(&rng, step)
                let a = Result { try center.perform { (e: inout NotificationEngine) throws(RequestError) in try e.add(r, clock: c) } }
                let b = Result { try reference.add(r, clock: c) }
                #expect((try? a.get()) != nil || (try? b.get()) == nil, "seed \(seed) step \(step)")
                if let out = try? b.get() { memory.apply(out.changes) }
            case 4:
                let id = "r\(rng.next() % 20)"
                _ = try center.perform { (e: inout NotificationEngine) throws(RequestError) in e.removePending([id]) }
                memory.apply(reference.removePending([id]).changes)
            case 5:
                if let d = reference.delivered.last(where: { $0.response == nil }) {
                    let action = ["default", "dismiss", "snooze"][Int(rng.next() % 3)]
                    _ = try center.perform { (e: inout NotificationEngine) throws(RequestError) in try e.respond(to: d.identifier, action: action, clock: c) }
                    memory.apply(try reference.respond(to: d.identifier, action: action, clock: c).changes)
                }
            case 6:
                // Restart from the file (a reboot: the monotonic clock starts again).
                mono = 1_000_000_000
                center = try DurableNotificationCenter(path: path, engine: engine(), clock: clock())
                reference = engine()
                let out = reference.restore(memory.snapshot, clock: clock())
                memory.apply(out.changes)
                #expect(center.unreadableRows.isEmpty)
            default:
                _ = try center.perform { (e: inout NotificationEngine) throws(RequestError) in e.advance(clock: c) }
                memory.apply(reference.advance(clock: c).changes)
            }
            let p1 = center.engine.pending(clock: c).map { "\($0.request.identifier) \($0.nextFire.map { "\($0)" } ?? "-")" }
            let p2 = reference.pending(clock: c).map { "\($0.request.identifier) \($0.nextFire.map { "\($0)" } ?? "-")" }
            #expect(p1 == p2, "seed \(seed) step \(step)")
            #expect(center.engine.delivered == reference.delivered, "seed \(seed) step \(step)")
            if p1 != p2 || center.engine.delivered != reference.delivered { return }
        }
        // The file holds what the reference store holds.
        let (snapshot, problems) = try load(path)
        #expect(problems == 0)
        #expect(snapshot.requests.map(\.request) == memory.requests.map(\.request))
        #expect(snapshot.requests.map(\.progress) == memory.requests.map(\.progress))
        #expect(snapshot.delivered == memory.delivered)
        #expect(!memory.delivered.isEmpty)
    }

    func load(_ path: String) throws -> (EngineSnapshot, Int) {
        let store = try NotificationStore(path: path)
        let (snapshot, problems) = StoreMapping.engineSnapshot(try store.load())
        return (snapshot, problems.count)
    }
}
