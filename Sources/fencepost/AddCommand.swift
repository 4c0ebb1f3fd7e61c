// `fencepost add FILE|-`: add requests to the running agent.
import ArgumentParser
import FencepostJSON

struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add notification requests to the agent (a request with the same id is replaced).",
        discussion: """
            FILE holds one JSON request (it may span lines), a JSON array of requests, or JSON \
            lines (one request a line; blank lines and # comments are skipped). - reads standard \
            input. All or nothing: when one request breaks a rule, none is added.

              echo '{"id":"water","content":{"title":"Drink"},"trigger":{"interval":{"seconds":3600,"repeats":true}}}' \\
                  | fencepost add -

            The keys of a request (the same in a config file's [[request]] tables, in TOML):

              id                 up to 64 bytes; the same id replaces the request
              content            title, body, sound (a pattern: default, chime, double, alarm, \
            none, or one of [patterns]), badge, userInfo, categoryIdentifier, threadIdentifier, \
            interruptionLevel (passive, active, timeSensitive, critical)
              trigger.calendar   match (year, month, day, hour, minute, second, weekday (1-7 or \
            "mon"…), weekdayOrdinal, weekOfMonth, weekOfYear, yearForWeekOfYear, dayOfYear), tz \
            (IANA name; none: the device zone), repeats, policy (nextTime, strict, \
            previousTimePreservingSmallerComponents, nextTimePreservingSmallerComponents), \
            repeatedTime (first, last), firstWeekday, minimumDaysInFirstWeek
              trigger.interval   seconds (at least 60 when repeating), repeats
              trigger.location   region (circle = {lat, lon, radius} in metres, or polygon = \
            [[lat, lon], …]), notifyOnEntry, notifyOnExit, repeats, dwell (seconds inside before it \
            reports: a dwell zone reports "dwell" instead of "enter"), cooldown (seconds)
              missed             "coalesce" (default), "skip" or {"late": SECONDS}
            """)

    @Argument(help: ArgumentHelp("The requests (JSON or JSON lines); - for standard input.", valueName: "file"))
    var file: String

    @Flag(help: "Print the agent's answer as JSON.")
    var json = false

    @OptionGroup var options: SocketOptions

    func run() throws {
        try runClient("add") { () throws(ClientFailure) in
            let items = try ClientInput.jsonValues(try ClientInput.read(file), path: file)
            guard !items.isEmpty else { throw ClientFailure(ClientFailure.dataError, "\(ClientInput.name(file)): no request") }
            try ClientInput.checkRequests(items, path: file)
            let result: JSONValue
            do throws(ClientFailure) {
                result = try ControlClient.call(options.path, "add", .object([("requests", .array(items.map(\.value)))]))
            } catch {
                throw ClientInput.locate(error, ["requests": items.map(\.line)], path: file)
            }
            if json { return try printJSON(result) }
            let shown = ClientText.printable(result)
            var text = "added \(ClientText.ids(shown["added"]).joined(separator: ", "))\n"
            for e in shown["evicted"]?.array ?? [] {
                text += "evicted \(e["id"]?.string ?? "?"): \(e["detail"]?.string ?? "")\n"
            }
            try writeStandardOutput(text)
        }
    }
}
