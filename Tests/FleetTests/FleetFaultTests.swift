import FencepostJSON
import FencepostTestSupport
import Foundation
import SeededRandom
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The fleet link under faults, end to end: a real agent, a real mosquitto, the fault proxy
/// between them, a backend consumer (mosquitto_sub with a durable session) that dedups by id.
/// What must hold through every fault: each event reaches the consumer exactly once after dedup,
/// in seq order, holes only where a gap event says what was dropped; deliveries on time; no loop
/// turn over 50 ms; the control socket answers while the link is down.
@Suite(.serialized, .processes) struct FleetFaultTests {
    static let device = "van-1"

    /// The retained status of `device`, read with mosquitto_sub.
    static func status(_ broker: MosquittoBroker, _ device: String = device) -> JSONValue? {
        guard let out = try? FleetTools.run(["/usr/bin/mosquitto_sub", "--unix", broker.socketPath, "-t", "fencepost/v1/dev/\(device)/status",
                                             "-C", "1", "-W", "1"]),
              let line = out.output.split(separator: "\n").first else { return nil }
        return try? JSONValue.parse(String(line))
    }

    static func waitOnline(_ broker: MosquittoBroker, timeout: Double = 30) -> Bool {
        SpawnedProcess.wait(timeout: timeout) { status(broker)?["online"]?.bool == true }
    }

