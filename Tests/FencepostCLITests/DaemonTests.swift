import FencepostJSON
import FencepostLinux
import FencepostTestSupport
import Foundation
import Testing

/// `fencepost run` end to end: real child processes, real files, real sockets.
@Suite(.serialized, .processes) struct DaemonTests {
    static let zones = """
        {"type":"FeatureCollection","features":[
          {"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[6.74191,51.24363]},
           "properties":{"radius":150,"notifyOnEntry":true,"notifyOnExit":true}},
          {"type":"Feature","id":"customer","geometry":{"type":"Point","coordinates":[6.77686,51.21554]},
           "properties":{"radius":120,"notifyOnEntry":true,"notifyOnExit":false}}]}
        """

    static let gpio = """
        [gpio]
        backend = "console"
        [gpio.buzzer]
        pin = 18
        [gpio.led]
        pin = 23
        [gpio.badge]
        pin = 24

        """

    static let schoolZone = """
        [[request]]
        id = "school-zone"
        content = { title = "Slow down", body = "School zone", sound = "double", interruptionLevel = "timeSensitive" }
        trigger = { location = { region = { polygon = [[51.2300, 6.7480], [51.2300, 6.7515], [51.2270, 6.7515], [51.2270, 6.7480]] }, notifyOnEntry = true, repeats = true } }

        """

    func replayConfig(_ d: AgentProcess, speed: Double, exitAtEnd: Bool) throws -> String {
        try Data(Self.zones.utf8).write(to: d.dir.appendingPathComponent("zones.geojson"))
        return """
            zones = "zones.geojson"
            [gps]
            source = "replay"
            file = "\(AgentProcess.demoDrive)"
            speed = \(speed)
            exit_at_end = \(exitAtEnd)

            """ + Self.gpio + Self.schoolZone
    }

