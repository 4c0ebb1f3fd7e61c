import FencepostJSON
import FencepostTestSupport
import FencepostLinux
import Fleet
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real `fencepost-agent` child with `[fleet]` against a real mosquitto on a Unix socket: a
/// ``AgentProcess`` (its folder, the child, every run's log, cleanup at deinit) whose config is
/// written from the properties below at each start.
final class FleetAgent {
    let broker: MosquittoBroker
    let device: String
    let process: AgentProcess
    var dir: URL { process.dir }
    var socketPath: String { process.socketPath }
    var statePath: String { process.statePath }
    var configPath: String { process.configPath }
    /// The running child's pid; 0 when none runs.
    var pid: pid_t { process.pid ?? 0 }
    var extraFleet = ""
    /// The broker as the agent reaches it (default: the broker's Unix socket).
    var brokerAddress: String?
    /// `[fleet] keepalive`, seconds.
    var keepalive = 5
    /// false: a configuration without [fleet].
    var withFleet = true

    static var binary: String? { Binaries.agent }

    init(broker: MosquittoBroker, device: String = "van-1") throws {
        self.broker = broker
        self.device = device
        process = try AgentProcess()
    }

    private func writeConfig() throws {
        try process.writeFleetConfig(fleet: withFleet ? "broker = \"\(brokerAddress ?? broker.address)\"\ndevice = \"\(device)\"\nkeepalive = \(keepalive)\n\(extraFleet)" : nil)
    }

    /// Writes the config and starts the agent; returns once its control socket accepts.
    func start() throws {
        try writeConfig()
        try process.start(agent: true)
        let child = process.process!
        let accepting = SpawnedProcess.wait(timeout: 15) { MosquittoBroker.accepts(socketPath) || !child.isRunning }
        if !child.isRunning { throw MosquittoBroker.BrokerError.exited("the agent exited at start; its log:\n\(log)") }
        if !accepting { throw MosquittoBroker.BrokerError.exited("the agent's socket did not accept within 15 s; its log:\n\(log)") }
    }

    /// How often the agent's main thread has gone to sleep (`voluntary_ctxt_switches` of
    /// /proc/PID/task/PID/status): each wait of its loop is one.
    var mainThreadSleeps: Int? {
        let data = FileHandle(forReadingAtPath: "/proc/\(pid)/task/\(pid)/status")?.readDataToEndOfFile() ?? Data()
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
        return line.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
    }

    /// Whether the running agent has libmosquitto mapped.
    var mapsLibmosquitto: Bool {
        // /proc files report size 0: read to the end rather than by size.
        let data = FileHandle(forReadingAtPath: "/proc/\(pid)/maps")?.readDataToEndOfFile() ?? Data()
        return String(decoding: data, as: UTF8.self).contains("libmosquitto")
    }

    /// Runs the agent to its end (a start that must fail): its exit status; -1 when it still ran
    /// after `seconds` (it is killed).
    func runToEnd(seconds: Double = 10) throws -> Int32 {
        try writeConfig()
        try process.start(agent: true)
        guard let end = process.waitForExit(timeout: seconds) else {
            process.powerCut()
            return -1
        }
        return end.status
    }

    func stop(_ signal: Int32 = SIGTERM) {
        if signal == SIGKILL { process.powerCut() } else { process.process?.stop(signal: signal, timeout: 20) }
    }

    /// Every run's log, in order.
    var log: String { process.log }

    /// One JSON-RPC call on the control socket.
    func control(_ method: String, _ params: String = "{}") throws -> JSONValue { try process.call(method, params) }
}

/// Waits for messages on the observer session until `done` says so (or the deadline).
func collect(_ session: MQTTBlockingSession, seconds: Double, until done: ([MQTTMessage]) -> Bool) -> [MQTTMessage] {
    var got: [MQTTMessage] = []
    let deadline = nowNanoseconds() + UInt64(seconds * 1e9)
    while nowNanoseconds() < deadline && !done(got) {
        if let m = session.nextMessage(until: min(deadline, nowNanoseconds() + 200_000_000)) { got.append(m) }
    }
    return got
}

func json(_ m: MQTTMessage) -> JSONValue? { try? JSONValue.parse(m.payload) }