    /// What each fault test starts from: a broker with plain TCP (`persistence` as asked), the
    /// fault proxy in front of it when `proxied` (the agent then reaches the broker through it), a
    /// consumer of the device's events, and the agent with `[fleet]` (`fleet`: more lines of the
    /// section) running, and online when `proxied`. Each part stops and removes its folder at
    /// deinit, so every path out of a test cleans up; the agent keeps its broker and proxy alive.
    static func startFleet(proxied: Bool = true, persistence: Bool = false, fleet extra: String = "",
                           sourceLocation: SourceLocation = #_sourceLocation) throws
        -> (broker: MosquittoBroker, proxy: FaultProxy?, consumer: EventConsumer, agent: AgentProcess) {
        let broker = try MosquittoBroker(.init(plainTCP: true, persistence: persistence))
        let proxy = try proxied ? FaultProxy(target: "127.0.0.1:\(broker.plainPort!)") : nil
        let consumer = try EventConsumer(broker: broker, device: device)
        let agent = try AgentProcess()
        let port = proxy?.port ?? broker.plainPort!
        try agent.writeFleetConfig(fleet: "broker = \"mqtt://127.0.0.1:\(port)\"\ndevice = \"\(device)\"\nkeepalive = 5\n" + extra)
        try agent.start(agent: true)
        agent.peers = [broker]
        if let proxy { agent.peers.append(proxy) }
        #expect(agent.waitUntilRunning(), "\(agent.log)", sourceLocation: sourceLocation)
        if proxied { #expect(waitOnline(broker), "never online: \(agent.log)", sourceLocation: sourceLocation) }
        return (broker, proxy, consumer, agent)
    }

    /// Deliveries whose event says they happened later than due (+ `slack` s): "id at due".
    static func lateDeliveries(_ events: [JSONValue], added: (before: Double, after: Double), seconds: [Double], prefix: String,
                               slack: Double = 0.5) -> [String] {
        var late: [String] = []
        for e in events where e["type"]?.string == "delivery" {
            guard let request = e["request"]?.string, request.hasPrefix(prefix + "-"),
                  let i = Int(request.dropFirst(prefix.count + 1)), i < seconds.count,
                  let at = unixSeconds(e["at"]?.string) else { continue }
            let dueLatest = added.after + seconds[i]
            if at > dueLatest + slack { late.append("\(request) at \(at) due by \(dueLatest)") }
        }
        return late
    }

    /// A link cut (blackhole: sockets open, bytes dropped, as a dead cellular link) for 20 s
    /// while 1,000 deliveries happen in its first 16 s: the count of events that wait in the
    /// outbox, the agent noticing a dead link (keepalive 5 s) and failed reconnects, in every
    /// run. ``FleetLongCutTests`` holds the issue's 10-minute cut.
    @Test(.ownThread) func linkCutWhileAThousandEventsHappen() async throws {
        try await Self.linkCut(seconds: 20, events: 1000, spread: 15, statusEvery: 0.5)
    }

    /// The link cut for `seconds` while `events` one-shot deliveries fall due over its first
    /// `spread` seconds; `status` asked every `statusEvery` s meanwhile. Then: the consumer sees
    /// every delivery exactly once, in seq order, each on time; no loop turn whose own work
    /// (CPU time) passed 50 ms (turns slow on the wall clock only, a loaded machine preempting
    /// the agent, are printed); every control answer within 2 s. It waits by suspending, on threads
    /// of its own (`.ownThread`): the ten-minute cut neither holds one of the cooperative pool's
    /// threads meanwhile nor waits for one to go on.
    static func linkCut(seconds cut: Double, events count: Int, spread: Double, statusEvery: Double) async throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let (_, fault, consumer, agent) = try Self.startFleet()
        let proxy = try #require(fault)

        try proxy.command("mode blackhole")
        let cutAt = Date()
        let seconds = (0 ..< count).map { 1.0 + Double($0) * spread / Double(count) }
        let added = try agent.addIntervals(prefix: "cut", seconds: seconds)
        // The control socket answers at once while the link is dead.
        var slowest = 0.0
        while Date().timeIntervalSince(cutAt) < cut {
            let t = Date()
            let out = try agent.cli(["status", "--json"])
            #expect(out.status == 0, "\(out.stderr)")
            slowest = max(slowest, Date().timeIntervalSince(t))
            try await Task.sleep(nanoseconds: UInt64(statusEvery * 1e9))
        }
        #expect(consumer.unique.isEmpty, "events arrived through a dead link")
        try proxy.command("mode pass")
        let restored = Date()
        let all = await consumer.waitFor(count, type: "delivery", timeout: 180)
        let drained = Date().timeIntervalSince(restored)
        let events = consumer.unique
        agent.stop()   // its summary of the loop turns
        print("link cut \(Int(cut)) s: \(events.count) unique events of \(consumer.received.count) received, drained \(String(format: "%.1f", drained)) s after the link came back; slowest status during the cut \(String(format: "%.3f", slowest)) s")
        #expect(all, "\(events.count) of \(count) deliveries; agent log:\n\(agent.log.suffix(3000))")
        #expect(events.filter { $0["type"]?.string == "delivery" }.count == count)
        #expect(sequenceProblems(events) == [])
        #expect(Self.lateDeliveries(events, added: added, seconds: seconds, prefix: "cut") == [])
        let turns = agent.turnsOverBudgetOnTheCPU
        print("link cut \(Int(cut)) s: \(turns?.summary ?? "no summary"); slow on the wall clock: \(agent.slowTurns)")
        #expect(turns != nil, "no summary of the loop turns in the log:\n\(agent.log.suffix(2000))")
        // A control answer's own work is bounded (a status page is 250 requests): never the turn
        // with the most CPU time past 50 ms.
        if let most = agent.mostCPUInOneTurn, most.milliseconds > 50 {
            #expect(most.what.hasPrefix("due work"), "a turn of \(most.milliseconds) ms of the agent's own work: \(most.what)")
        }
        // A loop held off the CPU for seconds catches up a few fires a turn (the engine's
        // firesPerTurn), so this holds under any load.
        #expect(turns?.count == 0, "loop turns over 50 ms of the agent's own work: \(turns?.summary ?? "")\n\(agent.slowTurns)")
        #expect(slowest < 2, "a control answer took \(slowest) s while the link was down")
    }

    /// The broker goes away while the board keeps delivering, and comes back with or without its
    /// persistence file: the board sends what the broker had not acknowledged, and says it is
    /// online again (a broker without persistence lost the retained status).
    @Test(arguments: [true, false])
    func brokerRestarted(persistence: Bool) throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let (broker, fault, consumer, agent) = try Self.startFleet(persistence: persistence)
        let proxy = try #require(fault)

        // Two bursts of 100: the first while the broker runs, the second while it is down.
        let first: [Double] = (0 ..< 100).map { (i: Int) -> Double in 0.5 + Double(i) * 0.02 }
        let second: [Double] = (0 ..< 100).map { (i: Int) -> Double in 6.0 + Double(i) * 0.02 }
        let seconds = first + second
        let added = try agent.addIntervals(prefix: "restart", seconds: seconds)
        #expect(consumer.waitFor(100, type: "delivery", timeout: 30))
        // Between the bursts: the broker stops (clean, so its persistence is written) or dies.
        if persistence { broker.stop() } else { broker.kill() }
        try proxy.command("mode refuse")
        usleep(7_000_000)   // the second burst happens now
        try broker.launch()
        // The consumer's mosquitto_sub reconnects by itself (1 s); the board after it, so that a
        // broker without persistence has the consumer's subscription before the board sends.
        SpawnedProcess.wait(timeout: 10) { broker.log.components(separatedBy: "as backend").count >= 3 }
        usleep(500_000)
        try proxy.command("mode pass")
        let all = consumer.waitFor(200, type: "delivery", timeout: 120)
        let events = consumer.unique
        print("broker restart (persistence \(persistence)): \(events.count) unique of \(consumer.received.count) received")
        #expect(all, "\(events.count) of 200; agent log:\n\(agent.log.suffix(3000))\nbroker:\n\(broker.log.suffix(2000))")
        #expect(sequenceProblems(events) == [])
        #expect(Self.lateDeliveries(events, added: added, seconds: seconds, prefix: "restart") == [])
        #expect(Self.waitOnline(broker, timeout: 10), "the board did not say online again: \(Self.status(broker).map { $0.serialized() } ?? "nothing retained")")
        // Judged on the agent's own work (CPU time), as the link-cut test does: a turn slow on the
        // wall clock only was preempted by a loaded machine.
        agent.stop()   // its summary of the loop turns
        let turns = agent.turnsOverBudgetOnTheCPU
        #expect(turns != nil, "no summary of the loop turns in the log:\n\(agent.log.suffix(2000))")
        #expect(turns?.count == 0, "loop turns over 50 ms of the agent's own work: \(turns?.summary ?? "")\n\(agent.slowTurns)")
    }

