import FencepostJSON
import FencepostLinux
import Foundation
import SeededRandom
import Testing

/// The agent with a zones file: applied in process at start, unchanged on SIGHUP and after a
/// restart (nothing rewritten), an edited zone replaced and a dropped one removed.
@Suite struct DaemonZonesTests {
    /// `count` circle zones around Düsseldorf as a GeoJSON FeatureCollection; `moved` gets another
    /// centre, `dropped` is left out.
    static func zones(_ count: Int, seed: UInt64, moved: Int? = nil, dropped: Int? = nil) -> String {
        var rng = SplitMix64(seed: seed)
        var features: [String] = []
        for i in 0..<count {
            var lat = 51 + rng.uniform(0, 0.5), lon = 6.5 + rng.uniform(0, 0.5)
            let radius = 50 + rng.uniform(0, 250)
            if i == moved { lat = 51.9; lon = 7.1 }
            if i == dropped { continue }
            features.append(#"{"type":"Feature","id":"z\#(i)","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":\#(radius)}}"#)
        }
        return #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"
    }

    /// The zone set is built at the first start, kept on an unchanged SIGHUP and at a restart
    /// (no rebuild), rebuilt in a child process when the GeoJSON changes, and a failed build
    /// keeps the old set and says why. Zones are never requests.
    @Test func zoneSetBuiltOnceKeptWhenUnchangedRebuiltInAChildWhenChanged() throws {
        let seed: UInt64 = 5
        let d = try DaemonProcess()
        let zonesFile = d.dir.appendingPathComponent("zones.geojson")
        try Data(Self.zones(3000, seed: seed).utf8).write(to: zonesFile)
        try d.writeConfig("zones = \"zones.geojson\"\n[gpio]\nbackend = \"console\"\n")
        try d.start(agent: true)
        #expect(d.waitForLog("zone set built: 3000 zones from", timeout: 60), "seed \(seed), log:\n\(d.stderr)")
        #expect(d.waitForLog("zone set \(d.statePath).zones: 3000 zones"), "log:\n\(d.stderr)")
        #expect(d.waitForLog("start-up memory released", timeout: 60), "log:\n\(d.stderr)")
        let status = try d.cli(["status", "--json"])
        #expect(status.stdout.contains(#""zones":{"count":3000,"withState":0"#), "\(status.stdout)")
        #expect(status.stdout.contains(#""pending":[]"#), "zones must not be requests: \(status.stdout)")

        d.signal(SIGHUP)
        #expect(d.waitForLog("SIGHUP: zones unchanged (3000 zones)"), "log:\n\(d.stderr)")

        try Data(Self.zones(3000, seed: seed, moved: 5, dropped: 7).utf8).write(to: zonesFile)
        d.signal(SIGHUP)
        #expect(d.waitForLog("builds the zone set if the zones changed"), "log:\n\(d.stderr)")
        #expect(d.waitForLog(": 2999 zones from \(zonesFile.path); longest loop turn meanwhile", timeout: 30), "log:\n\(d.stderr)")

        // A bad feature: the build fails in the child, the set stays.
        let bad = Self.zones(3000, seed: seed).replacingOccurrences(of: #""id":"z3","geometry":{"type":"Point""#, with: #""id":"z3","geometry":{"type":"LineString""#)
        try Data(bad.utf8).write(to: zonesFile)
        d.signal(SIGHUP)
        #expect(d.waitForLog("keeping the previous zone set", timeout: 30), "log:\n\(d.stderr)")
        #expect(d.stderr.contains(#"feature 3 ("z3"): geometry.type "LineString" is not a zone"#), "log:\n\(d.stderr)")
        let after = try d.cli(["status", "--json"])
        #expect(after.stdout.contains(#""zones":{"count":2999"#), "\(after.stdout)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 30)?.status == 0)

        // Restart on the set built from the last good GeoJSON: the bad file is refused again,
        // and the agent keeps using the set on disk.
        try Data(Self.zones(3000, seed: seed, moved: 5, dropped: 7).utf8).write(to: zonesFile)
        try d.start(agent: true)
        #expect(d.waitForLog("zone set \(d.statePath).zones: 2999 zones, built from"), "log:\n\(d.stderr)")
        #expect(!d.stderr.contains("zone set built"), "rebuilt at restart:\n\(d.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 30)?.status == 0)
    }

    /// A cooldown running when the agent is killed (SIGKILL) still runs after the restart: the
    /// demo drive starts in the depot (entry, then exit after 15 s of drive); killed after the
    /// exit and started again on the same drive, the depot stays quiet (its entry and exit are
    /// within the hour's cooldown), while the customer, never entered, is delivered.
    @Test func cooldownSurvivesSIGKILL() throws {
        let d = try DaemonProcess()
        try Data(#"""
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[6.74191,51.24363]},"properties":{"radius":150,"cooldown":3600}},
              {"type":"Feature","id":"customer","geometry":{"type":"Point","coordinates":[6.77686,51.21554]},"properties":{"radius":120}}]}
            """#.utf8).write(to: d.dir.appendingPathComponent("zones.geojson"))
        try d.writeConfig("""
            zones = "zones.geojson"
            [gps]
            source = "replay"
            file = "\(DaemonProcess.demoDrive)"
            speed = 40
            exit_at_end = true
            [gpio]
            backend = "console"
            """)
        try d.start(agent: true)
        #expect(d.waitForLog("delivered depot/", timeout: 60) && d.waitForLog("on exit", timeout: 60), "log:\n\(d.stderr)")
        d.signal(SIGKILL)
        _ = d.waitForExit(timeout: 10)
        try d.start(agent: true)
        let end = try #require(d.waitForExit(timeout: 120), "log:\n\(d.stderr)")
        #expect(end.status == 0)
        #expect(d.stderr.contains("delivered customer/"), "log:\n\(d.stderr)")
        #expect(!d.stderr.contains("delivered depot/"), "the depot's cooldown was lost at the restart:\n\(d.stderr)")
    }

    /// Runs `tool` with `arguments`; its exit status, nil when it has not ended after `timeout`
    /// seconds (then it is killed).
    static func runTool(_ tool: String, _ arguments: [String], timeout: Double = 60) throws -> Int32? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        p.standardError = FileHandle.standardError
        try p.run()
        let end = Date().addingTimeInterval(timeout)
        while p.isRunning && Date() < end { usleep(10_000) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit(); return nil }
        return p.terminationStatus
    }

    /// The zone set the agent maps, truncated (`: > FILE`; truncate(1) opens with O_NONBLOCK and
    /// is refused, EAGAIN, while the agent holds the file) and then overwritten by `cp` under the running
    /// agent while fixes query it: the agent lets go of it (the writers wait for that), says
    /// what to do instead, builds it again from the GeoJSON and keeps answering. Before the agent
    /// held its set under a lease, the first fix after the truncation ended it with SIGBUS.
    @Test func aZoneSetWrittenUnderTheAgentIsLetGoAndRebuilt() throws {
        let d = try DaemonProcess()
        let geojson = d.dir.appendingPathComponent("zones.geojson")
        try Data(#"""
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[6.74191,51.24363]},"properties":{"radius":150}},
              {"type":"Feature","id":"customer","geometry":{"type":"Point","coordinates":[6.77686,51.21554]},"properties":{"radius":120}}]}
            """#.utf8).write(to: geojson)
        try d.writeConfig("""
            zones = "zones.geojson"
            [gps]
            source = "replay"
            file = "\(DaemonProcess.demoDrive)"
            speed = 4
            [gpio]
            backend = "console"
            """)
        try d.start(agent: true)
        let set = d.statePath + ".zones"
        #expect(d.waitForLog("zone set \(set): 2 zones", timeout: 60), "log:\n\(d.stderr)")
        func status() throws -> JSONValue? {
            let out = try d.cli(["status", "--json"])
            return out.status == 0 ? try JSONValue.parse(out.stdout) : nil
        }
        func fixes() throws -> Int64 { try status()?["gps"]?["fixes"]?.int64 ?? -1 }
        #expect(d.wait(timeout: 30) { ((try? fixes()) ?? -1) >= 3 }, "log:\n\(d.stderr)")

        for (k, writer) in [("/bin/sh", ["-c", ": > '\(set)'"]), ("/bin/cp", [geojson.path, set])].enumerated() {
            let ended = try Self.runTool(writer.0, writer.1)
            #expect(ended == 0, "\(writer.0) \(ended.map(String.init) ?? "did not end")")
            let before = try fixes()
            // Fixes keep coming after the write (each one queries the zone set once it is back).
            #expect(d.wait(timeout: 30) { ((try? fixes()) ?? -1) >= before + 3 }, "log:\n\(d.stderr)")
            #expect(d.process?.isRunning == true, "the agent ended; log:\n\(d.stderr)")
            #expect(d.wait(timeout: 30) { d.stderr.components(separatedBy: "another process is writing or truncating \(set)").count - 1 == k + 1 },
                    "log:\n\(d.stderr)")
            #expect(d.stderr.contains("edit the GeoJSON that `zones` names and send SIGHUP"), "log:\n\(d.stderr)")
            #expect(d.wait(timeout: 60) { d.stderr.components(separatedBy: ": 2 zones from \(geojson.path); longest loop turn meanwhile").count - 1 == k + 1 },
                    "log:\n\(d.stderr)")
            #expect(try status()?["zones"]?["count"]?.int64 == 2, "log:\n\(d.stderr)")
        }
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 30)?.status == 0, "log:\n\(d.stderr)")
    }
}
