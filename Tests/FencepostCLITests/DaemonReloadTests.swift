import FencepostJSON
import FencepostLinux
import FencepostTestSupport
import Foundation
import Testing

/// SIGHUP reads the configuration on a thread of its own: a read that blocks (the file is a FIFO
/// nobody writes, a card that stopped answering) or takes long holds no delivery, fix or control
/// reply back. Real child process, real FIFO, real socket.
@Suite(.serialized, .processes) struct DaemonReloadTests {
    /// Writes `text` into the FIFO at `path` once its reader (the agent's read thread) has opened
    /// it; false if no reader came within `timeout` seconds.
    static func feed(_ path: String, _ text: String, timeout: Double = 10) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        var fd: Int32 = -1
        while fd < 0 && Date() < end {
            fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)   // ENXIO until a reader has it open
            if fd < 0 { usleep(20_000) }
        }
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n > 0 { done += n } else if errno == EAGAIN { usleep(5_000) } else { return false }
        }
        return true
    }

    /// A daemon started on the GPIO-only configuration, whose file is then removed.
    static func runningWithoutItsFile(sourceLocation: SourceLocation = #_sourceLocation) throws -> AgentProcess {
        let d = try AgentProcess()
        try d.writeConfig(DaemonTests.gpio)
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)", sourceLocation: sourceLocation)
        try FileManager.default.removeItem(atPath: d.configPath)
        return d
    }

    static func config(_ d: AgentProcess, request id: String) -> String {
        d.header + DaemonTests.gpio + """
            [[request]]
            id = "\(id)"
            trigger = { interval = { seconds = 600, repeats = true } }

            [socket]
            path = "\(d.socketPath)"
            mode = 0o600

            """
    }

    /// The configuration becomes a FIFO and SIGHUP: while the read waits for a writer, a request
    /// added over the socket is answered and delivered on time; a second SIGHUP meanwhile is one
    /// more read after the first; what is written into the FIFO is applied; and SIGTERM with a read
    /// still waiting stops the agent at once. Before the read moved off the loop thread, the loop
    /// waited in open(2): the socket went unanswered and SIGTERM was never read.
    @Test func aConfigurationReadThatBlocksHoldsNothingBack() throws {
        let d = try Self.runningWithoutItsFile()
        #expect(mkfifo(d.configPath, 0o600) == 0)

        d.signal(SIGHUP)
        #expect(d.waitForLog("SIGHUP: reading the configuration again"), "log:\n\(d.stderr)")
        let add = try d.cli(["add", "-"], input: #"{"id":"soon","content":{"title":"Soon"},"trigger":{"interval":{"seconds":0.3}}}"#)
        #expect(add.status == 0, "the loop did not answer while the configuration was read: \(add.stderr)\nlog:\n\(d.stderr)")
        #expect(d.waitForLog("delivered soon/", timeout: 5), "log:\n\(d.stderr)")
        d.signal(SIGHUP)
        #expect(d.waitForLog("still being read"), "log:\n\(d.stderr)")

        #expect(Self.feed(d.configPath, Self.config(d, request: "first")), "the agent never opened the FIFO")
        #expect(d.waitForLog("configuration reloaded"), "log:\n\(d.stderr)")
        #expect(d.wait(timeout: 5) { ((try? d.cli(["pending", "--json"]))?.stdout ?? "").contains("\"first\"") })
        // The second SIGHUP's read: it opens the FIFO again.
        #expect(Self.feed(d.configPath, Self.config(d, request: "second")), "the SIGHUP during the read was lost")
        #expect(d.wait(timeout: 5) {
            let pending = (try? d.cli(["pending", "--json"]))?.stdout ?? ""
            return pending.contains("\"second\"") && !pending.contains("\"first\"")
        }, "log:\n\(d.stderr)")
        #expect(d.stderr.components(separatedBy: "configuration reloaded").count - 1 == 2, "log:\n\(d.stderr)")

        // A third read that nobody feeds, then SIGTERM.
        d.signal(SIGHUP)
        #expect(d.wait(timeout: 5) { d.stderr.components(separatedBy: "SIGHUP: reading the configuration again").count - 1 == 3 },
                "log:\n\(d.stderr)")
        d.signal(SIGTERM)
        let end = d.waitForExit(timeout: 5)
        #expect(end?.status == 0, "SIGTERM with a read waiting: \(String(describing: end))\nlog:\n\(d.stderr)")
        #expect(d.stderr.contains("stopping with the configuration still being read"), "log:\n\(d.stderr)")
    }

    /// A read that fails on the thread (the file is gone) keeps the configuration, as in the loop.
    @Test func aConfigurationThatCannotBeReadIsKept() throws {
        let d = try Self.runningWithoutItsFile()
        d.signal(SIGHUP)
        #expect(d.waitForLog("keeping the previous configuration"), "log:\n\(d.stderr)")
        #expect(d.stderr.contains("cannot read the file"), "log:\n\(d.stderr)")
        let status = try d.cli(["status"])
        #expect(status.status == 0, "\(status.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 5)?.status == 0)
    }

    /// The requests' fingerprints are made on the read thread: of three requests, the one edited
    /// is replaced, the one dropped removed, the one kept unchanged, and a second SIGHUP of the
    /// same file changes nothing.
    @Test func theReadThreadsFingerprintsTellEditedFromUnchanged() throws {
        let d = try AgentProcess()
        func requests(_ titles: [(String, String)]) -> String {
            DaemonTests.gpio + titles.map { id, title in
                "[[request]]\nid = \"\(id)\"\ncontent = { title = \"\(title)\" }\ntrigger = { interval = { seconds = 600, repeats = true } }\n"
            }.joined(separator: "\n")
        }
        try d.writeConfig(requests([("a", "A"), ("b", "B"), ("c", "C")]))
        try d.start()
        #expect(d.waitForLog("3 added (a, b, c)"), "log:\n\(d.stderr)")
        try d.writeConfig(requests([("c", "C"), ("a", "A edited")]))
        d.signal(SIGHUP)
        #expect(d.waitForLog("0 added, 1 replaced (a), 1 removed (b), 1 unchanged"), "log:\n\(d.stderr)")
        d.signal(SIGHUP)
        #expect(d.waitForLog("0 added, 0 replaced, 0 removed, 2 unchanged"), "log:\n\(d.stderr)")
        let pending = try d.cli(["pending", "--json"]).stdout
        #expect(pending.contains("A edited") && pending.contains("\"c\"") && !pending.contains("\"b\""), "\(pending)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 5)?.status == 0)
    }

    /// SIGHUP applies every setting that can change while running: a raised `max_radius` lets
    /// the zone-set build take a zone that the old one refused (the build got the old limit), the
    /// new `time_zone` is the agent's device zone, a lowered `pending_cap` evicts, a lowered
    /// `max_message_bytes` holds for the next connection, the button's
    /// `debounce_ms` changes without a word; a changed key
    /// that needs a restart keeps its running value and is named in the log, and `check-config`
    /// names the file's restart keys. Before, SIGHUP logged "reloaded" and kept all of these.
    @Test func sighupAppliesEverySettingAndNamesTheRestartKeys() throws {
        let d = try AgentProcess()
        func zones(radius: Int) throws {
            try Data("""
                {"type":"FeatureCollection","features":[{"type":"Feature","id":"yard",
                 "geometry":{"type":"Point","coordinates":[6.77,51.22]},"properties":{"radius":\(radius)}}]}
                """.utf8).write(to: d.dir.appendingPathComponent("zones.geojson"))
        }
        func config(maxRadius: Int, pendingCap: Int, debounce: Int, uere: Double) -> String {
            """
            zones = "zones.geojson"
            [engine]
            max_radius = \(maxRadius)
            pending_cap = \(pendingCap)
            [gps]
            uere = \(uere)
            [gpio]
            backend = "console"
            debounce_ms = \(debounce)

            """
        }
        try zones(radius: 500)
        try d.writeConfig(config(maxRadius: 1000, pendingCap: 5, debounce: 30, uere: 5))
        try d.start(agent: true)
        #expect(d.waitForLog("running:") && d.waitForLog("zone set built: 1 zones", timeout: 60), "log:\n\(d.stderr)")
        let add = try d.cli(["add", "-"], input: (1...3).map {
            #"{"id":"r\#($0)","content":{"title":"R"},"trigger":{"interval":{"seconds":\#(3600 * $0),"repeats":true}}}"#
        }.joined(separator: "\n"))
        #expect(add.status == 0, "\(add.stderr)")

        try zones(radius: 3000)
        d.timeZone = "Asia/Tokyo"
        let longLine = ["pending", "--after", String(repeating: "x", count: 3000)]
        let before = try d.cli(longLine)
        #expect(!before.stderr.contains("longer than"), "\(before.stderr)")
        try d.writeConfig(config(maxRadius: 5000, pendingCap: 2, debounce: 50, uere: 7.5), socketExtra: "max_message_bytes = 2048\n")
        d.signal(SIGHUP)
        #expect(d.waitForLog("SIGHUP: configuration reloaded"), "log:\n\(d.stderr)")
        #expect(d.waitForLog("gps.uere changed but needs a restart"), "log:\n\(d.stderr)")
        #expect(!d.stderr.contains("debounce_ms"), "applied, not named: log:\n\(d.stderr)")
        #expect(d.waitForLog(": 1 zones from \(d.dir.appendingPathComponent("zones.geojson").path); longest loop turn meanwhile", timeout: 60),
                "log:\n\(d.stderr)")
        #expect(!d.stderr.contains("keeping the previous zone set"), "log:\n\(d.stderr)")
        let status = try d.cli(["status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        let clock = try JSONValue.parse(status.stdout)["clock"]
        #expect(clock?["zone"] == "Asia/Tokyo", "\(status.stdout)")
        let pending = try d.cli(["pending", "--json"])
        let ids = try JSONValue.parse(pending.stdout).array?.compactMap { $0["request"]?["id"]?.string } ?? []
        #expect(ids.sorted() == ["r1", "r2"], "\(pending.stdout)")
        #expect(d.stderr.contains("evicted r3"), "log:\n\(d.stderr)")

        let after = try d.cli(longLine)
        #expect(after.stderr.contains("at most 2048 bytes"), "\(after.stderr)")

        let check = try ChildProcess.run(["check-config", d.configPath])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("reload: SIGHUP applies every key set here except state, socket.path, socket.mode, gps.uere, gpio.backend, which need a restart"),
                "\(check.stdout)")
    }

    /// `count` location requests `z0`…, circles of `radius` metres on a grid (with a pending cap
    /// that holds them all).
    static func regions(_ count: Int, radius: Int) -> String {
        DaemonTests.gpio + "[engine]\npending_cap = \(count + 10)\n\n" + (0 ..< count).map { i in
            let lat = 50.0 + Double(i / 100) * 0.01, lon = 6.0 + Double(i % 100) * 0.01
            return """
                [[request]]
                id = "z\(i)"
                content = { title = "Zone \(i)" }
                trigger.location = { region = { circle = { lat = \(lat), lon = \(lon), radius = \(radius) } }, notifyOnEntry = true }

                """
        }.joined()
    }

    /// The N of the first log line `<prefix>: applied in N loop turns`.
    static func partedTurns(_ log: String, _ prefix: String) -> Int? {
        guard let line = log.split(separator: "\n").first(where: { $0.contains("\(prefix): applied in ") }),
              let r = line.range(of: "\(prefix): applied in ") else { return nil }
        return Int(line[r.upperBound...].prefix { $0.isNumber })
    }

    /// A SIGHUP that changes the regions of thousands of location requests (past the catalog's
    /// delta of regions added since its index) applies them in parts, one per loop turn, as a
    /// fleet list is applied, then rebuilds the regions' index on a thread of its own: no turn
    /// passes 50 ms of the agent's own work for the SIGHUP or a part of its apply, and the index
    /// comes in when built. In one turn, the apply is O(requests) and the rebuild O(regions)
    /// (FENCEPOST_RELOAD_REGIONS sets how many; 4,000 by default).
    @Test func aReloadRebuildsTheRegionIndexOffTheLoop() throws {
        let d = try AgentProcess()
        let count = Int(ProcessInfo.processInfo.environment["FENCEPOST_RELOAD_REGIONS"] ?? "") ?? 4000
        try d.writeConfig(Self.regions(count, radius: 300))
        try d.start(agent: true)
        #expect(d.waitForLog("\(count) added", timeout: 120), "log:\n\(d.stderr.suffix(2000))")
        try d.writeConfig(Self.regions(count, radius: 400))
        d.signal(SIGHUP)
        #expect(d.waitForLog("\(count) replaced", timeout: 60), "log:\n\(d.stderr.suffix(2000))")
        #expect(d.waitForLog("regions: index built in", timeout: 60), "log:\n\(d.stderr.suffix(2000))")
        let turns = Self.partedTurns(d.stderr, "configuration")
        #expect((turns ?? 0) > 1, "the SIGHUP's apply was not in parts: log:\n\(d.stderr.suffix(2000))")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 20)?.status == 0, "log:\n\(d.stderr.suffix(2000))")
        for line in d.stderr.split(separator: "\n") where line.contains("in parts") || line.contains("loop turns") || line.contains("configuration applied") {
            print("reload of \(count) regions: \(line)")
        }
        let slow = d.ownSlowTurns(printing: "reload of \(count) regions").filter { $0.contains("SIGHUP") || $0.contains("apply in parts") }
        #expect(slow.isEmpty, "turns over 50 ms of the agent's own work for the SIGHUP's apply: \(slow)")
        let summary = try #require(LoopTurnSummary(log: d.stderr), "no summary in the log:\n\(d.stderr.suffix(2000))")
        print("reload of \(count) regions: \(summary.line)")
    }

    /// One apply in parts at a time, the newer word replacing the older between parts: a SIGHUP
    /// while the configuration of the one before is applied in parts stops that apply (saying how
    /// far it got) and applies its own against what the stopped one committed; the socket's
    /// `apply` while a SIGHUP's is applied does likewise (in parts too). Each time the newer list
    /// alone is in force. Then the socket's `apply` of all the regions changed, whose slow turns,
    /// if any, are printed (SocketApplyInPartsTests asserts no part of it is; the turn that
    /// decodes its message can be).
    @Test func aNewerConfigurationReplacesTheApplyUnderWay() throws {
        let d = try AgentProcess()
        let count = Int(ProcessInfo.processInfo.environment["FENCEPOST_RELOAD_REGIONS"] ?? "") ?? 4000
        let room = "max_message_bytes = 4194304\n"   // the socket's apply of every region, in one message
        func text(_ body: String) -> String { d.header + body + "\n[socket]\npath = \"\(d.socketPath)\"\nmode = 0o600\n" + room }
        func ids() -> [String] {
            let out = (try? d.cli(["pending", "--json"]))?.stdout ?? ""
            return ((try? JSONValue.parse(out))?.array ?? []).compactMap { $0["request"]?["id"]?.string }.sorted()
        }
        func occurrences(_ text: String) -> Int { d.stderr.components(separatedBy: text).count - 1 }
        try d.writeConfig(Self.regions(count, radius: 300), socketExtra: room)
        try d.start(agent: true)
        #expect(d.waitForLog("\(count) added", timeout: 120), "log:\n\(d.stderr.suffix(2000))")

        // A second SIGHUP during the first one's apply. The file is a FIFO, so that the second
        // read (a SIGHUP during a read is one more read when it ends) opens it as the first one's
        // apply begins, and gets its file as soon as the log says so.
        try FileManager.default.removeItem(atPath: d.configPath)
        #expect(mkfifo(d.configPath, 0o600) == 0)
        d.signal(SIGHUP)
        #expect(d.waitForLog("SIGHUP: reading the configuration again"), "log:\n\(d.stderr.suffix(2000))")
        d.signal(SIGHUP)
        #expect(d.waitForLog("still being read"), "log:\n\(d.stderr.suffix(2000))")
        #expect(Self.feed(d.configPath, text(Self.regions(count, radius: 400))), "the agent never opened the FIFO")
        #expect(d.waitForLog("configuration: applying \(count) requests in parts", timeout: 60), "log:\n\(d.stderr.suffix(2000))")
        #expect(Self.feed(d.configPath, text(DaemonTests.gpio + "[[request]]\nid = \"second\"\ntrigger = { interval = { seconds = 600, repeats = true } }\n"),
                          timeout: 60), "the second read never opened the FIFO")
        #expect(d.waitForLog("configuration applied: 1 added (second), 0 replaced, \(count) removed", timeout: 60), "log:\n\(d.stderr.suffix(2000))")
        #expect(d.stderr.contains("configuration: applying \(count) requests in parts") && d.stderr.contains("configuration: apply stopped after")
                && d.stderr.contains("requests: a newer configuration replaced it"), "the first SIGHUP's apply was not stopped: log:\n\(d.stderr.suffix(2000))")
        #expect(occurrences("configuration applied: ") == 2, "log:\n\(d.stderr.suffix(2000))")
        #expect(ids() == ["second"], "log:\n\(d.stderr.suffix(2000))")

        // The socket's apply during a SIGHUP's apply: sent as soon as the log says it began.
        try FileManager.default.removeItem(atPath: d.configPath)
        try d.writeConfig(Self.regions(count, radius: 300), socketExtra: room)
        d.signal(SIGHUP)
        #expect(d.wait(timeout: 60) { occurrences("configuration: applying \(count) requests in parts") == 2 }, "log:\n\(d.stderr.suffix(2000))")
        let other = #"{"id":"other","content":{"title":"Other"},"trigger":{"interval":{"seconds":600,"repeats":true}}}"#
        let answer = try d.send(#"{"jsonrpc":"2.0","id":1,"method":"apply","params":{"requests":[\#(other)]}}"#)
        #expect(answer?.contains(#""added":["other"]"#) == true, "\(answer ?? "no answer")")
        #expect(d.waitForLog("requests: the socket's apply replaced it", timeout: 20), "log:\n\(d.stderr.suffix(2000))")
        #expect(ids() == ["other"], "log:\n\(d.stderr.suffix(2000))")
        #expect(occurrences("configuration applied: ") == 2, "the stopped apply went on: log:\n\(d.stderr.suffix(2000))")

        // The socket's apply of every region, changed.
        try d.writeConfig(Self.regions(count, radius: 500), socketExtra: room)
        let all = try d.cli(["apply", d.configPath])
        #expect(all.status == 0, "\(all.stderr)")
        #expect(ids().count == count, "log:\n\(d.stderr.suffix(2000))")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 20)?.status == 0, "log:\n\(d.stderr.suffix(2000))")
        for line in d.stderr.split(separator: "\n") where line.contains("in parts") || line.contains("loop turns") || line.contains("stopped after") {
            print("newer configuration: \(line)")
        }
        _ = d.ownSlowTurns(printing: "newer configuration (\(count) regions)")
    }
}
