import FencepostTestSupport
import Foundation
import Testing

/// The commands both executables have (`check-config`, `run`'s options, the pin pulse, the
/// algorithm check) through both doors, as real child processes: the same verdict, the same exit
/// status and the same output, but for the program's name in messages.
@Suite(.processes) struct OneDoorTests {
    /// `fencepost CLI…` and `fencepost-agent AGENT…`; stderr with each program's name replaced by
    /// `PROGRAM`, so that the two can be compared.
    func both(cli: [String], agent: [String], cliName: String, agentName: String = "fencepost-agent")
        throws -> (cli: ChildProcess.Output, agent: ChildProcess.Output) {
        var c = try ChildProcess.run(cli)
        var a = try ChildProcess.run(agent, executable: try #require(ChildProcess.agentBinary, "fencepost-agent not built"))
        c.stderr = c.stderr.replacingOccurrences(of: cliName, with: "PROGRAM")
        a.stderr = a.stderr.replacingOccurrences(of: agentName, with: "PROGRAM")
        return (c, a)
    }

    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-doors-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// `check-config`: byte for byte the same summary, errors and statuses (valid, a typo, an
    /// unknown time zone, a missing file, a directory, `--quiet`, two files).
    @Test func checkConfigIsOneCommand() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(#"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[6,51]},"properties":{"radius":30}}]}"#.utf8)
            .write(to: dir.appendingPathComponent("zones.geojson"))
        let base = "state = \"\(dir.path)/s.sqlite\"\nzones = \"zones.geojson\"\n\n[gpio]\nbackend = \"console\"\n"
        let files = ["good": base + "[alerts]\nquiet_hours = \"22:00-06:30\"\n", "typo": base + "buzer = 18\n",
                     "zone": "time_zone = \"Mars/Olympus\"\n" + base]
        for (name, text) in files { try Data(text.utf8).write(to: dir.appendingPathComponent("\(name).toml")) }
        let good = dir.appendingPathComponent("good.toml").path
        let cases: [(args: [String], status: Int32)] = [
            ([good], 0), (["--config", good], 0), (["--quiet", good], 0),
            ([dir.appendingPathComponent("typo.toml").path], 78), ([dir.appendingPathComponent("zone.toml").path], 78),
            (["/nonexistent/fencepost.toml"], 66), ([dir.path], 66),
            ([good, good], 64), (["--bogus"], 64),
        ]
        for c in cases {
            let r = try both(cli: ["check-config"] + c.args, agent: ["--check-config"] + c.args, cliName: "fencepost check-config")
            #expect(r.cli.status == c.status, "\(c.args): \(r.cli.stderr)")
            #expect(r.agent.status == r.cli.status, "\(c.args): \(r.agent.stderr)")
            #expect(r.agent.stdout == r.cli.stdout, "\(c.args)")
            if c.status != 64 { #expect(r.agent.stderr == r.cli.stderr, "\(c.args)") }
        }
        let summary = try ChildProcess.run(["check-config", good])
        #expect(summary.stdoutLines.contains("quiet hours: 22:00-06:30"), "\(summary.stdout)")
        #expect(summary.stdoutLines.contains("zones: 1"), "\(summary.stdout)")
    }

    /// `fencepost run` takes exactly `fencepost-agent`'s options (`-c` and `--config=` included)
    /// and fails the same way: a missing file, an unknown option, a stray argument.
    @Test func runTakesTheAgentsOptions() throws {
        let cases: [(args: [String], status: Int32, text: String)] = [
            (["-c", "/nonexistent/fencepost.toml"], 78, "cannot read the file"),
            (["--config=/nonexistent/fencepost.toml", "--console"], 78, "cannot read the file"),
            (["--bogus"], 64, "unknown option --bogus"),
            (["fencepost.toml"], 64, "unexpected argument fencepost.toml"),
            (["--console=yes"], 64, "--console takes no value"),
        ]
        for c in cases {
            let r = try both(cli: ["run"] + c.args, agent: c.args, cliName: "fencepost run")
            #expect(r.cli.status == c.status, "\(c.args): \(r.cli.stderr)")
            #expect(r.agent.status == c.status, "\(c.args): \(r.agent.stderr)")
            #expect(r.cli.stderr.contains(c.text) && r.agent.stderr.contains(c.text), "\(c.args): \(r.cli.stderr) / \(r.agent.stderr)")
            #expect(r.cli.stderr == r.agent.stderr, "\(c.args)")
        }
    }

    /// The pin pulse: the same lines on standard error, and the same refusal of a bad `--pulse`.
    @Test func pinPulseIsOneCommand() throws {
        let config = AgentProcess.root.appendingPathComponent("board/demo/fencepost.toml").path
        let ok = try both(cli: ["pin-test", "--config", config, "--pulse", "5", "--console"],
                          agent: ["--pin-test", "--config", config, "--pulse", "5", "--console"], cliName: "fencepost pin-test")
        #expect(ok.cli.status == 0 && ok.agent.status == 0, "\(ok.cli.stderr)\(ok.agent.stderr)")
        #expect(ok.cli.stderr == ok.agent.stderr)
        // The pin changes, without their times: three outputs, each off (at request), on, off.
        func changes(_ o: ChildProcess.Output) -> [String] { o.stdoutLines.map { String($0.drop { $0 != " " }) } }
        #expect(changes(ok.cli) == changes(ok.agent), "\(ok.cli.stdout) vs \(ok.agent.stdout)")
        #expect(changes(ok.cli).count == 9, "\(ok.cli.stdout)")
        let bad = try both(cli: ["pin-test", "--pulse", "0"], agent: ["--pin-test", "--pulse", "0"], cliName: "fencepost pin-test")
        #expect(bad.cli.status == 64 && bad.agent.status == 64)
        #expect(bad.cli.stderr.contains("--pulse needs milliseconds") && bad.agent.stderr.contains("--pulse needs milliseconds"),
                "\(bad.cli.stderr)\(bad.agent.stderr)")
    }

    /// The algorithm check: the same report, digest included, from both executables.
    @Test func algorithmCheckIsOneCommand() throws {
        let r = try both(cli: ["check-algorithms", "--seed", "3"], agent: ["--check-algorithms", "--seed=3"], cliName: "fencepost check-algorithms")
        #expect(r.cli.status == 0 && r.agent.status == 0, "\(r.cli.stdout)\(r.cli.stderr)\(r.agent.stdout)")
        #expect(r.cli.stdout == r.agent.stdout)
        #expect(r.cli.stdoutLines.last?.hasPrefix("digest ") == true, "\(r.cli.stdout)")
        let bad = try both(cli: ["check-algorithms", "--seed", "x"], agent: ["--check-algorithms", "--seed", "x"], cliName: "fencepost check-algorithms")
        #expect(bad.cli.status == 64 && bad.agent.status == 64)
        #expect(bad.cli.stderr.contains("--seed needs a number") && bad.agent.stderr.contains("--seed needs a number"), "\(bad.cli.stderr)\(bad.agent.stderr)")
    }

    /// The names of an unreleased cycle are gone: `selftest` and `--selftest`/`--self-check` are
    /// unknown, as any other, with exit 64.
    @Test func formerNamesAreUnknown() throws {
        let cli = try ChildProcess.run(["selftest"])
        #expect(cli.status == 64)
        #expect(cli.stderr.contains("selftest") && !cli.stderr.contains("is now"), "\(cli.stderr)")
        let agent = try #require(ChildProcess.agentBinary, "fencepost-agent not built")
        for old in ["--selftest", "--self-check"] {
            let r = try ChildProcess.run([old], executable: agent)
            #expect(r.status == 64)
            #expect(r.stderr.contains(old) && !r.stderr.contains("is now"), "\(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
    }
}