    /// The agent SIGKILLed at seeded points while it publishes (a power cut between the SQLite
    /// commit and the PUBACK): after every restart it sends again what was not acknowledged,
    /// with the same ids; the consumer sees every event once and in order.
    @Test func agentKilledAtSeededPointsWhilePublishing() throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let seed = ProcessInfo.processInfo.environment["FENCEPOST_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1 ... 1_000_000)
        print("agentKilledAtSeededPointsWhilePublishing: seed \(seed) (FENCEPOST_SEED=\(seed) repeats it)")
        var rng = SplitMix64(seed: seed)
        let kills = Int(ProcessInfo.processInfo.environment["FENCEPOST_FLEET_KILLS"] ?? "") ?? 50
        let (_, _, consumer, agent) = try Self.startFleet(proxied: false)
        // Deliveries all along the kills: 20 a second for as long as they last.
        let span = Double(kills) * 1.2 + 5
        let count = Int(span * 20)
        let seconds = (0 ..< count).map { 0.5 + Double($0) / 20 }
        _ = try agent.addIntervals(prefix: "kill", seconds: seconds)
        for k in 0 ..< kills {
            let wait = 200_000 + rng.below(800_000)   // 0.2 … 1 s after the agent answers
            usleep(UInt32(wait))
            agent.powerCut()
            try agent.start(agent: true)
            #expect(agent.waitUntilRunning(), "restart \(k + 1) (seed \(seed)): \(agent.log.suffix(2000))")
        }
        // The last deliveries, then everything acknowledged.
        usleep(UInt32(max(0, (seconds.last! + 0.5) * 1e6 - Double(kills) * 1.2e6)))
        let delivered = try agent.cli(["delivered", "--json"])
        let recorded = (try? JSONValue.parse(delivered.stdout))?.array?.count ?? -1
        consumer.waitFor(recorded, type: "delivery", timeout: 60)
        let events = consumer.unique
        let deliveries = events.filter { $0["type"]?.string == "delivery" }
        let received = consumer.received.filter { $0["id"] != nil }.count
        print("\(kills) SIGKILLs: \(events.count) unique events (\(received - events.count) duplicates resent), \(recorded) deliveries recorded by the agent")
        #expect(sequenceProblems(events) == [], "seed \(seed)")
        // `delivered` is a snapshot: one-shot requests still due after it may be delivered (and
        // published) before the consumer has caught up, so the consumer sees at least as many.
        #expect(deliveries.count >= recorded, "seed \(seed): the agent recorded \(recorded) deliveries, the consumer saw \(deliveries.count)")
        let requests = deliveries.compactMap { $0["request"]?.string }
        #expect(Set(requests).count == requests.count, "seed \(seed): a one-shot request delivered twice")
    }

