import Testing
import FencepostTestSupport

/// `fencepost next` for people, end to end through a real child process.
@Suite(.processes) struct NextHumanModeTests {
    @Test func berlinSpringForward() throws {
        let out = try ChildProcess.run([
            "next", "--tz", "Europe/Berlin", "--after", "2026-03-28T00:00:00Z", "--count", "3", "--hour", "2", "--minute", "30",
        ])
        #expect(out.status == 0, "\(out.stderr)")
        let lines = out.stdoutLines
        #expect(lines.contains { $0.contains("Europe/Berlin") })
        #expect(lines.contains { $0.contains("Sat 2026-03-28 02:30:00 CET +01:00 = 2026-03-28T01:30:00Z (in 1h 30min)") })
        // 29 March 2026 has no 02:30 in Berlin: nextTime fires at the end of the gap.
        #expect(lines.contains { $0.contains("Sun 2026-03-29 03:00:00 CEST +02:00 = 2026-03-29T01:00:00Z (in 1d 1h)") })
        #expect(lines.contains { $0.contains("Mon 2026-03-30 02:30:00 CEST +02:00 = 2026-03-30T00:30:00Z (in 2d 30min)") })
    }

    @Test func weekdayNamesAndOffsets() throws {
        let byName = try ChildProcess.run(["next", "--tz", "UTC", "--after", "2026-01-01T01:00:00+01:00", "--weekday", "Monday", "--hour", "7"])
        let byNumber = try ChildProcess.run(["next", "--tz", "UTC", "--after", "2026-01-01T00:00:00Z", "--weekday", "2", "--hour", "7"])
        #expect(byName.status == 0)
        #expect(byName.stdout.contains("Mon 2026-01-05 07:00:00 UTC +00:00 = 2026-01-05T07:00:00Z (in 4d 7h)"))
        #expect(byNumber.stdout.contains("2026-01-05T07:00:00Z"))
    }

    @Test func noNextFireIsSaidClearly() throws {
        let out = try ChildProcess.run(["next", "--tz", "UTC", "--after", "2026-01-01T00:00:00Z", "--year", "2020"])
        #expect(out.status == 0)
        #expect(out.stdout.contains("never fires after 2026-01-01T00:00:00Z"))
    }

    @Test func exitCodes() throws {
        #expect(try ChildProcess.run(["next", "--hour", "1", "--after", "yesterday"]).status == 64)
        #expect(try ChildProcess.run(["next", "--hour", "1", "--weekday", "someday"]).status == 64)
        #expect(try ChildProcess.run(["next", "--hour", "1", "--count", "0"]).status == 64)
        #expect(try ChildProcess.run(["next", "--hour", "1", "--policy", "never"]).status == 64)
        #expect(try ChildProcess.run(["next"]).status == 64)
        let zone = try ChildProcess.run(["next", "--hour", "1", "--tz", "Atlantis/Capital"])
        #expect(zone.status == 65)
        #expect(zone.stderr.contains("Atlantis/Capital"))
        let range = try ChildProcess.run(["next", "--hour", "24", "--tz", "UTC"])
        #expect(range.status == 65)
        #expect(range.stderr.contains("hour"))
    }

    @Test func helpMentionsScriptMode() throws {
        let next = try ChildProcess.run(["next", "--help"])
        #expect(next.status == 0)
        #expect(next.stdout.contains("--jsonl"))
        #expect(next.stdout.contains(#"{"next":["#))
        let root = try ChildProcess.run(["--help"])
        #expect(root.stdout.contains("jsonl"))
        #expect(root.stdout.contains("next"))
    }
}
