@testable import FencepostAgent
import FencepostJSON
import FencepostLinux
import Foundation
import Geofencing
import LocalNotifications
import Position
import SeededRandom
import Testing
import TrackFormats

/// `apply`'s memory of what it installed (fingerprints in the store), the daemon's in-process door,
/// and version 1 files whose memory is one meta value.
@Suite struct ApplyMemoryTests {
    /// `count` circle zones around Düsseldorf, as the config file's zones become requests.
    static func zones(_ count: Int, seed: UInt64) throws -> [NotificationRequest] {
        var rng = SplitMix64(seed: seed)
        return try (0..<count).map { i in
            let center = Coordinate(latitude: 51 + rng.uniform(0, 0.5), longitude: 6.5 + rng.uniform(0, 0.5))
            let region = try CircularRegion(center: center, radius: 50 + rng.uniform(0, 250))
            return NotificationRequest(identifier: "z\(i)", content: NotificationContent(title: "z\(i)", sound: "default"),
                                       trigger: .location(LocationTrigger(shape: .circle(region), notifyOnEntry: true, notifyOnExit: true, repeats: true)))
        }
    }

    @Test func fiftyThousandZonesAppliedTwiceWriteNothingTheSecondTime() throws {
        let seed: UInt64 = 20_261_121
        let h = try ControlHarness()
        var requests = try Self.zones(50_000, seed: seed)
        let first = h.service.apply(requests: requests, categories: nil, center: h.center, clock: h.clock)
        #expect(first.error == nil && first.fatal == nil, "seed \(seed): \(first.error ?? "")")
        #expect(first.result?.added.count == 50_000, "seed \(seed)")
        #expect(h.center.engine.pendingCount == 50_000)
        #expect(try h.center.store.appliedRequests().count == 50_000)

        let fingerprint = try h.storeFingerprint()
        let second = h.service.apply(requests: requests, categories: nil, center: h.center, clock: h.clock)
        #expect(second.result?.unchanged.count == 50_000, "seed \(seed)")
        #expect(second.result?.added == [] && second.result?.replaced == [] && second.result?.removed == [])
        #expect(try h.storeFingerprint() == fingerprint, "seed \(seed): the second apply wrote to the store")

        // After a restart, the memory comes from the table: still unchanged, still no write.
        try h.restart()
        let third = h.service.apply(requests: requests, categories: nil, center: h.center, clock: h.clock)
        #expect(third.result?.unchanged.count == 50_000, "seed \(seed)")
        #expect(try h.storeFingerprint() == fingerprint, "seed \(seed): the apply after a restart wrote to the store")

        // One zone moved, one dropped: exactly those change, and the socket door agrees.
        let moved = try CircularRegion(center: Coordinate(latitude: 51.25, longitude: 6.75), radius: 120)
        requests[7].trigger = .location(LocationTrigger(shape: .circle(moved), notifyOnEntry: true, notifyOnExit: true, repeats: true))
        let dropped = requests.remove(at: 11)
        let fourth = h.service.apply(requests: requests, categories: nil, center: h.center, clock: h.clock)
        #expect(fourth.result?.replaced == ["z7"] && fourth.result?.removed == [dropped.identifier] && fourth.result?.added == [])
        #expect(fourth.result?.unchanged.count == 49_998)
        #expect(!h.center.engine.isPending(dropped.identifier))
        let viaSocket = try h.result("apply", #"{"requests":[\#(requests.prefix(3).map { $0.json.serialized() }.joined(separator: ","))]}"#)
        #expect(ids(viaSocket["unchanged"]) == ["z0", "z1", "z2"])
        #expect(ids(viaSocket["removed"]).count == 49_999 - 3)
    }

    @Test func inProcessAndSocketApplyShareOneMemory() throws {
        let h = try ControlHarness()
        let decoded = try [water, morning, depot].map { try NotificationRequest(json: try JSONValue.parse($0)) }
        let first = try h.result("apply", #"{"requests":[\#(water),\#(morning),\#(depot)]}"#)
        #expect(ids(first["added"]) == ["water", "morning", "depot"])
        let fingerprint = try h.storeFingerprint()
        let second = h.service.apply(requests: decoded, categories: nil, center: h.center, clock: h.clock)
        #expect(second.result?.unchanged == ["water", "morning", "depot"])
        #expect(try h.storeFingerprint() == fingerprint)
        // A refusal names the request and changes nothing.
        let twice = h.service.apply(requests: [decoded[0], decoded[0]], categories: nil, center: h.center, clock: h.clock)
        #expect(twice.result == nil && twice.error?.contains("requests[1]") == true, "\(twice.error ?? "")")
        #expect(try h.storeFingerprint() == fingerprint)
        #expect(second.result?.summary() == "0 added, 0 replaced, 0 removed, 3 unchanged")
    }

    @Test func versionOneMetaIsReadAndReplacedAtTheFirstWrite() throws {
        let h = try ControlHarness()
        // The state a version 1 agent left: the requests pending, and the applied set as one meta
        // value (id → the request's JSON as applied), written in the same transaction.
        let decoded = try [water, morning].map { try NotificationRequest(json: try JSONValue.parse($0)) }
        let legacy = JSONValue.object(decoded.map { ($0.identifier, $0.json) }).serialized()
        _ = try h.center.perform(meta: [("apply.requests", legacy)]) { (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in
            var out = try e.add(decoded[0], clock: h.clock)
            out.append(try e.add(decoded[1], clock: h.clock))
            return out
        }
        try h.restart()
        #expect(h.center.meta["apply.requests"] == legacy)
        #expect(try h.center.store.appliedRequests() == [])

        // Read from the meta: unchanged, and nothing written (the conversion waits for a write).
        let fingerprint = try h.storeFingerprint()
        let same = try h.result("apply", #"{"requests":[\#(water),\#(morning)]}"#)
        #expect(ids(same["unchanged"]) == ["water", "morning"])
        #expect(try h.storeFingerprint() == fingerprint)

        // A manual add is not in the memory: apply leaves it alone.
        _ = try h.result("add", #"{"request":{"id":"manual","trigger":{"interval":{"seconds":600}}}}"#)
        // The first write converts: morning removed, water kept unchanged, the meta value gone.
        let fewer = h.service.apply(requests: [decoded[0]], categories: nil, center: h.center, clock: h.clock)
        #expect(fewer.result?.removed == ["morning"] && fewer.result?.unchanged == ["water"])
        #expect(try h.center.store.appliedRequests().map(\.id) == ["water"])
        #expect(try h.center.store.load().meta["apply.requests"] == nil)
        #expect(h.center.engine.pending(clock: h.clock).map(\.request.identifier).sorted() == ["manual", "water"])

        try h.restart()
        let after = try h.result("apply", #"{"requests":[\#(water)]}"#)
        #expect(ids(after["unchanged"]) == ["water"])
        #expect(ids(after["removed"]) == [])
    }

    @Test func fingerprintIsStableAndSeesEveryField() throws {
        let r = try NotificationRequest(json: try JSONValue.parse(water))
        // A fixed value: when the encoding of requests changes, every applied request counts as
        // changed once after the upgrade (replaced, its progress restarted) — this line shows it.
        #expect(AppliedRequests.fingerprint(of: r) == 6_501_852_606_674_971_604, "\(r.json.serialized())")
        var other = r
        other.content.body = "x"
        #expect(AppliedRequests.fingerprint(of: other) != AppliedRequests.fingerprint(of: r))
        other = r
        other.missedFirePolicy = .skip
        #expect(AppliedRequests.fingerprint(of: other) != AppliedRequests.fingerprint(of: r))
    }
}

/// A zone becomes the same request, with the same refusals, whether built directly (the config
/// reader's path) or decoded from its JSON form.
@Suite struct ZoneRequestTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func directEqualsDecoded(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var refused = 0, made = 0
        for i in 0..<500 {
            let center = Coordinate(latitude: rng.uniform(-89, 89), longitude: rng.uniform(-179, 179))
            let shape: ZoneDefinition.Shape
            func ring(_ n: Int, _ r: Double) -> [Coordinate] {
                (0..<n).map { k in
                    let a = Double(k) * 2 * .pi / 7
                    return Coordinate(latitude: center.latitude + r * sin(a), longitude: center.longitude + r * cos(a))
                }
            }
            switch rng.int(0...6) {
            case 0: shape = .circle(center: center, radius: 20_000_000)   // too large: refused
            case 1: shape = .polygon([[[center, center, center]]])         // degenerate: refused
            case 2, 3: shape = .polygon([[ring(rng.int(3...7), 0.01)]])
            case 4: shape = .polygon([[ring(7, 0.01), ring(rng.int(3...7), 0.003)]])   // a hole: the "parts" form
            default: shape = .circle(center: center, radius: rng.uniform(1, 5000))
            }
            let zone = ZoneDefinition(id: "z\(i)", shape: shape, notifyOnEntry: rng.chance(0.5), notifyOnExit: rng.chance(0.5),
                                      dwell: rng.chance(0.3) ? rng.uniform(0, 600) : nil, cooldown: rng.chance(0.3) ? rng.uniform(0, 600) : nil)
            let direct = Result { () throws(RequestError) in try AgentConfigurationParser.request(for: zone) }
            let decoded = Result { () throws(RequestError) in try NotificationRequest(json: AgentConfigurationParser.json(for: zone)) }
            switch (direct, decoded) {
            case let (.success(a), .success(b)): #expect(a == b, "seed \(seed) zone \(i)"); made += 1
            case let (.failure(a), .failure(b)):
                #expect(a.message == b.message && a.rule == b.rule, "seed \(seed) zone \(i): \(a) / \(b)"); refused += 1
            default: Issue.record("seed \(seed) zone \(i): \(direct) / \(decoded)")
            }
        }
        #expect(refused > 50 && made > 300, "seed \(seed): \(refused) refused, \(made) made")
    }
}
