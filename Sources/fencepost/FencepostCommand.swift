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

            A calendar trigger is a set of date components, as in UNCalendarNotificationTrigger:

              --hour 7 --weekday mon           every Monday at 07:00:00
              --day 1 --hour 9 --minute 30     09:30:00 on the first of every month
              --month 2 --day 29               midnight of every 29 February

            Components left out below the smallest one given take their lowest value (--hour 7 \
            means 07:00:00); components above it are free. A fire is the first match strictly \
            after a given instant, in the trigger's time zone. When the matched local time does \
            not exist (a DST gap, 30 February) --policy decides; when it exists twice (the hour \
            the clocks go back) --repeated-time does.

            See the next fires of a trigger:

              fencepost next --tz Europe/Berlin --after 2026-03-28T00:00:00Z \\
                  --count 5 --hour 2 --minute 30

            Berlin skips 02:00-03:00 on 29 March 2026: compare --policy nextTime and \
            --policy strict. Scripts ask many questions at once with `fencepost next --jsonl`.
            """,
        version: fencepostVersion,
        subcommands: [NextCommand.self, ReplayCommand.self, SimulateCommand.self, BenchCommand.self,
                      AddCommand.self, PendingCommand.self, RemoveCommand.self, DeliveredCommand.self, AckCommand.self,
                      CategoriesCommand.self, ApplyCommand.self, StatusCommand.self, RunCommand.self, CheckConfigCommand.self, SelftestCommand.self,
                      ZonesCommand.self, FleetOperatorCommand.self]
    )
}
