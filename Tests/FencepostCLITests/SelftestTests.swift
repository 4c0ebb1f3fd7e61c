import Foundation
import Testing

/// `fencepost selftest`: each output pulsed once; on a machine without GPIO, libgpiod's error.
@Suite struct SelftestTests {
    @Test func consolePulsesEachOutputOnce() throws {
        let r = try ChildProcess.run(["selftest", "--config", DaemonProcess.root.appendingPathComponent("board/demo/fencepost.toml").path,
                                      "--pulse", "20"])
        #expect(r.status == 0, "\(r.stderr)")
        for name in ["buzzer (BCM 18)", "led (BCM 23)", "badge (BCM 24)"] {
            let lines = r.stdoutLines.filter { $0.contains(name) }
            #expect(lines.filter { $0.hasSuffix(" on") }.count == 1, "\(name): \(lines)")
            #expect(lines.last?.hasSuffix(" off") == true, "\(name): \(lines)")
        }
        #expect(r.stderr.contains("3 outputs pulsed"))
    }

    @Test func noGPIOChipIsAClearError() throws {
        // The board's example config uses libgpiod on gpiochip0, which does not exist here.
        guard !FileManager.default.fileExists(atPath: "/dev/gpiochip0") else { return }
        let r = try ChildProcess.run(["selftest", "--config", DaemonProcess.root.appendingPathComponent("board/fencepost.toml").path])
        #expect(r.status == 69)
        #expect(r.stderr.contains("GPIO chip \"gpiochip0\" not found"), "\(r.stderr)")
        #expect(r.stderr.contains("use the console backend"))
    }
}
