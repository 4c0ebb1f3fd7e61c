@testable import FencepostAgent
import CivilTime
import Fleet
import FencepostLinux
import Foundation
import LocalNotifications
import Testing

/// The fleet link's outbox hook, which the center calls for every engine operation (each fix,
/// each loop turn's advance): it must cost nothing when the output holds no event.
struct FleetLinkRecorderTests {
    @Test("the outbox hook reads the clocks only for an output with an event")
    func clockReadOnlyForEvents() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fp-recorder-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var reads = 0
        let clock = EngineClock(wall: WallInstant(secondsSinceEpoch: 1_800_000_000), wallTrusted: true, monotonic: MonotonicInstant(nanosecondsSinceBoot: 1))
        guard let link = try Self.link(in: folder, clock: { reads += 1; return clock }) else { return }
        var quiet = EngineOutput()
        #expect(link.outboxChanges(for: quiet, answeredBy: .socket).isEmpty)
        quiet.changes = [.setNextGeneration(7)]
        #expect(link.outboxChanges(for: quiet, answeredBy: .socket).isEmpty)
        #expect(reads == 0, "an output without events read the clocks \(reads) times")
        var answered = EngineOutput()
        answered.changes = [.setResponse(deliveryIdentifier: "d/1/1", action: "ok", at: nil)]
        let rows = link.outboxChanges(for: answered, answeredBy: .button)
        #expect(reads == 1, "one event, \(reads) clock reads")
        // Who answered travels with the operation, not in a field of the link.
        guard rows.count == 1, case .appendOutbox(let entry) = rows[0] else { Issue.record("rows: \(rows)"); return }
        #expect(entry.body.contains(#""source":"button""#), "\(entry.body)")
        #expect(entry.body.contains(#""clock":"ntp""#), "\(entry.body)")
    }

    @Test("events dated by the GNSS clock say clock gnss")
    func gnssLabel() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fp-recorder-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        guard let link = try Self.link(in: folder, clock: { EngineClock(wall: WallInstant(secondsSinceEpoch: 1_800_000_000), wallTrusted: true, monotonic: MonotonicInstant(nanosecondsSinceBoot: 1)) }) else { return }
        link.wallIsGNSS = { true }
        var answered = EngineOutput()
        answered.changes = [.setResponse(deliveryIdentifier: "d/1/1", action: "ok", at: nil)]
        guard case .appendOutbox(let entry)? = link.outboxChanges(for: answered, answeredBy: .remote).first else { Issue.record("no row"); return }
        #expect(entry.body.contains(#""clock":"gnss""#) && entry.body.contains(#""source":"remote""#), "\(entry.body)")
    }

    /// A link on a state file in `folder` (no broker: nothing connects); nil, with the reason
    /// printed, when libmosquitto cannot be loaded here.
    static func link(in folder: URL, clock: @escaping () -> EngineClock) throws -> FleetLink? {
        let store = try NotificationStore(path: folder.appendingPathComponent("state.sqlite").path)
        let configuration = FleetSettings(broker: .unix(path: folder.appendingPathComponent("broker.sock").path), device: try DeviceID("van-1"),
                                               ca: nil, certificate: nil, key: nil, username: nil, passwordFile: nil, keepalive: 60,
                                               outbox: FleetOutboxBounds(), healthInterval: 300)
        do {
            return try FleetLink(configuration: configuration, store: store, meta: [:], log: DaemonLog(level: .error) { _, _ in }, clock: clock)
        } catch {
            print("FleetLinkRecorderTests: skipped, the fleet link cannot be made here: \(error)")
            return nil
        }
    }
}
