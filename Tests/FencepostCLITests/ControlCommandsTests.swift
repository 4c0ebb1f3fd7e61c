import CivilTime
import FencepostAgent
import FencepostJSON
import FencepostLinux
import Foundation
import LocalNotifications
import Testing
import FencepostTestSupport

/// A small agent in the test process: a UnixListener on a temp socket, the ControlService over a
/// DurableNotificationCenter on a temp state file, served from a thread; the clock is virtual
/// (starting at the real time) and moved by the test.
final class TestAgent: @unchecked Sendable {
    static let zones = SystemZones()
    let dir: URL
    let socket: String
    let lock = NSLock()
    let listener: UnixListener
    var center: DurableNotificationCenter
    var service = ControlService()
    var wall: Int64 = SystemClocks.wallNow().secondsSinceEpoch
    var mono: UInt64 = 5_000_000_000
    /// When set, every connection gets this line and is closed (a refused peer).
    var refusal: [UInt8]?
    private var stopped = false
    private var thread: Thread?

    var clock: EngineClock {
        EngineClock(wall: WallInstant(secondsSinceEpoch: wall), wallTrusted: true, monotonic: MonotonicInstant(nanosecondsSinceBoot: mono))
    }

    init() throws {
        // Short: sun_path holds 107 bytes.
        dir = URL(fileURLWithPath: "/tmp").appendingPathComponent("fp-ctl-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        socket = dir.appendingPathComponent("control.sock").path
        listener = try UnixListener(path: socket, mode: 0o600)
        let engine = NotificationEngine(deviceZone: try Self.zones.rules(named: "Europe/Berlin"), zoneLookup: { try? Self.zones.rules(named: $0) })
        center = try DurableNotificationCenter(path: dir.appendingPathComponent("state.sqlite").path, engine: engine, clock: EngineClock(
            wall: WallInstant(secondsSinceEpoch: wall), wallTrusted: true, monotonic: MonotonicInstant(nanosecondsSinceBoot: mono)))
        let t = Thread { [unowned self] in self.serve() }
        thread = t
        t.start()
    }

    func stop() {
        lock.withLock { stopped = true }
        while thread?.isFinished == false { usleep(1000) }
        try? FileManager.default.removeItem(at: dir)
    }

    /// Moves the virtual clock and lets the engine fire what fell due.
    func advance(_ seconds: Int64) {
        lock.withLock {
            wall += seconds; mono += UInt64(seconds) * 1_000_000_000
            _ = try? center.perform { (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in e.advance(clock: clock) }
        }
    }

    func withCenter<T>(_ body: (DurableNotificationCenter) -> T) -> T { lock.withLock { body(center) } }

    private func serve() {
        while !lock.withLock({ stopped }) {
            guard let connection = try? listener.accept() else { usleep(2000); continue }
            handle(connection)
        }
    }

    private func handle(_ connection: UnixConnection) {
        if let refusal = lock.withLock({ refusal }) {
            connection.enqueue(refusal)
            _ = try? connection.flush()
            return
        }
        var framer = LineFramer(maximumLineLength: 1 << 20)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let read = buffer.withUnsafeMutableBytes { try? connection.read(into: $0) }
            switch read {
            case .bytes(let n)?: framer.append(buffer[..<n])
            case .closed?, nil: return
            case .wouldBlock?: usleep(1000)
            }
            while let line = framer.next() {
                let reply: [UInt8]
                switch line {
                case .tooLong: reply = ControlService.tooLong(limit: framer.maximumLineLength)
                case .line(let bytes):
                    reply = lock.withLock {
                        service.handle(line: bytes, center: center, clock: clock, status: { AgentStatus(
                            wallTrusted: true, clockSource: .ntp, gpsSource: "/dev/ttyTEST @ 9600", gpsConnected: false,
                            deviceZone: "Europe/Berlin") }).line ?? []
                    }
                }
                connection.enqueue(reply)
                while connection.hasPendingOutput {
                    guard (try? connection.flush()) != nil else { return }
                    if connection.hasPendingOutput { usleep(1000) }
                }
            }
        }
    }
}

/// `fencepost add|pending|remove|delivered|ack|categories|apply|status` against the test agent.
@Suite(.serialized, .processes) struct ControlCommandsTests {
    static let water = #"{"id":"water","content":{"title":"Drink"},"trigger":{"interval":{"seconds":3600,"repeats":true}}}"#
    static let depot = #"{"id":"depot","content":{"title":"Depot"},"trigger":{"location":{"region":{"circle":{"lat":52.5,"lon":13.4,"radius":200}}}}}"#

