// `fencepost check-algorithms`: ``AlgorithmCheck`` (FencepostAgent), the one implementation, which
// `fencepost-agent --check-algorithms` runs too; this type only puts its help into
// `fencepost check-algorithms --help`.
import ArgumentParser
import FencepostAgent

struct CheckAlgorithmsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-algorithms",
        abstract: "Check the cores (next fire, geofence index, timing wheel, NMEA) against simple references.",
        usage: "fencepost check-algorithms [--seed N]",
        discussion: """
            Seeded cases of each core against a simple reference: the next fire against a brute \
            force in zones with DST, the geofence index against a scan, the timing wheel against \
            a sorted list, an NMEA snippet against its known fixes. One line per check, the last \
            a digest of every answer: the same on every machine and in every build (host, \
            Embedded Swift, aarch64, armhf), so two builds are compared by one line. --seed N \
            picks other cases. `fencepost-agent --check-algorithms` is the same command, for a \
            board with the agent alone.

            Exit status: 0 every answer agrees with its reference, 1 not, 64 usage.
            """)

    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("--seed N: the seed of the cases.", valueName: "options"))
    var arguments: [String] = []

    func run() throws {
        let status = AlgorithmCheck.run(arguments, program: "fencepost check-algorithms", command: "check-algorithms")
        if status != 0 { throw ExitCode(status) }
    }
}