    /// A full outbox: bounded to its rows, the oldest dropped, and a gap event that says how many
    /// of which type were dropped; nothing silent.
    @Test func aFullOutboxDropsAndSaysSo() throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let (_, fault, consumer, agent) = try Self.startFleet(fleet: "outbox_rows = 16\n")
        let proxy = try #require(fault)
        try proxy.command("mode refuse")
        try proxy.command("rst")
        let seconds = (0 ..< 100).map { 0.5 + Double($0) * 0.02 }
        _ = try agent.addIntervals(prefix: "full", seconds: seconds)
        usleep(4_000_000)
        try proxy.command("mode pass")
        SpawnedProcess.wait(timeout: 60) { consumer.unique.contains { $0["type"]?.string == "gap" } }
        usleep(3_000_000)
        let events = consumer.unique
        let deliveries = events.filter { $0["type"]?.string == "delivery" }.count
        let gaps = events.filter { $0["type"]?.string == "gap" }
        let dropped = gaps.reduce(0) { $0 + Int($1["dropped"]?["delivery"]?.int64 ?? 0) + Int($1["refused"]?["delivery"]?.int64 ?? 0) }
        print("full outbox: \(deliveries) deliveries, \(gaps.count) gap events: \(gaps.map { $0.serialized() })")
        #expect(!gaps.isEmpty, "no gap event; agent log:\n\(agent.log.suffix(2000))")
        #expect(deliveries <= 16, "more events than the outbox holds came through")
        #expect(deliveries + dropped == 100, "\(deliveries) sent + \(dropped) dropped ≠ 100: something went missing silently")
        #expect(sequenceProblems(events) == [])
        // Every drop while the link is down goes into the one gap row not yet sent: the outbox
        // keeps deliveries, not a row of gaps per drop.
        #expect(gaps.count <= 2 && deliveries >= 10, "\(gaps.count) gap events, \(deliveries) deliveries kept")
    }
}

/// The issue's link cut: 10 minutes while 1,000 deliveries happen over it. A suite of its own,
/// not serialized with the other fault tests: it is mostly waiting (a `status` every 2 s, a
/// delivery every 0.6 s), so `swift test` runs it beside the other suites and it does not
/// lengthen the run, which takes longer than 10 minutes anyway.
/// FENCEPOST_FLEET_CUT_SECONDS sets another length (a quick local run).
@Suite(.processes) struct FleetLongCutTests {
    @Test(.ownThread) func linkCutForTenMinutesWhileAThousandEventsHappen() async throws {
        let cut = Double(ProcessInfo.processInfo.environment["FENCEPOST_FLEET_CUT_SECONDS"] ?? "") ?? 600
        try await FleetFaultTests.linkCut(seconds: cut, events: 1000, spread: max(1, cut - 5), statusEvery: 2)
    }
}