    func run(_ agent: TestAgent, _ args: [String], input: String = "") throws -> ChildProcess.Output {
        try ChildProcess.run(args + ["--socket", agent.socket], input: input)
    }

    func file(_ agent: TestAgent, _ name: String, _ text: String) throws -> String {
        let url = agent.dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test func addPendingRemove() throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        var out = try run(agent, ["add", "-"], input: "# two requests\n\(Self.water)\n\n\(Self.depot)\n")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "added water, depot\n")
        #expect(agent.withCenter { $0.engine.pendingCount } == 2)

        // One request spread over lines.
        let pretty = try file(agent, "one.json", "{\n  \"id\": \"tea\",\n  \"trigger\": {\"interval\": {\"seconds\": 600}}\n}\n")
        out = try run(agent, ["add", pretty, "--json"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try JSONValue.parse(out.stdout)["added"] == ["tea"])

        out = try run(agent, ["pending", "--json"])
        #expect(out.status == 0)
        let list = try #require(try JSONValue.parse(out.stdout).array)
        #expect(list.compactMap { $0["request"]?["id"]?.string } == ["water", "depot", "tea"])

        out = try run(agent, ["pending"])
        #expect(out.status == 0)
        let lines = out.stdoutLines
        #expect(lines.first?.hasPrefix("ID") == true)
        #expect(lines.first?.contains("NEXT FIRE (UTC)") == true)
        #expect(lines.count == 4)
        // The UTC time comes from the agent's (virtual) clock; "in …" from the CLI's own clock; the
        // local time is in the agent's zone (Europe/Berlin), not the CLI's TZ (UTC).
        let waterFire = WallInstant(secondsSinceEpoch: agent.withCenter { _ in agent.wall } + 3600).description
        #expect(lines.first?.contains("LOCAL (Europe/Berlin)") == true, "\(lines[0])")
        #expect(lines[1].hasPrefix("water") && lines[1].contains("interval (repeats)") && lines[1].contains("\(waterFire)  ")
                && (lines[1].contains(" CET  in ") || lines[1].contains(" CEST  in ")), "\(lines[1])")
        #expect(lines[2].hasPrefix("depot") && lines[2].contains("unknown"), "\(lines[2])")
        #expect(lines[3].hasPrefix("tea") && lines[3].contains(" in "), "\(lines[3])")

        out = try run(agent, ["remove", "water", "ghost"])
        #expect(out.status == 0 && out.stdout == "removed water\n")
        out = try run(agent, ["remove", "ghost"])
        #expect(out.status == 0 && out.stdout.hasPrefix("nothing removed"))
        out = try run(agent, ["remove", "--all", "--json"])
        #expect(try JSONValue.parse(out.stdout)["removed"] == ["depot", "tea"])
        #expect(agent.withCenter { $0.engine.pendingCount } == 0)
        out = try run(agent, ["pending"])
        #expect(out.stdout == "no pending requests\n")
    }

