import Foundation
import Testing

/// `fencepost-agent`: the lean daemon executable's own command line (its running is tested with
/// `fencepost run` in DaemonTests, with both executables).
@Suite struct AgentExecutableTests {
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
        let d = try DaemonProcess()
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

    /// `--self-check`: the seeded core checks pass in this build, every check reports, the last line
    /// is a digest, and another seed gives other cases (the digest is not a constant).
    @Test func selfCheckPassesAndItsDigestDependsOnTheSeed() throws {
        let a = try agent(["--self-check", "--seed", "1"])
        let b = try agent(["--self-check", "--seed", "2"])
        #expect(a.status == 0 && b.status == 0, "\(a.stdout)\(b.stdout)")
        let lines = a.stdout.split(separator: "\n")
        #expect(lines.filter { $0.contains(" cases, ok") }.count == 4, "\(a.stdout)")
        #expect(lines.last?.hasPrefix("digest ") == true && lines.last?.count == 23, "\(a.stdout)")
        #expect(lines.last != b.stdout.split(separator: "\n").last)
    }
}
