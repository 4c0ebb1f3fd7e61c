// `fencepost selftest`: pulses each configured output once, so an installer can check the wiring.
import ArgumentParser
import FencepostAgent
import FencepostLinux

struct SelftestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "selftest",
        abstract: "Pulse each configured GPIO output (buzzer, LED, badge LED) once.",
        discussion: """
            Opens the GPIO lines the configuration names and switches each on for --pulse \
            milliseconds, one after the other, then off; prints what it does. Stop the agent \
            first (systemctl stop fencepost): a line the agent holds is busy.

              fencepost selftest --config /etc/fencepost/fencepost.toml

            Exit status: 0 every output pulsed, 69 GPIO unavailable (no such chip, line busy, \
            permission denied: the message says which), 78 a configuration error.
            """
    )

    @Option(help: ArgumentHelp("The configuration file (TOML).", valueName: "file"))
    var config = "/etc/fencepost/fencepost.toml"

    @Flag(help: "Print the pin changes instead of driving GPIO.")
    var console = false

    @Option(help: "How long each output stays on, in milliseconds.")
    var pulse = 300

    func validate() throws {
        guard (1...10_000).contains(pulse) else { throw ValidationError("--pulse must be 1…10000 ms.") }
    }

    func run() throws {
        var configuration: AgentConfiguration
        do { configuration = try AgentLauncher.load(config) } catch {
            writeErrorLine("fencepost selftest: \(error)")
            throw ExitCode(78)
        }
        if console { configuration.gpio.backend = .console }
        let backend: any GPIOBackend
        do {
            switch configuration.gpio.backend {
            case .console: backend = ConsoleGPIOBackend(clock: { SystemClocks.boottimeNow().nanosecondsSinceBoot }, fileDescriptor: .standardOutput)
            case .libgpiod(let chip): backend = try LibgpiodBackend(chip: chip)
            }
        } catch {
            writeErrorLine("fencepost selftest: \(error)")
            throw ExitCode(69)
        }
        let outputs = [configuration.gpio.buzzer, configuration.gpio.led, configuration.gpio.badge].compactMap { $0 }
        guard !outputs.isEmpty else {
            writeStandardError("fencepost selftest: the configuration names no output (gpio.buzzer, gpio.led, gpio.badge)\n")
            throw ExitCode(78)
        }
        for spec in outputs {
            writeStandardError("selftest: \(spec) on for \(pulse) ms\n")
            do {
                let line = try backend.requestOutput(spec)
                defer { line.release() }
                try line.set(active: true)
                try Sleep.milliseconds(pulse)
                try line.set(active: false)
            } catch let error as GPIOError {
                writeErrorLine("fencepost selftest: \(spec): \(error)")
                throw ExitCode(69)
            }
        }
        writeStandardError("selftest: \(outputs.count) outputs pulsed\n")
    }
}