@Suite(.serialized, .processes)
struct FleetAgentTests {
    static var ready: Bool {
        if !MosquittoBroker.available {
            if MosquittoBroker.required { Issue.record(Comment(rawValue: MosquittoBroker.missing)) }
            return false
        }
        if FleetAgent.binary == nil { Issue.record("fencepost-agent is not built (swift build --build-tests builds it)"); return false }
        return true
    }

    func observer(_ broker: MosquittoBroker, _ filter: String = "fencepost/v1/dev/van-1/#") throws -> MQTTBlockingSession {
        var o = MQTTOptions(broker: .unix(path: broker.socketPath), clientID: "ops-\(UUID().uuidString.prefix(6))")
        o.keepalive = 10
        let s = try MQTTBlockingSession(o)
        try s.connect(timeout: 5 * second)
        try s.subscribe(filter, qos: 1, timeout: 5 * second)
        return s
    }

    /// A broker and an agent with `[fleet]` against it (set up by `configure` first), running;
    /// `body` runs, then the agent and the broker stop, on every path (a thrown error or a failed
    /// `#require` too).
    func withAgent(configure: (FleetAgent) -> Void = { _ in }, _ body: (MosquittoBroker, FleetAgent) throws -> Void) throws {
        let broker = try MosquittoBroker.start()
        defer { broker.stop() }
        let agent = try FleetAgent(broker: broker)
        configure(agent)
        try agent.start()
        defer { agent.stop() }
        try body(broker, agent)
    }

    /// ``withAgent(configure:_:)`` with an observer session subscribed to `filter`, closed after
    /// `body` on every path.
    func withFleet(observing filter: String = "fencepost/v1/dev/van-1/#", configure: (FleetAgent) -> Void = { _ in },
                   _ body: (MosquittoBroker, FleetAgent, MQTTBlockingSession) throws -> Void) throws {
        try withAgent(configure: configure) { broker, agent in
            let session = try observer(broker, filter)
            defer { session.close() }
            try body(broker, agent, session)
        }
    }

