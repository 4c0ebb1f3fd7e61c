// `fencepost selftest`: pulses each configured output once, so an installer can check the wiring.
import ArgumentParser
import FencepostAgent

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
    var pulse = OutputSelftest.defaultPulseMilliseconds

    func validate() throws {
        guard OutputSelftest.pulseRange.contains(pulse) else { throw ValidationError("--pulse must be 1…10000 ms.") }
    }

    func run() throws {
        let status = OutputSelftest.run(configPath: config, console: console, pulseMilliseconds: pulse, program: "fencepost selftest")
        if status != 0 { throw ExitCode(status) }
    }
}
