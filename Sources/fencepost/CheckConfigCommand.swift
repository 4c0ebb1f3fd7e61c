// `fencepost check-config [FILE]`: ``ConfigCheck`` (FencepostAgent), the one implementation, which
// `fencepost-agent --check-config` runs too. The arguments go to it as given; this type only puts
// its help into `fencepost check-config --help`.
import ArgumentParser
import FencepostAgent

struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check the daemon's config file and summarise it.",
        usage: "fencepost check-config " + ConfigCheck.Options.synopsis,
        discussion: ConfigCheck.details)

    @Argument(parsing: .allUnrecognized, help: ArgumentHelp(
        "The config file (default /etc/fencepost/fencepost.toml); --quiet prints nothing when it is valid.",
        valueName: "arguments"))
    var arguments: [String] = []

    func run() throws {
        let status = ConfigCheck.run(arguments, program: "fencepost check-config", command: "check-config")
        if status != 0 { throw ExitCode(status) }
    }
}