    func desired(_ version: Int, _ requests: String) -> [UInt8] {
        Array(#"{"v":1,"version":\#(version),"requests":[\#(requests)]}"#.utf8)
    }

    @Test("desired documents: applied once each in version order, an older one ignored, a bad one reported with the reason and the old state kept")
    func desiredDocuments() throws {
        guard Self.ready else { return }
        try withFleet(observing: "fencepost/v1/dev/van-1/reported") { _, agent, ops in
            let desiredTopic = "fencepost/v1/dev/van-1/desired"
            let hourly = #"{"id":"%@","content":{"title":"T"},"trigger":{"interval":{"seconds":3600,"repeats":true}}}"#
            func req(_ id: String) -> String { hourly.replacingOccurrences(of: "%@", with: id) }
            func reported(_ count: Int) -> [JSONValue] {
                collect(ops, seconds: 10) { $0.count >= count }.compactMap(json)
            }
            try ops.publish(topic: desiredTopic, payload: desired(1, req("a")), qos: 1, retain: true, timeout: 5 * second)
            var r = reported(1)
            #expect(r.last?["state"]?.string == "applied" && r.last?["appliedVersion"]?.int64 == 1, "\(r.map { $0.serialized() }); agent log:\n\(agent.log)")
            try ops.publish(topic: desiredTopic, payload: desired(3, req("b") + "," + req("c")), qos: 1, retain: true, timeout: 5 * second)
            r = reported(1)
            #expect(r.last?["appliedVersion"]?.int64 == 3, "\(r.map { $0.serialized() })")
            // An older version: nothing applied, nothing reported.
            try ops.publish(topic: desiredTopic, payload: desired(2, req("z")), qos: 1, retain: true, timeout: 5 * second)
            r = collect(ops, seconds: 1.5) { _ in false }.compactMap(json)
            #expect(r.isEmpty, "an older version was answered: \(r.map { $0.serialized() })")
            // A bad document (the second request's trigger is wrong): all or nothing.
            try ops.publish(topic: desiredTopic, payload: desired(4, req("d") + #",{"id":"e","trigger":{"interval":{"seconds":-1}}}"#), qos: 1, retain: true, timeout: 5 * second)
            r = reported(1)
            let failed = try #require(r.last, "no reported for version 4; agent log:\n\(agent.log)")
            #expect(failed["state"]?.string == "failed" && failed["desiredVersion"]?.int64 == 4 && failed["appliedVersion"]?.int64 == 3)
            let message = failed["error"]?["message"]?.string ?? ""
            #expect(message.contains("requests[1]"), "the reason names the request: \(message)")
            let pending = try agent.control("pending")
            let ids = (pending["result"]?["requests"]?.array ?? pending["result"]?.array ?? []).compactMap { $0["id"]?.string ?? $0["request"]?["id"]?.string }
            #expect(Set(ids) == ["b", "c"], "pending after the refused version: \(pending.serialized())")
            // The applied version survives a restart: the retained v4 is refused again, v3 stays.
            agent.stop()
            try agent.start()
            r = reported(1)
            #expect(r.last?["state"]?.string == "failed" && r.last?["appliedVersion"]?.int64 == 3, "\(r.map { $0.serialized() })")
        }
    }

    @Test("a desired document over the control socket's bound is refused with the reason in reported, the applied state kept")
    func desiredOverTheSocketBound() throws {
        guard Self.ready else { return }
        try withFleet(observing: "fencepost/v1/dev/van-1/reported") { _, agent, ops in
            let desiredTopic = "fencepost/v1/dev/van-1/desired"
            func req(_ id: String) -> String { #"{"id":"\#(id)","content":{"title":"T"},"trigger":{"interval":{"seconds":3600,"repeats":true}}}"# }
            try ops.publish(topic: desiredTopic, payload: desired(1, req("kept")), qos: 1, retain: true, timeout: 5 * second)
            var r = collect(ops, seconds: 10) { !$0.isEmpty }.compactMap(json)
            #expect(r.last?["appliedVersion"]?.int64 == 1, "\(r.map { $0.serialized() }); agent log:\n\(agent.log)")
            // 1,000 requests, ~100 KB: over the default max_message_bytes (64 KiB), under the protocol's 1 MiB.
            let big = desired(2, (0..<1000).map { req("r\($0)") }.joined(separator: ","))
            #expect(big.count > 65_536 && big.count < 1 << 20)
            try ops.publish(topic: desiredTopic, payload: big, qos: 1, retain: true, timeout: 5 * second)
            r = collect(ops, seconds: 10) { !$0.isEmpty }.compactMap(json)
            let failed = try #require(r.last, "no reported for the large document; agent log:\n\(agent.log)")
            #expect(failed["state"]?.string == "failed" && failed["appliedVersion"]?.int64 == 1, "\(failed.serialized())")
            #expect(failed["error"]?["code"]?.string == "desired.tooLarge", "\(failed.serialized())")
            let message = failed["error"]?["message"]?.string ?? ""
            #expect(message.contains("\(big.count) bytes") && message.contains("65536") && message.contains("max_message_bytes"), "\(message)")
            let pending = try agent.control("pending")
            #expect(pending.serialized().contains("\"kept\"") && !pending.serialized().contains("\"r0\""), "\(pending.serialized())")
        }
    }

    @Test("an idle agent with [fleet] sleeps between keepalives: few wakes in 15 s, and the link stays up on its PINGREQs")
    func idleLinkSleeps() throws {
        guard Self.ready else { return }
        // Keepalive 10 s: the broker drops a link silent for 15 s.
        try withAgent(configure: { $0.keepalive = 10 }) { _, agent in
            let connected = SpawnedProcess.wait(timeout: 15) { agent.log.contains("fleet: connected") }
            #expect(connected, "\(agent.log)")
            usleep(2_000_000)   // the connect's own work (subscriptions, status, health) done
            let before = try #require(agent.mainThreadSleeps, "no /proc/\(agent.pid)/task/\(agent.pid)/status")
            usleep(15_000_000)
            let wakes = (agent.mainThreadSleeps ?? 0) - before
            print("idle agent, keepalive 10 s: \(wakes) wakes of the loop in 15 s")
            // A PINGREQ tick and its PINGRESP per keepalive (+1 s), and a spare for a tick while the
            // PINGRESP travels; once a second would be 15.
            #expect(wakes <= 6, "the idle loop woke \(wakes) times in 15 s; log:\n\(agent.log)")
            #expect(agent.log.components(separatedBy: "fleet: connected").count == 2 && !agent.log.contains("fleet: link"),
                    "the link did not stay up on its keepalive:\n\(agent.log)")
        }
    }

    @Test("deliveries arrive on evt with id and seq; commands: an expired one refused, ack answered and recorded as a remote response; unacknowledged events sent again after a restart with the same ids")
    func eventsCommandsRestart() throws {
        guard Self.ready else { return }
        try withFleet { broker, agent, ops in
            _ = try agent.control("add", #"{"request":{"id":"soon","content":{"title":"Soon"},"trigger":{"interval":{"seconds":0.3}}}}"#)
            var events = collect(ops, seconds: 10) { $0.contains { $0.topic.hasSuffix("/evt") } }.filter { $0.topic.hasSuffix("/evt") }.compactMap(json)
            let first = try #require(events.first, "no event; agent log:\n\(agent.log)")
            #expect(first["type"]?.string == "delivery" && first["seq"]?.int64 == 1)
            let id = first["id"]?.string ?? ""
            #expect(id.hasPrefix("van-1.") && id.hasSuffix(".000000000001"), "\(id)")
            let delivery = try #require(first["delivery"]?.string)

            // Commands: expired → refused; ack → ok, and a response event with source remote.
            let cmd = "fencepost/v1/dev/van-1/cmd"
            try ops.publish(topic: cmd, payload: Array(#"{"v":1,"id":"op-1","name":"ack","args":{"delivery":"\#(delivery)"},"expiresAt":"2000-01-01T00:00:00Z"}"#.utf8), qos: 1, retain: false, timeout: 5 * second)
            var results = collect(ops, seconds: 10) { $0.contains { $0.topic.hasSuffix("/cmd/res") } }.filter { $0.topic.hasSuffix("/cmd/res") }.compactMap(json)
            #expect(results.first?["ok"]?.bool == false && results.first?["error"]?["code"]?.string == "command.expired", "\(results.map { $0.serialized() })")
            try ops.publish(topic: cmd, payload: Array(#"{"v":1,"id":"op-2","name":"ack","args":{"delivery":"\#(delivery)"},"expiresAt":"2100-01-01T00:00:00Z"}"#.utf8), qos: 1, retain: false, messageExpiry: 600, timeout: 5 * second)
            let got = collect(ops, seconds: 10) { m in m.contains { $0.topic.hasSuffix("/cmd/res") } && m.contains { $0.topic.hasSuffix("/evt") } }
            results = got.filter { $0.topic.hasSuffix("/cmd/res") }.compactMap(json)
            #expect(results.first?["ok"]?.bool == true && results.first?["id"]?.string == "op-2", "\(results.map { $0.serialized() })")
            events = got.filter { $0.topic.hasSuffix("/evt") }.compactMap(json)
            #expect(events.first?["type"]?.string == "response" && events.first?["source"]?.string == "remote" && events.first?["seq"]?.int64 == 2,
                    "\(events.map { $0.serialized() })")

            // The broker hangs (SIGSTOP): a delivery is handed to the library but never acknowledged;
            // the agent is killed; the broker resumes; the agent restarts and sends the row again.
            broker.pause()
            _ = try agent.control("add", #"{"request":{"id":"later","content":{"title":"Later"},"trigger":{"interval":{"seconds":0.2}}}}"#)
            usleep(1_500_000)
            agent.stop(SIGKILL)
            broker.resume()
            try agent.start()
            let after = collect(ops, seconds: 15) { m in m.contains { json($0)?["seq"]?.int64 == 3 } }.filter { $0.topic.hasSuffix("/evt") }.compactMap(json)
            let third = after.filter { $0["seq"]?.int64 == 3 }
            #expect(!third.isEmpty, "seq 3 never arrived; agent log:\n\(agent.log)")
            #expect(Set(third.compactMap { $0["id"]?.string }).count == 1, "copies of seq 3 carry different ids: \(third.map { $0.serialized() })")
            #expect(third.first?["id"]?.string?.hasPrefix(String(id.dropLast(13))) == true, "the id's device and tag changed across the restart")
        }
    }

    @Test("a full outbox drops the least important and announces it with a gap event")
    func outboxGap() throws {
        guard Self.ready else { return }
        try withAgent(configure: { $0.extraFleet = "outbox_rows = 16" }) { broker, agent in
            usleep(500_000)
            broker.stop()   // the link down: every event stays in the outbox
            var requests: [String] = []
            for i in 0..<30 { requests.append(#"{"id":"r\#(i)","content":{"title":"R"},"trigger":{"interval":{"seconds":0.2}}}"#) }
            _ = try agent.control("apply", #"{"requests":[\#(requests.joined(separator: ","))]}"#)
            usleep(1_500_000)
            try broker.launch()
            let ops = try observer(broker, "fencepost/v1/dev/van-1/evt")
            // Every delivery is either received or counted as dropped in a gap event: none is silent.
            func accounted(_ events: [JSONValue]) -> (received: Int, dropped: Int) {
                let received = events.filter { $0["type"]?.string == "delivery" }.count
                let dropped = events.filter { $0["type"]?.string == "gap" }.reduce(0) { $0 + Int($1["dropped"]?["delivery"]?.int64 ?? 0) + Int($1["refused"]?["delivery"]?.int64 ?? 0) }
                return (received, dropped)
            }
            let events = collect(ops, seconds: 30) { m in let a = accounted(m.compactMap(json)); return a.received + a.dropped >= 30 }.compactMap(json)
            let (deliveries, dropped) = accounted(events)
            #expect(events.contains { $0["type"]?.string == "gap" }, "no gap event; agent log:\n\(agent.log)")
            #expect(dropped > 0 && deliveries + dropped == 30, "dropped \(dropped), received \(deliveries): \(events.map { $0.serialized() })")
            // In seq order, each seq once.
            let seqs = events.compactMap { $0["seq"]?.int64 }
            #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "\(seqs)")
            #expect(deliveries <= 16)
            // The connection after the broker came back has the next bdSeq, in its online status
            // and in its Will (the first connection had 1).
            // Health: retained, with the outbox drained and the free disk of the state file's folder.
            let healthSession = try observer(broker, "fencepost/v1/dev/van-1/health")
            let health = collect(healthSession, seconds: 5) { !$0.isEmpty }.compactMap(json).last
            #expect((health?["freeDisk"]?.int64 ?? 0) > 0 && health?["outbox"]?["depth"] != nil, "\(health?.serialized() ?? "no health")")
            healthSession.close()
            let status = try observer(broker, "fencepost/v1/dev/van-1/status")
            let online = collect(status, seconds: 5) { !$0.isEmpty }.compactMap(json).last
            #expect(online?["online"]?.bool == true && (online?["bdSeq"]?.int64 ?? 0) >= 2, "\(online?.serialized() ?? "no status")")
            agent.stop(SIGKILL)   // no DISCONNECT: the broker publishes the Will after its 60 s delay, or at once without a session
            status.close()
            ops.close()
            broker.stop()
        }
    }

    @Test("a password file its group can read refuses the start (exit 78, naming the fix); without [fleet] libmosquitto is not even mapped")
    func secretsAndAbsence() throws {
        guard Self.ready else { return }
        let broker = try MosquittoBroker.start()
        defer { broker.stop() }
        let agent = try FleetAgent(broker: broker)
        let secret = agent.dir.appendingPathComponent("password").path
        try "s3cret\n".write(toFile: secret, atomically: true, encoding: .utf8)
        chmod(secret, 0o640)   // the CLI refuses the same (FleetCLITests): one rule, FilePermissions.requirePrivate
        agent.extraFleet = "username = \"van-1\"\npassword_file = \"\(secret)\""
        let code = try agent.runToEnd()
        #expect(code == 78, "exit \(code); log:\n\(agent.log)")
        #expect(agent.log.contains("\(secret) can be read or changed by others (mode 640): chmod 600"), "\(agent.log)")
        chmod(secret, 0o600)
        try agent.start()
        // The control socket accepts before the link is made: wait for the link's first line.
        let deadline = Date().addingTimeInterval(10)
        while !agent.log.contains("fleet: device") && Date() < deadline { usleep(20_000) }
        #expect(agent.mapsLibmosquitto, "pid \(agent.pid); log:\n\(agent.log)")
        agent.stop()
        agent.withFleet = false
        try agent.start()
        let running = Date().addingTimeInterval(10)
        // Its start done (the log is appended by every run: the second such line is this run's).
        while agent.log.components(separatedBy: "start-up memory released").count < 3 && Date() < running { usleep(20_000) }
        #expect(agent.log.components(separatedBy: "start-up memory released").count == 3, "\(agent.log)")
        #expect(!agent.mapsLibmosquitto, "libmosquitto mapped by an agent without [fleet]")
        agent.stop()
    }
}
