import FencepostJSON
import FencepostTestSupport
import Foundation
import Testing

/// Transitions of zones that ask for them (`"report": true` in the zones file) go to the fleet
/// as `transition` events, from the outbox like deliveries, on a real replayed drive: the demo
/// drive (Düsseldorf, board/demo) starts in the depot, leaves it, and ends at the customer.
@Suite(.serialized, .processes) struct FleetTransitionTests {
    @Test func aReportedZoneSendsItsEntryAndExitAnotherDoesNot() throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let broker = try MosquittoBroker(.init())
        let consumer = try EventConsumer(broker: broker, device: "van-1")
        let agent = try AgentProcess()
        let zones = agent.dir.appendingPathComponent("zones.geojson").path
        try #"""
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[6.74191,51.24363]},"properties":{"radius":150,"report":true}},
              {"type":"Feature","id":"customer","geometry":{"type":"Point","coordinates":[6.77686,51.21554]},"properties":{"radius":120}}]}
            """#.write(toFile: zones, atomically: true, encoding: .utf8)
        try agent.writeFleetConfig(fleet: "broker = \"\(broker.address)\"\ndevice = \"van-1\"\nkeepalive = 5\n", extra: """
            zones = "\(zones)"
            \(AgentProcess.demoReplay(speed: 40))
            """)
        try agent.start(agent: true)
        #expect(agent.waitUntilRunning(), "\(agent.log)")
        // The drive's three crossings: depot enter, depot exit, customer enter (delivered each).
        let done = consumer.waitFor(3, type: "delivery", timeout: 180) && consumer.waitFor(2, type: "transition", timeout: 10)
        let events = consumer.unique
        let transitions = events.filter { $0["type"]?.string == "transition" }
        print("transitions: \(transitions.map { $0.serialized() })")
        #expect(done, "\(events.map { $0.serialized() })\nagent log:\n\(agent.log.suffix(3000))")
        #expect(transitions.map { "\($0["region"]?.string ?? "?") \($0["event"]?.string ?? "?")" } == ["depot enter", "depot exit"],
                "\(transitions.map { $0.serialized() })")
        // Each with where it was decided (near the depot) and in seq order with the deliveries.
        for t in transitions {
            let lat = t["pos"]?["lat"]?.double ?? 0, lon = t["pos"]?["lon"]?.double ?? 0
            #expect(abs(lat - 51.24363) < 0.01 && abs(lon - 6.74191) < 0.01, "\(t.serialized())")
        }
        #expect(sequenceProblems(events) == [])
        // A transition comes with the delivery of the same crossing, in the same commit: adjacent seqs.
        let depotDeliveries = events.filter { $0["type"]?.string == "delivery" && ($0["request"]?.string ?? "") == "depot" }
        #expect(depotDeliveries.count == 2, "\(events.map { $0.serialized() })")
        for (t, d) in zip(transitions, depotDeliveries) {
            #expect(abs((t["seq"]?.int64 ?? 0) - (d["seq"]?.int64 ?? 100)) == 1, "\(t.serialized()) / \(d.serialized())")
        }
    }
}
