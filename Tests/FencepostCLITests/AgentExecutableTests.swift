import FencepostTestSupport
import Foundation
import Testing

/// `fencepost-agent`: the lean daemon executable's own command line (its running is tested with
/// `fencepost run` in DaemonTests, with both executables).
@Suite(.processes) struct AgentExecutableTests {
    func agent(_ arguments: [String]) throws -> ChildProcess.Output {
        try ChildProcess.run(arguments, executable: try #require(ChildProcess.agentBinary, "fencepost-agent not built"))
    }

    @Test func helpTeachesTheOptionsAndExitStatuses() throws {
        let out = try agent(["--help"])
        #expect(out.status == 0)
        for text in ["--config", "--console", "/etc/fencepost/fencepost.toml", "check-config", "78 a configuration error"] {
            #expect(out.stdout.contains(text), "no \(text) in:\n\(out.stdout)")
        }
    }

    @Test func versionMatchesTheCLI() throws {
        let agentVersion = try agent(["--version"])
        let cliVersion = try ChildProcess.run(["--version"])
        #expect(agentVersion.status == 0)
        #expect(agentVersion.stdout == cliVersion.stdout && !agentVersion.stdout.isEmpty)
    }

    @Test(arguments: [
        (["--bogus"], "unknown option --bogus"),
        (["--config"], "--config needs a file"),
        (["fencepost.toml"], "unexpected argument fencepost.toml"),
    ])
    func usageErrorsExit64AndSayWhat(arguments: [String], message: String) throws {
        let out = try agent(arguments)
        #expect(out.status == 64)
        #expect(out.stderr.contains("fencepost-agent: \(message)"), "\(out.stderr)")
        #expect(out.stdout.isEmpty)
    }

    @Test func aMissingConfigurationExits78AndNamesTheFile() throws {
        let out = try agent(["--config=/nonexistent/fencepost.toml"])
        #expect(out.status == 78)
        #expect(out.stderr.contains("/nonexistent/fencepost.toml"), "\(out.stderr)")
        #expect(out.stderr.contains("cannot read the file"), "\(out.stderr)")
    }

    /// libgps is loaded at start only when the source is gpsd; a library that cannot be loaded is
    /// a clear start-up error (69), not a reconnect loop.
    @Test func aMissingLibgpsExits69AndSaysWhatToInstall() throws {
        let d = try AgentProcess()
        try d.writeConfig("[gps]\nsource = \"gpsd\"\n\n[gpio]\nbackend = \"console\"\n")
        let out = try ChildProcess.run(["--config", d.configPath], environment: ["TZ": "UTC", "FENCEPOST_LIBGPS": "/nonexistent/libgps.so.28"],
                                       executable: try #require(ChildProcess.agentBinary))
        #expect(out.status == 69, "\(out.stderr)")
        #expect(out.stderr.contains("libgps (/nonexistent/libgps.so.28) cannot be loaded"), "\(out.stderr)")
        #expect(out.stderr.contains("apt-get install libgps28"), "\(out.stderr)")
    }

    @Test func aTypoInTheConfigurationExits78WithItsLine() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-agent-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("fencepost.toml").path
        try Data("state = \"\(dir.path)/s.sqlite\"\n\n[gpio]\nbackend = \"console\"\nbuzer = 18\n".utf8).write(to: URL(fileURLWithPath: path))
        let out = try agent(["--config", path])
        #expect(out.status == 78)
        #expect(out.stderr.contains("fencepost.toml:5"), "\(out.stderr)")
        #expect(out.stderr.contains("buzzer"), "\(out.stderr)")
    }

    /// A request of the file that the engine refuses when the agent applies it (a time zone the
    /// system does not know) is logged at its line in the file, as `check-config` and `apply`
    /// name it. The agent replays two fixes and exits at the end.
    @Test func aRequestRefusedAtStartIsLoggedAtItsLine() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-agent-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let drive = dir.appendingPathComponent("drive.nmea")
        try Data("""
            $GPGGA,120000.00,5113.0000,N,00646.0000,E,1,08,1.0,40.0,M,47.0,M,,*53
            $GPRMC,120000.00,A,5113.0000,N,00646.0000,E,0.0,0.0,070709,,,A*56
            $GPGGA,120001.00,5113.0010,N,00646.0010,E,1,08,1.0,40.0,M,47.0,M,,*52
            $GPRMC,120001.00,A,5113.0010,N,00646.0010,E,0.0,0.0,070709,,,A*57

            """.utf8).write(to: drive)
        let path = dir.appendingPathComponent("fencepost.toml").path
        try Data("""
            state = "\(dir.path)/s.sqlite"
            clock_trust = "always"
            [socket]
            path = "\(dir.path)/control.sock"
            [gpio]
            backend = "console"
            [gps]
            source = "replay"
            file = "\(drive.path)"
            speed = 100
            exit_at_end = true

            [[request]]
            id = "w"
            trigger.interval.seconds = 600

            [[request]]
            id = "r"
            trigger.calendar.match = { hour = 7 }
            trigger.calendar.tz = "Mars/Olympus"

            """.utf8).write(to: URL(fileURLWithPath: path))
        let out = try agent(["--config", path])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr.contains("configuration not applied: \(path):17: ") && out.stderr.contains("Mars/Olympus"), "\(out.stderr)")
    }

    /// `--check-algorithms`: the seeded core checks pass in this build, every check reports, the last line
    /// is a digest, and another seed gives other cases (the digest is not a constant).
    @Test func algorithmCheckPassesAndItsDigestDependsOnTheSeed() throws {
        let a = try agent(["--check-algorithms", "--seed", "1"])
        let b = try agent(["--check-algorithms", "--seed", "2"])
        #expect(a.status == 0 && b.status == 0, "\(a.stdout)\(b.stdout)")
        let lines = a.stdout.split(separator: "\n")
        #expect(lines.filter { $0.contains(" cases, ok") }.count == 4, "\(a.stdout)")
        #expect(lines.last?.hasPrefix("digest ") == true && lines.last?.count == 23, "\(a.stdout)")
        #expect(lines.last != b.stdout.split(separator: "\n").last)
    }

    /// `--bench`: one line per case with a time per operation, MB/s for NMEA, and a checksum; the
    /// cases are `fencepost bench`'s of the same name (one catalog, one harness); a duration out of
    /// range is a usage error that says what to give.
    @Test func benchTimesEveryCaseAndRefusesABadDuration() throws {
        let out = try agent(["--bench", "--seconds", "0.05"])
        #expect(out.status == 0, "\(out.stderr)")
        let lines = out.stdout.split(separator: "\n")
        #expect(lines.count == 3, "\(out.stdout)")
        let catalog = try ChildProcess.run(["bench", "--list"]).stdoutLines
        for name in ["next-fire daily 07:00, Europe/Berlin", "geofence index, uniform 100k", "nmea framer+decoders 4.0 MB"] {
            let line = lines.first { $0.hasPrefix(name + ": ") }
            #expect(line?.contains(" ns/op") == true && line?.contains("(checksum ") == true, "\(name): \(out.stdout)")
            #expect(line?.contains("n/a") == false, "\(out.stdout)")
            #expect(catalog.contains(name), "\(name) is not a case of fencepost bench: \(catalog)")
        }
        #expect(lines.first { $0.hasPrefix("nmea") }?.contains(" MB/s") == true, "\(out.stdout)")
        for bad in ["0", "-1", "x"] {
            let refused = try agent(["--bench", "--seconds", bad])
            #expect(refused.status == 64, "\(bad): \(refused.stderr)")
            #expect(refused.stderr.contains("--seconds needs a duration"), "\(refused.stderr)")
        }
    }

    /// `--check-config`, what the unit's ExecReload= runs (a board with only the cross-built agent
    /// has no `fencepost`): the same verdict and output as `fencepost check-config` on good files, a
    /// typo, an unknown time zone and a bad zone file.
    @Test func checkConfigAgreesWithTheCLI() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-agent-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(#"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[6,51]},"properties":{"radius":30}},{"type":"Feature","id":"b","geometry":{"type":"Point","coordinates":[6,51.1]},"properties":{"radius":30}}]}"#.utf8)
            .write(to: dir.appendingPathComponent("zones.geojson"))
        try Data(#"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[6,95]},"properties":{"radius":30}}]}"#.utf8)
            .write(to: dir.appendingPathComponent("bad.geojson"))
        let base = "state = \"\(dir.path)/s.sqlite\"\n\n[gpio]\nbackend = \"console\"\n"
        let request = "\n[[request]]\nid = \"r\"\ncontent = { title = \"T\" }\ntrigger = { calendar = { match = { hour = 7 }, repeats = true, tz = \"Europe/Berlin\" } }\n"
        let files: [(name: String, text: String, valid: Bool, line: String?)] = [
            ("good", "zones = \"zones.geojson\"\n" + base + request, true, nil),
            ("typo", base + "buzer = 18\n", false, ":5:"),
            ("zone", "time_zone = \"Mars/Olympus\"\n" + base, false, ":1:"),
            ("tz", base + request.replacingOccurrences(of: "Europe/Berlin", with: "Europe/Nowhere"), false, ":9:"),
            ("geojson", "zones = \"bad.geojson\"\n" + base, false, ":1:"),
        ]
        for f in files {
            let path = dir.appendingPathComponent("\(f.name).toml").path
            try Data(f.text.utf8).write(to: URL(fileURLWithPath: path))
            let lean = try agent(["--check-config", "--config", path])
            let cli = try ChildProcess.run(["check-config", path])
            #expect(lean.status == (f.valid ? 0 : 78), "\(f.name): \(lean.stderr)")
            #expect(cli.status == lean.status, "\(f.name): \(cli.stderr)")
            if let line = f.line {
                #expect(lean.stderr.contains("\(f.name).toml\(line)"), "\(f.name): \(lean.stderr)")
                #expect(cli.stderr.contains("\(f.name).toml\(line)"), "\(f.name): \(cli.stderr)")
            } else {
                // One ConfigCheck: the same summary, byte for byte.
                #expect(lean.stdout.hasPrefix("\(path): OK\n"), "\(lean.stdout)")
                #expect(lean.stdout.contains("requests: 1\nzones: 2\n"), "\(lean.stdout)")
                #expect(lean.stdout == cli.stdout, "\(lean.stdout) vs \(cli.stdout)")
                let quiet = try agent(["--check-config", "--quiet", "--config", path])
                #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet.stdout)\(quiet.stderr)")
            }
        }
        #expect(try agent(["--quiet"]).status == 64)
    }
}
