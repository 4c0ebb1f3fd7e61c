// The `fencepost` executable: the CLI (and, later, the daemon `run`). This file holds the root
// command; each subcommand has its own file.
import ArgumentParser
import FencepostAgent

@main
struct FencepostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fencepost",
        abstract: "Local notifications for a vehicle board: calendar, interval and location triggers.",
        discussion: """
            Fencepost is Apple's local notifications (UNUserNotificationCenter) rebuilt as a small \
            Linux agent. A delivery is a buzzer pattern and an LED; a push button answers it.

            The agent (`fencepost run`, or `fencepost-agent` under systemd) keeps the requests \
            and delivers them; the other commands talk to it over its control socket:

              set up       check-config, pin-test, check-algorithms, run, zones
              requests     add, pending, remove, apply (a config file's), categories
              what fired   status (why not yet), delivered, ack
              try things   next (calendar fires), simulate, replay (a drive), bench
              a fleet      fleet (push, events, devices, command: through an MQTT broker)

            A reminder from a script: `fencepost add -` reads JSON requests on standard input \
            (`fencepost add --help` lists the keys), or talk to the socket directly: JSON-RPC \
            2.0, one message a line, every method with its params, result and errors in \
            docs/protocol.md. The agent sends nothing unasked; a [hook] command runs for each \
            delivery. `fencepost next --jsonl` answers calendar questions a JSON line each.

            The documents (docs/ in the source tree): configuration.md (every key, its default, \
            and whether SIGHUP applies it or it needs a restart; `fencepost check-config FILE` \
            says the same for a file), protocol.md (the control socket), zones.md (GeoJSON \
            zones), board.md (wiring, install, the unit, troubleshooting), fleet.md (the MQTT \
            fleet link).

            A calendar trigger is a set of date components, as in UNCalendarNotificationTrigger \
            (`--hour 7 --weekday mon`: every Monday at 07:00:00), with sets and last days \
            (`--weekday mon-fri`, `--hour 8-18/2`, `--day -1`), or an RFC 5545 rule \
            (`--rrule FREQ=MONTHLY;BYDAY=-1FR`); see its fires with `fencepost next --help`.
            """,
        version: fencepostVersion,
        subcommands: [NextCommand.self, ReplayCommand.self, SimulateCommand.self, BenchCommand.self,
                      AddCommand.self, PendingCommand.self, RemoveCommand.self, DeliveredCommand.self, AckCommand.self,
                      CategoriesCommand.self, ApplyCommand.self, StatusCommand.self, RunCommand.self, CheckConfigCommand.self, PinTestCommand.self, CheckAlgorithmsCommand.self,
                      ZonesCommand.self, FleetOperatorCommand.self]
    )

    /// Reads the command line through ``CommandLineInput`` (repeated options refused, negative
    /// numbers as values) before ArgumentParser does.
    static func main() {
        switch CommandLineInput.normalize(Array(CommandLine.arguments.dropFirst())) {
        case .success(let arguments):
            main(arguments)
        case .failure(let usage):
            writeStandardError("Error: \(usage.text)\n")
            exit(withError: ExitCode(64))
        }
    }
}
