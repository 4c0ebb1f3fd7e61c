import FencepostAgent
import Testing

@Suite struct AgentArgumentsTests {
    @Test func defaultsToTheUnitsConfiguration() throws {
        #expect(try AgentArguments.parse([]) == .run(RunOptions(configPath: "/etc/fencepost/fencepost.toml", console: false)))
    }

    @Test(arguments: [
        (["--config", "a.toml"], AgentArguments.run(RunOptions(configPath: "a.toml", console: false))),
        (["-c", "a.toml", "--console"], .run(RunOptions(configPath: "a.toml", console: true))),
        (["--console", "--config=b.toml"], .run(RunOptions(configPath: "b.toml", console: true))),
        (["--config", "a.toml", "--help"], .help),
        (["--version"], .version),
        (["--pin-test"], .pinTest(.init(configPath: "/etc/fencepost/fencepost.toml", console: false, pulseMilliseconds: 300))),
        (["--pin-test", "--pulse", "20", "--console", "-c", "a.toml"], .pinTest(.init(configPath: "a.toml", console: true, pulseMilliseconds: 20))),
        (["--check-config", "--quiet", "--config", "a.toml"], .checkConfig(.init(path: "a.toml", quiet: true))),
        (["--check-config", "a.toml"], .checkConfig(.init(path: "a.toml", quiet: false))),
        (["--check-algorithms", "--seed=7"], .checkAlgorithms(seed: 7)),
        (["--seconds", "2", "--bench"], .bench(seconds: 2)),
    ])
    func parses(arguments: [String], expected: AgentArguments) throws {
        #expect(try AgentArguments.parse(arguments) == expected)
    }

    @Test(arguments: [
        (["--config"], "--config needs a file"),
        (["--config", ""], "--config needs a file"),
        (["--config="], "--config needs a file"),
        (["--console=yes"], "--console takes no value"),
        (["--quiet"], "--quiet goes with --check-config"),
        (["--selftest"], "unknown option --selftest"),
        (["--self-check", "--seed", "1"], "unknown option --self-check"),
        (["--check-config", "a.toml", "b.toml"], "one configuration file at a time"),
        (["-x"], "unknown option -x"),
        (["run"], "unexpected argument run"),
        (["--pulse", "20"], "--pulse goes with --pin-test"),
        (["--pin-test", "--pulse", "0"], "--pulse needs milliseconds"),
        (["--pin-test", "--check-config"], "--check-algorithms, --bench, --check-config and --pin-test are separate runs"),
    ])
    func refuses(arguments: [String], message: String) {
        #expect(throws: UsageError.self) { try AgentArguments.parse(arguments) }
        do { _ = try AgentArguments.parse(arguments) } catch { #expect(error.message.hasPrefix(message), "\(error.message)") }
    }
}