    /// The demo's drive at 20×: depot entry at start and exit after 15 s of drive (0.75 s), the
    /// school zone about 5 min in (15 s), the customer 8 min 14 s in (24.7 s); the replay ends at
    /// 9 min 55 s (29.8 s) and the agent with it. Both executables: `fencepost run` and the lean
    /// `fencepost-agent`.
    @Test(arguments: [false, true])
    func replayedDriveGivesTheExpectedBuzzerAndLEDSequence(leanAgent: Bool) throws {
        let d = try AgentProcess()
        try d.writeConfig(try replayConfig(d, speed: 20, exitAtEnd: true))
        try d.start(agent: leanAgent)
        let end = try #require(d.waitForExit(timeout: 90), "the agent did not end with the replay; log:\n\(d.stderr)")
        #expect(end.status == 0, "log:\n\(d.stderr)")
        let log = d.stderr
        for id in ["depot/", "school-zone/", "customer/"] { #expect(log.contains("delivered \(id)"), "no delivery of \(id) in:\n\(log)") }
        #expect(log.contains("on exit"))
        // Buzzer starts at the expected (accelerated) times: depot enter ≈ 0 s, exit ≈ 0.75 s,
        // school ≈ 15 s, customer ≈ 24.7 s (±2 s: start-up and load).
        let buzzerOn = d.pinChanges.filter { $0.name == "buzzer" && $0.on }.map(\.time)
        func near(_ t: Double) -> Bool { buzzerOn.contains { abs($0 - t) < 2.0 } }
        #expect(near(15.0), "no buzzer near 15 s: \(buzzerOn)")
        #expect(near(24.7), "no buzzer near 24.7 s: \(buzzerOn)")
        #expect(d.pinChanges.contains { $0.name == "led" && $0.on })
        #expect(d.pinChanges.contains { $0.name == "badge" && $0.on })
        #expect(d.allOutputsOffAtEnd, "\(d.stdout)")
    }

    @Test(arguments: [false, true])
    func sigtermStopsWithinASecondWithOutputsOff(leanAgent: Bool) throws {
        let d = try AgentProcess()
        try d.writeConfig(try replayConfig(d, speed: 1, exitAtEnd: false))
        try d.start(agent: leanAgent)
        #expect(d.waitForLog("delivered depot/"), "log:\n\(d.stderr)")
        #expect(d.wait(timeout: 5) { d.pinChanges.contains { $0.name == "buzzer" && $0.on } })
        d.signal(SIGTERM)
        let end = try #require(d.waitForExit(timeout: 5))
        #expect(end.status == 0)
        #expect(end.seconds < 1.0, "took \(end.seconds) s")
        #expect(d.stderr.contains("stopped; outputs off"))
        #expect(d.allOutputsOffAtEnd, "\(d.stdout)")
    }

    @Test func restartKeepsPendingAndDelivered() throws {
        let d = try AgentProcess()
        try d.writeConfig(Self.gpio)
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let add = try d.cli(["add", "-"], input: """
            {"id":"later","content":{"title":"Later"},"trigger":{"interval":{"seconds":3600,"repeats":true}}}
            {"id":"soon","content":{"title":"Soon","sound":"chime"},"trigger":{"interval":{"seconds":0.3}}}
            """)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(d.waitForLog("delivered soon/"))
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 5)?.status == 0)
        try d.start()
        #expect(d.waitForLog("running:"))
        let pending = try d.cli(["pending", "--json"])
        #expect(pending.stdout.contains("\"later\""), "\(pending.stdout) \(pending.stderr)")
        #expect(!pending.stdout.contains("\"soon\""))
        let delivered = try d.cli(["delivered", "--json"])
        #expect(delivered.stdout.contains("soon/"), "\(delivered.stdout)")
        // The unanswered delivery lights the badge again after the restart.
        #expect(d.wait(timeout: 5) { d.pinChanges.contains { $0.name == "badge" && $0.on } })
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 5)?.status == 0)
    }

    @Test func sighupWithABrokenConfigKeepsTheOldOneAndSaysTheLine() throws {
        let d = try AgentProcess()
        try d.writeConfig(Self.gpio)
        try d.start()
        #expect(d.waitForLog("running:"))
        // Line 6 of the new file has a typo (the header is three lines).
        try Data((d.header + "[gpio]\nbackend = \"console\"\nbuzer = 3\n[socket]\npath = \"\(d.socketPath)\"\n").utf8).write(to: URL(fileURLWithPath: d.configPath))
        d.signal(SIGHUP)
        #expect(d.waitForLog("keeping the previous configuration"), "log:\n\(d.stderr)")
        #expect(d.stderr.contains("fencepost.toml:6: gpio: unknown key `buzer` (did you mean `buzzer`?)"), "log:\n\(d.stderr)")
        let status = try d.cli(["status"])
        #expect(status.status == 0, "\(status.stderr)")
        // A good file with a request: applied on the next SIGHUP.
        try d.writeConfig(Self.gpio + """
            [[request]]
            id = "from-config"
            trigger = { interval = { seconds = 600, repeats = true } }
            """)
        d.signal(SIGHUP)
        #expect(d.waitForLog("configuration reloaded"))
        #expect(d.wait(timeout: 5) { ((try? d.cli(["pending", "--json"]))?.stdout ?? "").contains("from-config") })
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 5)?.status == 0)
    }

    /// A SIGHUP whose requests break a rule, the broken one after hundreds of good ones (so that
    /// its apply in parts has checked several parts before it): none of the file's requests is
    /// applied, the requests in force stay, and the log names the broken table's line in the file.
    @Test func sighupWithABrokenRequestAppliesNoneAndSaysTheLine() throws {
        let d = try AgentProcess()
        try d.writeConfig(Self.gpio + "[[request]]\nid = \"kept\"\ntrigger = { interval = { seconds = 600, repeats = true } }\n")
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let good = (0 ..< 600).map { "[[request]]\nid = \"g\($0)\"\ntrigger = { interval = { seconds = 900, repeats = true } }\n\n" }.joined()
        let body = Self.gpio + "\n" + good + "[[request]]\nid = \"bad\"\ntrigger.calendar.match = { hour = 7 }\ntrigger.calendar.tz = \"Mars/Olympus\"\n"
        try d.writeConfig(body)
        // The broken table's `[[request]]` line (1-based), the line before its id's, counted in
        // the file as written: the 0-based index of the id's line.
        let text = try String(contentsOfFile: d.configPath, encoding: .utf8)
        let line = try #require(text.components(separatedBy: "\n").firstIndex(of: "id = \"bad\""))
        d.signal(SIGHUP)
        #expect(d.waitForLog("configuration not applied: ", timeout: 30), "log:\n\(d.stderr.suffix(3000))")
        #expect(d.stderr.contains("configuration not applied: \(d.configPath):\(line): ") && d.stderr.contains("Mars/Olympus"),
                "log:\n\(d.stderr.suffix(3000))")
        #expect(d.stderr.contains("configuration: applying 601 requests in parts"), "log:\n\(d.stderr.suffix(3000))")
        let pending = try d.cli(["pending", "--json"])
        let ids = ((try? JSONValue.parse(pending.stdout))?.array ?? []).compactMap { $0["request"]?["id"]?.string }
        #expect(ids == ["kept"], "\(ids.prefix(5)) … (\(ids.count))")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0, "log:\n\(d.stderr.suffix(2000))")
    }

    /// `[alerts]` of a reloaded file reach the engine, which decides each delivery's signal (not
    /// only logged as reloaded and ignored until a restart).
    @Test func sighupAppliesTheAlertSettings() throws {
        let d = try AgentProcess()
        try d.writeConfig(Self.gpio)
        try d.start()
        #expect(d.waitForLog("running:"))
        try d.writeConfig(Self.gpio + "[alerts]\nbuzzer = false\n")
        d.signal(SIGHUP)
        #expect(d.waitForLog("configuration reloaded"), "log:\n\(d.stderr)")
        let add = try d.cli(["add", "-"], input: #"{"id":"soon","content":{"title":"Soon","sound":"chime"},"trigger":{"interval":{"seconds":0.2}}}"#)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(d.waitForLog("delivered soon/"), "log:\n\(d.stderr)")
        #expect(d.wait(timeout: 5) { d.pinChanges.contains { $0.name == "led" && $0.on } }, "\(d.stdout)")
        #expect(!d.pinChanges.contains { $0.name == "buzzer" && $0.on }, "the buzzer sounded after buzzer = false: \(d.stdout)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 5)?.status == 0)
    }

    /// `[alerts] led = false` and `badge = false` keep those lines dark; the buzzer still sounds.
    @Test func alertSettingsSwitchTheLEDAndBadgeOff() throws {
        let d = try AgentProcess()
        try d.writeConfig(Self.gpio + "[alerts]\nled = false\nbadge = false\n")
        try d.start()
        #expect(d.waitForLog("running:"))
        let add = try d.cli(["add", "-"], input: #"{"id":"soon","content":{"title":"Soon","sound":"chime"},"trigger":{"interval":{"seconds":0.2}}}"#)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(d.waitForLog("delivered soon/"), "log:\n\(d.stderr)")
        #expect(d.wait(timeout: 5) { d.pinChanges.contains { $0.name == "buzzer" && $0.on } }, "\(d.stdout)")
        #expect(!d.pinChanges.contains { ($0.name == "led" || $0.name == "badge") && $0.on }, "\(d.stdout)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 5)?.status == 0)
    }

    @Test func controlSocketRoundTripForEveryCommand() throws {
        let d = try AgentProcess()
        try d.writeConfig(Self.gpio + """
            [[category]]
            id = "REMINDER"
            actions = [{ id = "done", title = "Done" }]
            """, socketMode: "0o666")
        try d.start()
        #expect(d.waitForLog("running:"))
        func ok(_ args: [String], input: String = "") throws -> String {
            let r = try d.cli(args, input: input)
            #expect(r.status == 0, "\(args): \(r.stderr)")
            return r.stdout
        }
        _ = try ok(["add", "-"], input: #"{"id":"x","content":{"title":"X","categoryIdentifier":"REMINDER"},"trigger":{"interval":{"seconds":0.2}}}"#)
        #expect(d.waitForLog("delivered x/"))
        #expect(!(try ok(["pending", "--json"])).contains("\"x\""))   // a one-shot that fired is no longer pending
        let delivered = try ok(["delivered", "--json"])
        let id = try #require(try JSONValue.parse(delivered)[0]?["id"]?.string, "\(delivered)")
        #expect(try ok(["ack", id, "--action", "done"]).contains("done"))
        #expect(try ok(["categories", "--json"]).contains("REMINDER"))
        _ = try ok(["add", "-"], input: #"{"id":"y","trigger":{"interval":{"seconds":3600,"repeats":true}}}"#)
        #expect(try ok(["remove", "y"]).contains("y"))
        let applyFile = d.dir.appendingPathComponent("apply.jsonl")
        try Data(#"{"id":"z","trigger":{"interval":{"seconds":7200,"repeats":true}}}"#.utf8).write(to: applyFile)
        #expect(try ok(["apply", applyFile.path]).contains("z"))
        #expect(try ok(["status", "--json"]).contains("\"pending\""))
        #expect(!(try ok(["status"])).isEmpty)

        // Malformed JSON and an oversized line, straight on the socket.
        let client = try UnixClient.connect(d.socketPath)
        try client.sendLine("{nope")
        let reply = try #require(try client.readLine(timeout: .seconds(5)))
        #expect(reply.contains("-32700"), "\(reply)")
        let big = try UnixClient.connect(d.socketPath)
        try big.sendLine(String(repeating: "x", count: 70_000))
        let refusal = try #require(try big.readLine(timeout: .seconds(5)))
        #expect(refusal.contains("-32600") && refusal.contains("65536"), "\(refusal)")

        // A peer with another uid is refused (run as nobody when we are root).
        if getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), let binary = ChildProcess.binary {
            let r = try ChildProcess.run(["--reuid", "65534", "--regid", "65534", "--clear-groups",
                                          binary.path, "status", "--socket", d.socketPath], executable: URL(fileURLWithPath: "/usr/bin/setpriv"))
            #expect(r.status != 0)
            #expect(r.stderr.contains("permission denied: uid 65534"), "\(r.stderr)")
        }
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 5)?.status == 0)
    }
}

/// The order of the system calls around a delivery, seen by strace: the delivery is committed to
/// the WAL, then the buzzer switches on, then the WAL is fsynced (the fsync is not in the due →
/// buzzer latency) by the state file's sync thread, not by the loop's thread (the loop
/// does not wait for the disk), and nothing committed is left unsynced when the agent ends.
@Suite(.processes) struct DeliveryOrderTests {
    @Test func commitThenBuzzerThenFsync() throws {
        guard let strace = RequiredTool.find("strace", package: "strace") else { return }
        let d = try AgentProcess()
        try Data(DaemonTests.zones.utf8).write(to: d.dir.appendingPathComponent("zones.geojson"))
        // The demo drive at 200×: the depot's entry and exit within the first second, then the end.
        try d.writeConfig("""
            zones = "zones.geojson"
            [gps]
            source = "replay"
            file = "\(AgentProcess.demoDrive)"
            speed = 200
            exit_at_end = true

            """ + DaemonTests.gpio)
        let trace = d.dir.appendingPathComponent("trace").path
        try d.start(agent: true, wrapper: [strace, "-f", "-y", "-e", "trace=pwrite64,write,fdatasync,fsync,epoll_wait,epoll_pwait", "-o", trace])
        let end = try #require(d.waitForExit(timeout: 120), "log:\n\(d.stderr)")
        #expect(end.status == 0, "log:\n\(d.stderr)")
        #expect(d.stderr.contains("delivered depot/"), "log:\n\(d.stderr)")

        enum Kind: Equatable { case walWrite, walSync, buzzerOn }
        struct Call: Equatable { var kind: Kind; var thread: Substring }
        let calls: [Call] = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").compactMap { line in
            let thread = line.prefix { $0 != " " }   // strace -f: each line starts with the thread's id
            if line.contains("state.sqlite-wal>") {
                if line.contains("pwrite64(") { return Call(kind: .walWrite, thread: thread) }
                if line.contains("fdatasync(") || line.contains("fsync(") { return Call(kind: .walSync, thread: thread) }
            }
            if line.contains("write(1<"), line.contains("buzzer (BCM 18) on") { return Call(kind: .buzzerOn, thread: thread) }
            return nil
        }
        let first = try #require(calls.firstIndex { $0.kind == .buzzerOn }, "no buzzer in the trace")
        let loopThread = calls[first].thread
        let before = calls[..<first]
        let lastSyncBefore = before.lastIndex { $0.kind == .walSync } ?? -1
        #expect(before[(lastSyncBefore + 1)...].contains { $0.kind == .walWrite },
                "the delivery was not committed (or already fsynced) before the buzzer: \(calls)")
        let after = calls[(first + 1)...]
        let nextSync = try #require(after.first { $0.kind == .walSync }, "no fsync of the WAL after the buzzer")
        #expect(nextSync.thread != loopThread, "the loop's own thread fsynced the buzzer's commit: \(calls)")
        let lastWrite = try #require(calls.lastIndex { $0.kind == .walWrite })
        #expect(calls[lastWrite...].contains { $0.kind == .walSync }, "a commit was left without fsync at the end")
    }
}
