// `fencepost pin-test`: pulses each configured output once, so an installer can check the wiring;
// ``PinTest`` (FencepostAgent) is the command, which `fencepost-agent --pin-test` runs too.
import ArgumentParser
import FencepostAgent

struct PinTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin-test",
        abstract: "Pulse each configured GPIO output (buzzer, LED, badge LED) once.",
        usage: "fencepost pin-test " + PinTest.Options.synopsis,
        discussion: """
            Opens the GPIO lines the configuration names and switches each on for --pulse \
            milliseconds, one after the other, then off; prints what it does. Stop the agent \
            first (systemctl stop fencepost): a line the agent holds is busy.

              fencepost pin-test --config /etc/fencepost/fencepost.toml

            Exit status: 0 every output pulsed, 69 GPIO unavailable (no such chip, line busy, \
            permission denied: the message says which), 78 a configuration error.
            """
    )

    /// The options are ``PinTest/Options``' (FencepostAgent), the parser `fencepost-agent
    /// --pin-test` uses: they go to it as given.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp(
        "--config <file>: the configuration (default /etc/fencepost/fencepost.toml). --pulse <ms>: how long each output stays on (1…10000, default 300). --console: print the pin changes instead of driving GPIO.",
        valueName: "options"))
    var arguments: [String] = []

    func run() throws {
        let status = PinTest.run(arguments, program: "fencepost pin-test", command: "pin-test")
        if status != 0 { throw ExitCode(status) }
    }
}
