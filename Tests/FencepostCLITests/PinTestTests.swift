import FencepostTestSupport
import Foundation
import Testing

/// `fencepost pin-test` and `fencepost-agent --pin-test` (one implementation: a board with the
/// cross-built agent alone has no CLI): each output pulsed once; on a machine without GPIO,
/// libgpiod's error.
@Suite(.processes) struct PinTestTests {
    /// Runs the pin test of the CLI (`agent` false) or of the agent with `arguments` after it.
    func pinTest(agent: Bool, _ arguments: [String]) throws -> ChildProcess.Output {
        if agent {
            return try ChildProcess.run(["--pin-test"] + arguments, executable: try #require(ChildProcess.agentBinary, "fencepost-agent not built"))
        }
        return try ChildProcess.run(["pin-test"] + arguments)
    }

    @Test(arguments: [false, true])
    func consolePulsesEachOutputOnce(agent: Bool) throws {
        let r = try pinTest(agent: agent, ["--config", AgentProcess.root.appendingPathComponent("board/demo/fencepost.toml").path,
                                            "--pulse", "20", "--console"])
        #expect(r.status == 0, "\(r.stderr)")
        for name in ["buzzer (BCM 18)", "led (BCM 23)", "badge (BCM 24)"] {
            let lines = r.stdoutLines.filter { $0.contains(name) }
            #expect(lines.filter { $0.hasSuffix(" on") }.count == 1, "\(name): \(lines)")
            #expect(lines.last?.hasSuffix(" off") == true, "\(name): \(lines)")
        }
        #expect(r.stderr.contains("3 outputs pulsed"))
    }

    @Test(arguments: [false, true])
    func noSuchGPIOChipIsAClearError(agent: Bool) throws {
        // A libgpiod config naming a chip no machine has (runs everywhere, boards included).
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-pin-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("fencepost.toml")
        try Data("[gpio]\nbackend = \"libgpiod\"\nchip = \"gpiochip977\"\n".utf8).write(to: config)
        let r = try pinTest(agent: agent, ["--config", config.path])
        #expect(r.status == 69)
        #expect(r.stderr.contains("GPIO chip \"gpiochip977\" not found (No such file or directory)"), "\(r.stderr)")
        let noGPIO = !((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).contains { $0.hasPrefix("gpiochip") }
        #expect(r.stderr.contains(noGPIO ? "use the console backend" : "chips present:"), "\(r.stderr)")
    }

    @Test(arguments: [false, true])
    func aBrokenConfigurationExits78(agent: Bool) throws {
        let r = try pinTest(agent: agent, ["--config", "/nonexistent/fencepost.toml"])
        #expect(r.status == 78, "\(r.stderr)")
        #expect(r.stderr.contains("/nonexistent/fencepost.toml"), "\(r.stderr)")
    }
}
