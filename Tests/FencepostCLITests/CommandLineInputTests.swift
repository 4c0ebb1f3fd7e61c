import Foundation
import Testing

/// The command line keeps what was typed: a repeated single-value option is refused by name, and
/// a negative number where a number is expected is read as a number. End to end through the binary.
@Suite struct CommandLineInputTests {
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
}
