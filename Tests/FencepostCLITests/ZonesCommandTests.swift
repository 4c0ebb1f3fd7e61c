import Foundation
import SeededRandom
import Testing
import FencepostTestSupport

/// `fencepost zones build|info|near` through the real binary, on real files.
@Suite(.processes) struct ZonesCommandTests {
    static func geojson(circles: Int, start: Int = 0) -> String {
        var features: [String] = []
        for k in start ..< start + circles {
            let lat = 51.0 + Double(k % 100) * 0.001, lon = 6.0 + Double(k / 100) * 0.001
            features.append(#"{"type":"Feature","id":"z\#(k)","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":30}}"#)
        }
        features.append(#"{"type":"Feature","id":"yard","geometry":{"type":"Polygon","coordinates":[[[6.5,51.5],[6.51,51.5],[6.51,51.51],[6.5,51.5]]]},"properties":{"cooldown":60}}"#)
        return #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",\n") + "]}"
    }

    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-zones-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func buildInfoNear() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("zones.geojson"), output = dir.appendingPathComponent("zones.set")
        try Data(Self.geojson(circles: 2000).utf8).write(to: input)
        let built = try ChildProcess.run(["zones", "build", input.path, "-o", output.path])
        #expect(built.status == 0, "\(built.stderr)")
        #expect(built.stdout.contains("2001 zones"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty)
        let info = try ChildProcess.run(["zones", "info", output.path])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdoutLines.contains("zones       2001 (2000 circles, 1 polygons)"))
        #expect(info.stdoutLines.contains("version     4"))   // ZoneSetFormat.version
        #expect(info.stdout.contains("bounds      lat 50.99"))
        // z0 is at 51.0, 6.0 (r 30 m); z100 70 m east, z1 111 m north: distances are to the edge.
        let near = try ChildProcess.run(["zones", "near", "51.0", "6.0", "--set", output.path, "--radius", "150"])
        #expect(near.status == 0, "\(near.stderr)")
        let lines = near.stdoutLines
        #expect(lines.first == "6 zones within 150 m of 51.0, 6.0", "\(lines)")
        #expect(Array(lines.dropFirst().prefix(3)) == ["  z0  inside, 30.0 m from the edge  (circle r 30.0 m)",
                                                       "  z100  40.0 m away  (circle r 30.0 m)", "  z1  81.2 m away  (circle r 30.0 m)"], "\(lines)")
        let inYard = try ChildProcess.run(["zones", "near", "51.503", "6.505", "--set", output.path, "--radius", "0"])
        #expect(inYard.stdout.contains("  yard  inside"), "\(inYard.stdout)")
    }

    /// `fencepost-agent zones build` (what a SIGHUP runs) exits as `fencepost zones build` does, by
    /// what failed: it chose by the message's text, so an unreadable GeoJSON gave 65, not 66.
    @Test func theAgentsBuildExitsAsTheCLIs() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("zones.geojson")
        try Data(Self.geojson(circles: 3).utf8).write(to: good)
        let bad = dir.appendingPathComponent("bad.geojson")
        try Data(#"{"type":"FeatureCollection","features":[{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[6,91]},"properties":{"radius":30}}]}"#.utf8).write(to: bad)
        let cases: [(input: String, output: String, status: Int32)] = [
            (dir.appendingPathComponent("absent.geojson").path, dir.appendingPathComponent("a.set").path, 66),
            (bad.path, dir.appendingPathComponent("b.set").path, 65),
            (good.path, dir.appendingPathComponent("no-such-folder/c.set").path, 74),
            (good.path, dir.appendingPathComponent("d.set").path, 0),
        ]
        let agent = try #require(ChildProcess.agentBinary, "fencepost-agent not built")
        for c in cases {
            let cli = try ChildProcess.run(["zones", "build", c.input, "-o", c.output])
            let lean = try ChildProcess.run(["zones", "build", c.input, "-o", c.output], executable: agent)
            #expect(cli.status == c.status, "fencepost \(c.input): \(cli.stderr)")
            #expect(lean.status == c.status, "fencepost-agent \(c.input): \(lean.stderr)")
        }
    }

    /// `--retain-replaced` (what a SIGHUP's build runs): the set being replaced stays as a second
    /// link, `OUT.replaced`, the same file the agent still maps, so that letting it go frees no
    /// blocks in the agent's loop; the next such build removes that one and keeps the set it
    /// replaces in turn. A build without the flag keeps nothing.
    @Test func retainReplacedKeepsTheReplacedSetUntilTheNextBuild() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let agent = try #require(ChildProcess.agentBinary, "fencepost-agent not built")
        let input = dir.appendingPathComponent("zones.geojson"), output = dir.appendingPathComponent("state.zones")
        let kept = output.path + ".replaced"
        func inode(_ path: String) -> UInt64? {
            (try? FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? NSNumber)?.uint64Value
        }
        func build(_ circles: Int, retain: Bool) throws {
            try Data(Self.geojson(circles: circles).utf8).write(to: input)
            let r = try ChildProcess.run(["zones", "build", input.path, "-o", output.path] + (retain ? ["--retain-replaced"] : []), executable: agent)
            #expect(r.status == 0, "\(r.stderr)")
        }
        try build(10, retain: true)        // nothing to replace: nothing kept
        #expect(!FileManager.default.fileExists(atPath: kept))
        let first = try #require(inode(output.path))
        try build(20, retain: true)
        #expect(inode(kept) == first, "the replaced set is not kept")
        let second = try #require(inode(output.path))
        #expect(second != first)
        try build(30, retain: true)
        #expect(inode(kept) == second, "the kept set is not the one just replaced")
        let info = try ChildProcess.run(["zones", "info", kept])
        #expect(info.stdoutLines.contains("zones       21 (20 circles, 1 polygons)"), "\(info.stdout)")
        try build(40, retain: false)
        #expect(inode(kept) == second, "a build without the flag touched the kept set")
    }

    /// Exit codes by what failed, and a `--limit` below 1 refused (it trapped in `prefix`).
    @Test func exitCodesSayWhatFailed() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = dir.appendingPathComponent("zones.set")
        let missing = try ChildProcess.run(["zones", "build", dir.appendingPathComponent("absent.geojson").path, "-o", output.path])
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(missing.stderr.contains("cannot read"), "\(missing.stderr)")
        let input = dir.appendingPathComponent("zones.geojson")
        try Data(Self.geojson(circles: 3).utf8).write(to: input)
        #expect(try ChildProcess.run(["zones", "build", input.path, "-o", output.path]).status == 0)
        for limit in ["0", "-1"] {
            let near = try ChildProcess.run(["zones", "near", "51.0", "6.0", "--set", output.path, "--limit=\(limit)"])
            #expect(near.status == 64, "--limit \(limit): \(near.stderr)")
            #expect(near.stderr.contains("--limit is at least 1"), "\(near.stderr)")
        }
    }

    @Test func badFeatureIsRefusedAndNothingWritten() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("zones.geojson"), output = dir.appendingPathComponent("zones.set")
        var text = Self.geojson(circles: 10)
        text = text.replacingOccurrences(of: #""id":"z7","geometry":{"type":"Point","coordinates":[6.0,51.007]},"properties":{"radius":30}"#,
                                         with: #""id":"z7","geometry":{"type":"Point","coordinates":[6.0,51.007]},"properties":{"radius":-3}"#)
        try Data(text.utf8).write(to: input)
        let out = try ChildProcess.run(["zones", "build", input.path, "-o", output.path])
        #expect(out.status == 65)
        #expect(out.stderr.contains(#"feature 7 ("z7"): properties.radius must be a positive number of metres, found -3"#), "\(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        // A radius over the limit is refused as the agent refuses it (a zone, by id).
        try Data(Self.geojson(circles: 3).replacingOccurrences(of: #""radius":30"#, with: #""radius":60000"#).utf8).write(to: input)
        let big = try ChildProcess.run(["zones", "build", input.path, "-o", output.path])
        #expect(big.status == 65)
        #expect(big.stderr.contains(#"feature 0 ("z0"): trigger.location.region.circle.radius must be at most 50000 m, got 60000"#), "\(big.stderr)")
    }

    /// Running out of room while writing (here: a file-size limit, EFBIG, as ENOSPC would be)
    /// leaves the old set in place, whole, and no temporary file.
    @Test func outOfRoomKeepsTheOldSet() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let small = dir.appendingPathComponent("small.geojson"), large = dir.appendingPathComponent("large.geojson")
        let output = dir.appendingPathComponent("zones.set")
        try Data(Self.geojson(circles: 5).utf8).write(to: small)
        try Data(Self.geojson(circles: 20000).utf8).write(to: large)
        #expect(try ChildProcess.run(["zones", "build", small.path, "-o", output.path]).status == 0)
        let before = try Data(contentsOf: output)
        guard let binary = ChildProcess.binary else { Issue.record("no fencepost binary"); return }
        // 1024-byte blocks: 256 KiB is more than the small set, less than the large one.
        let limited = try ChildProcess.run(["-c", #"trap '' XFSZ; ulimit -f 256; exec "$0" "$@""#, binary.path,
                                            "zones", "build", large.path, "-o", output.path],
                                           executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(limited.status == 74, "\(limited.stdout) \(limited.stderr)")
        #expect(limited.stderr.contains("the previous set (if any) is kept"), "\(limited.stderr)")
        #expect(try Data(contentsOf: output) == before)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
        let info = try ChildProcess.run(["zones", "info", output.path])
        #expect(info.stdoutLines.contains("zones       6 (5 circles, 1 polygons)"))
    }

    @Test func damagedAndNewerSetsAreRefused() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("zones.geojson"), output = dir.appendingPathComponent("zones.set")
        try Data(Self.geojson(circles: 50).utf8).write(to: input)
        #expect(try ChildProcess.run(["zones", "build", input.path, "-o", output.path]).status == 0)
        var bytes = try Data(contentsOf: output)
        bytes[bytes.count / 2] ^= 0x10
        try bytes.write(to: output)
        let damaged = try ChildProcess.run(["zones", "info", output.path])
        #expect(damaged.status == 66)
        #expect(damaged.stderr.contains("checksum mismatch"), "\(damaged.stderr)")
        bytes[bytes.count / 2] ^= 0x10
        bytes[8] = 9
        try bytes.write(to: output)
        let newer = try ChildProcess.run(["zones", "info", output.path])
        #expect(newer.status == 65)
        #expect(newer.stderr.contains("format version 9 was written by a newer fencepost"), "\(newer.stderr)")
    }
}

