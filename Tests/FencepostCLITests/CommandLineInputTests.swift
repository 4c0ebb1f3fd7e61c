import Foundation
import Testing
import FencepostTestSupport
@testable import fencepost

/// The command line keeps what was typed: a repeated single-value option is refused by name, and
/// a negative number where a number is expected is read as a number. End to end through the binary.
@Suite(.processes) struct CommandLineInputTests {
    @Test func aRepeatedSingleValueOptionIsRefusedNamingIt() throws {
        let out = try ChildProcess.run(["next", "--tz", "UTC", "--tz", "Europe/Berlin", "--hour", "7", "--after", "2026-01-01T00:00:00Z"])
        #expect(out.status == 64, "\(out.stdout)")
        #expect(out.stderr.contains("--tz given more than once"), "\(out.stderr)")
        let count = try ChildProcess.run(["next", "--tz", "UTC", "--hour", "7", "--count", "2", "--count=3"])
        #expect(count.status == 64)
        #expect(count.stderr.contains("--count given more than once"), "\(count.stderr)")
    }

    @Test func negativeNumbersAreNumbers() throws {
        // --day -1 reaches the command (which once answered "Missing value for '--day'").
        let day = try ChildProcess.run(["next", "--tz", "UTC", "--after", "2026-01-01T00:00:00Z", "--day", "-1"])
        #expect(!day.stderr.contains("Missing value"), "\(day.stderr)")
        // A point in the southern and western hemispheres: read as numbers, then the set file is missing.
        let near = try ChildProcess.run(["zones", "near", "-29.3", "-27.5", "--set", "/nonexistent/zones"])
        #expect(!near.stderr.contains("Missing expected argument"), "\(near.stderr)")
        #expect(near.stderr.contains("/nonexistent/zones"), "\(near.stderr)")
        let bad = try ChildProcess.run(["zones", "near", "-29.3", "south", "--set", "/nonexistent/zones"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("longitude \"south\" is not a number"), "\(bad.stderr)")
    }

    /// Every option ArgumentParser reads as a list is repeatable here, and nothing else: a list
    /// option left out of the set was refused when given twice (`bench --filter a --filter b`).
    @Test func theRepeatableOptionsAreArgumentParsersListOptions() throws {
        let dump = try ChildProcess.run(["--experimental-dump-help"])
        #expect(dump.status == 0, "\(dump.stderr)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var lists = Set<String>()
        func walk(_ command: [String: Any]) {
            for a in command["arguments"] as? [[String: Any]] ?? [] where a["kind"] as? String == "option" && a["isRepeating"] as? Bool == true {
                if let name = (a["preferredName"] as? [String: Any])?["name"] as? String { lists.insert(name) }
            }
            for s in command["subcommands"] as? [[String: Any]] ?? [] { walk(s) }
        }
        walk(try #require(root["command"] as? [String: Any]))
        #expect(!lists.isEmpty)
        #expect(lists == CommandLineInput.repeatable)
        let bench = try ChildProcess.run(["bench", "--list", "--filter", "next", "--filter", "nmea"])
        #expect(!bench.stderr.contains("given more than once"), "\(bench.stderr)")
    }
}