    @Test func addErrorsNameFileAndLine() throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        // Found by the client: a line that is not JSON, a request that breaks a rule.
        var out = try run(agent, ["add", "-"], input: "\(Self.water)\n{oops\n")
        #expect(out.status == 65)
        #expect(out.stderr.contains("<stdin>:2: not JSON"), "\(out.stderr)")
        let path = try file(agent, "bad.jsonl", "\(Self.water)\n\n{\"id\":\"x\",\"trigger\":{\"interval\":{\"seconds\":5,\"repeats\":true}}}\n")
        out = try run(agent, ["add", path])
        #expect(out.status == 65)
        #expect(out.stderr.contains("bad.jsonl:3:") && out.stderr.contains("repeatingInterval"), "\(out.stderr)")
        // Found by the agent (an unknown category): told at the file's line; nothing added.
        let unknown = try file(agent, "cat.jsonl", "\(Self.water)\n{\"id\":\"y\",\"content\":{\"categoryIdentifier\":\"NOPE\"},\"trigger\":{\"interval\":{\"seconds\":60}}}\n")
        out = try run(agent, ["add", unknown])
        #expect(out.status == 65)
        #expect(out.stderr.contains("cat.jsonl:2:") && out.stderr.contains("unknownCategory"), "\(out.stderr)")
        #expect(agent.withCenter { $0.engine.pendingCount } == 0)
        out = try run(agent, ["add", agent.dir.appendingPathComponent("missing.json").path])
        #expect(out.status == 66)
    }

    @Test func categoriesDeliveredAck() throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        let cats = try file(agent, "cats.json", #"[{"id":"REMINDER","actions":[{"id":"snooze","title":"Later","snoozeSeconds":600},{"id":"done","title":"Done"}]}]"#)
        var out = try run(agent, ["categories", "--set", cats])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "REMINDER: snooze (\"Later\", snooze 10 min), done (\"Done\")\n")
        out = try run(agent, ["categories", "--json"])
        #expect(try JSONValue.parse(out.stdout)[0]?["id"] == "REMINDER")

        out = try run(agent, ["add", "-"], input: #"{"id":"tea","content":{"title":"Tea","categoryIdentifier":"REMINDER"},"trigger":{"interval":{"seconds":60}}}"# + "\n")
        #expect(out.status == 0, "\(out.stderr)")
        out = try run(agent, ["delivered"])
        #expect(out.stdout == "no delivered notifications\n")
        agent.advance(61)
        out = try run(agent, ["delivered", "--json"])
        let d = try #require(try JSONValue.parse(out.stdout)[0])
        let id = try #require(d["id"]?.string)
        #expect(d["request"] == "tea")
        out = try run(agent, ["delivered"])
        #expect(out.stdoutLines.count == 2)
        #expect(out.stdoutLines[1].hasPrefix(id) && out.stdoutLines[1].contains("unanswered") && out.stdoutLines[1].contains("Tea"), "\(out.stdout)")

        out = try run(agent, ["ack", id, "--action", "fly"])
        #expect(out.status == 65)
        #expect(out.stderr.contains("done"), "\(out.stderr)")
        out = try run(agent, ["ack", id, "--action", "snooze"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "answered \(id) with snooze; snoozed as tea~snooze\n")
        #expect(agent.withCenter { $0.engine.badgeCount } == 0)
        out = try run(agent, ["ack", id])
        #expect(out.status == 65 && out.stderr.contains("already answered"), "\(out.stderr)")
    }

    @Test func applyTOMLTwiceChangesNothing() throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        let toml = """
            # The daemon's settings are checked as the agent checks them, and not sent.
            time_zone = "Europe/Berlin"

            [gps]
            source = "serial"
            device = "/dev/serial0"

            [[category]]
            id = "REMINDER"
            actions = [{ id = "done", title = "Done" }]

            [[request]]
            id = "water"
            content.title = "Drink water"
            content.categoryIdentifier = "REMINDER"
            trigger.interval = { seconds = 7_200, repeats = true }

            [[request]]
            id = "depot"
            content.title = "Depot"
            trigger.location.region.circle = { lat = 51.5007, lon = -0.1246, radius = 150 }
            """
        let path = try file(agent, "fencepost.toml", toml)
        var out = try run(agent, ["apply", path])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdoutLines == ["added: 2 (water, depot)", "replaced: 0", "removed: 0", "unchanged: 0"])
        #expect(agent.withCenter { $0.engine.categories.map(\.identifier) } == ["REMINDER"])
        out = try run(agent, ["apply", path, "--json"])
        #expect(try JSONValue.parse(out.stdout)["unchanged"] == ["water", "depot"])

        // JSON lines: drop depot, change water.
        let jsonl = try file(agent, "config.jsonl", #"{"categories":[{"id":"REMINDER","actions":[{"id":"done","title":"Done"}]}]}"# + "\n"
            + #"{"id":"water","content":{"title":"Drink more"},"trigger":{"interval":{"seconds":7200,"repeats":true}}}"# + "\n")
        out = try run(agent, ["apply", jsonl])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdoutLines == ["added: 0", "replaced: 1 (water)", "removed: 1 (depot)", "unchanged: 0"])
    }

    /// `apply -` reads standard input once (a second read of a pipe is empty: it would send no
    /// requests, and the agent would then remove every request applied before).
    @Test func applyFromStandardInput() throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        let line = #"{"id":"water","content":{"title":"Drink water"},"trigger":{"interval":{"seconds":7200,"repeats":true}}}"# + "\n"
        var out = try run(agent, ["apply", "-"], input: line)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdoutLines == ["added: 1 (water)", "replaced: 0", "removed: 0", "unchanged: 0"])
        out = try run(agent, ["apply", "-"], input: line)
        #expect(out.stdoutLines == ["added: 0", "replaced: 0", "removed: 0", "unchanged: 1 (water)"])
    }

    /// `apply FILE.toml` reads the file as the agent does: its `zones` GeoJSON is the agent's zone
    /// set, so no zone is sent as a location request (each crossing would buzz twice: once for the
    /// zone set, once for the request).
    @Test func applyTOMLLeavesZonesToTheZoneSet() throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        _ = try file(agent, "zones.geojson", """
            {"type":"FeatureCollection","features":[{"type":"Feature","id":"yard",
             "geometry":{"type":"Point","coordinates":[6.77,51.22]},"properties":{"radius":100}}]}
            """)
        let path = try file(agent, "fencepost.toml", """
            zones = "zones.geojson"

            [[request]]
            id = "water"
            content.title = "Drink water"
            trigger.interval = { seconds = 7_200, repeats = true }
            """)
        var out = try run(agent, ["apply", path])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdoutLines == ["added: 1 (water)", "replaced: 0", "removed: 0", "unchanged: 0"])
        #expect(out.stderr.contains("zone set"), "\(out.stderr)")
        #expect(agent.withCenter { $0.engine.isPending("yard") } == false)
        #expect(agent.withCenter { $0.engine.pendingCount } == 1)
        out = try run(agent, ["apply", path])
        #expect(out.stdoutLines == ["added: 0", "replaced: 0", "removed: 0", "unchanged: 1 (water)"])
        // The file is checked by the agent's reader: a key the agent refuses is refused here.
        let bad = try file(agent, "bad.toml", "clock_trust = \"sometimes\"\n\n[[request]]\nid = \"water\"\ntrigger.interval.seconds = 60\n")
        out = try run(agent, ["apply", bad])
        #expect(out.status == 65 && out.stderr.contains("bad.toml:1: clock_trust"), "\(out.stderr)")
    }

    @Test func applyErrorsNameFileAndLine() throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        // A TOML syntax error.
        var out = try run(agent, ["apply", try file(agent, "a.toml", "[[request]]\nid = \n")])
        #expect(out.status == 65)
        #expect(out.stderr.contains("a.toml:2:"), "\(out.stderr)")
        // A request that breaks a rule, found by the client.
        out = try run(agent, ["apply", try file(agent, "b.toml", "[[request]]\nid = \"a\"\ntrigger.interval.seconds = 1\n\n[[request]]\nid = \"b\"\ntrigger.interval = { seconds = 0 }\n")])
        #expect(out.status == 65)
        #expect(out.stderr.contains("b.toml:7:") && out.stderr.contains("interval"), "\(out.stderr)")
        // A category the file does not define, told at its key's line (the agent's reader refuses it).
        out = try run(agent, ["apply", try file(agent, "c.toml", "[[request]]\nid = \"a\"\ntrigger.interval.seconds = 1\n\n[[request]]\nid = \"b\"\ncontent.categoryIdentifier = \"NOPE\"\ntrigger.interval.seconds = 5\n")])
        #expect(out.status == 65)
        #expect(out.stderr.contains("c.toml:7:") && out.stderr.contains("NOPE"), "\(out.stderr)")
        // A request the agent refuses (its time zone), after an `ics` table that gives two
        // requests: the agent's `requests[2]` is the second table, at line 5.
        _ = try file(agent, "two.ics", CheckConfigTests.twoEvents)
        out = try run(agent, ["apply", try file(agent, "d.toml", "[[request]]\nid = \"shifts\"\nics = \"two.ics\"\n\n[[request]]\nid = \"r\"\ntrigger.calendar.match = { hour = 7 }\ntrigger.calendar.tz = \"Mars/Olympus\"\n")])
        #expect(out.status != 0)
        #expect(out.stderr.contains("d.toml:5:") && out.stderr.contains("Mars/Olympus"), "\(out.stderr)")
        #expect(agent.withCenter { $0.engine.pendingCount } == 0)
    }

    @Test func status() throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        _ = try run(agent, ["add", "-"], input: Self.water + "\n" + Self.depot + "\n")
        var out = try run(agent, ["status"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("trusted (source ntp), zone Europe/Berlin"), "\(out.stdout)")
        #expect(out.stdout.contains("gps       /dev/ttyTEST @ 9600, not connected; no fix yet"), "\(out.stdout)")
        #expect(out.stdout.contains("pending   2"))
        #expect(out.stdout.contains("next fire in 1h 0min"), "\(out.stdout)")
        #expect(out.stdout.contains("waiting for a fix"), "\(out.stdout)")
        out = try run(agent, ["status", "--json"])
        let s = try JSONValue.parse(out.stdout)
        #expect(s["pending"]?.array?.count == 2)
        #expect(s["badge"] == 0)
    }

    @Test func unreachableAgentExits69() throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        let missing = agent.dir.appendingPathComponent("none.sock").path
        var out = try ChildProcess.run(["pending", "--socket", missing])
        #expect(out.status == 69)
        #expect(out.stderr.contains("cannot reach the agent at \(missing)") && out.stderr.contains("is `fencepost run` running?"), "\(out.stderr)")
        // $FENCEPOST_SOCKET is used without --socket.
        out = try ChildProcess.run(["status"], environment: ["TZ": "UTC", "FENCEPOST_SOCKET": missing])
        #expect(out.status == 69 && out.stderr.contains(missing))
        out = try ChildProcess.run(["status"], environment: ["TZ": "UTC", "FENCEPOST_SOCKET": agent.socket])
        #expect(out.status == 0, "\(out.stderr)")
    }

    @Test func refusedPeerExits1WithTheMessage() throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        let policy = ControlPolicy(ownerUserID: 0, groups: [(998, "fencepost")])
        agent.lock.withLock { agent.refusal = policy.refusal(PeerCredentials(processID: 1, userID: 1000, groupID: 1000)) }
        let out = try run(agent, ["pending"])
        #expect(out.status == 1)
        #expect(out.stderr == "fencepost pending: permission denied: uid 1000 is not root, the owner (uid 0) or in group 998 (fencepost)\n")
    }
}