/// SIGKILL at 50 seeded instants of a build over an existing set: the file is always the old set
/// or the new one, whole (its checksum holds), never a torn one.
@Suite(.processes) struct ZoneSetCrashSafetyTests {
    @Test func sigkillDuringABuildLeavesTheOldOrTheNewSet() throws {
        let seed: UInt64 = 11
        let dir = try ZonesCommandTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let old = dir.appendingPathComponent("old.geojson"), new = dir.appendingPathComponent("new.geojson")
        let output = dir.appendingPathComponent("zones.set")
        try Data(ZonesCommandTests.geojson(circles: 50).utf8).write(to: old)
        try Data(ZonesCommandTests.geojson(circles: 30000, start: 7).utf8).write(to: new)
        guard let binary = ChildProcess.binary else { Issue.record("no fencepost binary"); return }
        func hashOf(_ text: String) -> String? { text.split(separator: "\n").first { $0.hasPrefix("source hash") }.map(String.init) }
        #expect(try ChildProcess.run(["zones", "build", new.path, "-o", output.path]).status == 0)
        let newHash = hashOf(try ChildProcess.run(["zones", "info", output.path]).stdout)
        #expect(try ChildProcess.run(["zones", "build", old.path, "-o", output.path]).status == 0)
        let oldHash = hashOf(try ChildProcess.run(["zones", "info", output.path]).stdout)
        #expect(oldHash != nil && newHash != nil && oldHash != newHash)
        // How long a whole build takes here, to spread the kills over it.
        let t0 = Date()
        _ = try ChildProcess.run(["zones", "build", new.path, "-o", dir.appendingPathComponent("timing.set").path])
        let duration = Date().timeIntervalSince(t0)
        var rng = SplitMix64(seed: seed)
        var sawOld = 0, sawNew = 0
        for k in 0 ..< 50 {
            // Start from the old set each time, so that every kill lands on a replacement.
            if k % 2 == 0 { _ = try ChildProcess.run(["zones", "build", old.path, "-o", output.path]) }
            let before = hashOf(try ChildProcess.run(["zones", "info", output.path]).stdout)
            let p = Process()
            p.executableURL = binary
            p.arguments = ["zones", "build", new.path, "-o", output.path]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            usleep(UInt32(Double(rng.next() % 1000) / 1000 * duration * 1.2 * 1e6))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            let info = try ChildProcess.run(["zones", "info", output.path])
            #expect(info.status == 0, "seed \(seed) kill \(k): \(info.stderr)")
            let h = hashOf(info.stdout)
            #expect(h == before || h == newHash, "seed \(seed) kill \(k): \(String(describing: h))")
            if h == oldHash { sawOld += 1 } else if h == newHash { sawNew += 1 }
            // Leftover temporary files of killed builds are the only trace.
            for f in try FileManager.default.contentsOfDirectory(atPath: dir.path) where f.contains(".tmp-") {
                try FileManager.default.removeItem(at: dir.appendingPathComponent(f))
            }
        }
        #expect(sawOld + sawNew == 50)
    }
}

