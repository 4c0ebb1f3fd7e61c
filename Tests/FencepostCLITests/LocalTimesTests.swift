import FencepostJSON
import CivilTime
import FencepostLinux
import FencepostTestSupport
import Foundation
import Testing

/// Times people read: `pending` and `delivered` show the local time in the device zone next to
/// UTC and the "in 3h" form; `next` names weekdays and months; `next --json` answers one question
/// with one object.
@Suite(.serialized, .processes) struct LocalTimesTests {
    /// `Tue 2026-11-24 08:30:00` for `seconds` in `zone`, by Foundation (an independent oracle).
    static func foundationLocal(_ seconds: Int64, _ zone: String) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: zone)
        f.dateFormat = "EEE yyyy-MM-dd HH:mm:ss"
        return f.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    func run(_ agent: TestAgent, _ args: [String], tz: String = "UTC") throws -> ChildProcess.Output {
        try ChildProcess.run(args + ["--socket", agent.socket], environment: ["TZ": tz])
    }

    @Test(arguments: ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe"])
    func pendingAndDeliveredShowLocalTimeAndHowSoon(zone: String) throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        let add = try ChildProcess.run(["add", "-", "--socket", agent.socket], input: """
            {"id":"water","content":{"title":"Drink"},"trigger":{"interval":{"seconds":10800,"repeats":true}}}
            {"id":"tea","content":{"title":"Tea"},"trigger":{"interval":{"seconds":60}}}
            """)
        #expect(add.status == 0, "\(add.stderr)")
        let fire = agent.withCenter { _ in agent.wall } + 10800
        // --zone, whatever the CLI's own TZ.
        for out in [try run(agent, ["pending", "--zone", zone]), try run(agent, ["pending", "--zone", zone], tz: "Asia/Kolkata")] {
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdoutLines.first?.contains("LOCAL (\(zone))") == true, "\(out.stdout)")
            let row = try #require(out.stdoutLines.first { $0.hasPrefix("water") })
            #expect(row.contains(WallInstant(secondsSinceEpoch: fire).description), "\(row)")
            #expect(row.contains(Self.foundationLocal(fire, zone)), "\(row) lacks \(Self.foundationLocal(fire, zone))")
            // The agent's clock is the CLI's here (within a second or two): "in 2h 59min" or "in 3h 0min".
            #expect(row.contains(" in 2h 59min") || row.contains(" in 3h 0min"), "\(row)")
        }
        agent.advance(61)
        let delivered = try run(agent, ["delivered", "--zone", zone])
        #expect(delivered.stdoutLines.first?.contains("LOCAL (\(zone))") == true, "\(delivered.stdout)")
        let row = try #require(delivered.stdoutLines.dropFirst().first)
        let at = agent.withCenter { _ in agent.wall }
        #expect(row.contains(Self.foundationLocal(at, zone)) || row.contains(Self.foundationLocal(at - 1, zone)), "\(row)")
        let bad = try run(agent, ["pending", "--zone", "Europe/Atlantis"])
        #expect(bad.status == 64 && bad.stderr.contains("Europe/Atlantis"), "\(bad.stderr)")
    }

    /// Without --zone, local times are in the agent's device zone (its `time_zone`), in which its
    /// floating calendar triggers fire, not in the CLI's TZ: a real agent in Asia/Tokyo, the CLI in
    /// New York, a floating 09:00 trigger shows as 09:00 JST.
    @Test func localTimesAreInTheAgentsZone() throws {
        let d = try AgentProcess()
        d.timeZone = "Asia/Tokyo"
        try d.writeConfig(DaemonTests.gpio)
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        func cli(_ args: [String], input: String = "") throws -> ChildProcess.Output {
            try ChildProcess.run(args + ["--socket", d.socketPath], input: input, environment: ["TZ": "America/New_York"], timeLimit: 60)
        }
        let add = try cli(["add", "-"], input: """
            {"id":"nine","content":{"title":"Nine"},"trigger":{"calendar":{"match":{"hour":9,"minute":0},"repeats":true}}}
            {"id":"soon","content":{"title":"Soon"},"trigger":{"interval":{"seconds":1}}}
            """)
        #expect(add.status == 0, "\(add.stderr)")
        let pending = try cli(["pending"])
        #expect(pending.status == 0, "\(pending.stderr)")
        #expect(pending.stdoutLines.first?.contains("LOCAL (Asia/Tokyo)") == true, "\(pending.stdout)")
        let row = try #require(pending.stdoutLines.first { $0.hasPrefix("nine") })
        #expect(row.contains(" 09:00:00 JST"), "\(row)")
        #expect(d.waitForLog("delivered soon"), "log:\n\(d.stderr)")
        let delivered = try cli(["delivered"])
        #expect(delivered.stdoutLines.first?.contains("LOCAL (Asia/Tokyo)") == true, "\(delivered.stdout)")
        #expect(delivered.stdoutLines.dropFirst().first?.contains(" JST ") == true, "\(delivered.stdout)")
    }

    @Test func nextNamesWeekdaysAndMonths() throws {
        let out = try ChildProcess.run(["next", "--tz", "UTC", "--after", "2026-01-01T00:00:00Z", "--month", "3", "--weekday", "mon", "--hour", "8"])
        #expect(out.status == 0, "\(out.stderr)")
        let trigger = try #require(out.stdoutLines.first { $0.contains("Trigger:") })
        #expect(trigger.hasSuffix("Trigger: Mar hour=8 Mon"), "\(trigger)")
        #expect(!trigger.contains("weekday=") && !trigger.contains("month="), "\(trigger)")
    }

    @Test func nextJSONAnswersOneQuestionWithOneObject() throws {
        let out = try ChildProcess.run(["next", "--tz", "America/New_York", "--after", "2026-03-08T06:59:00Z",
                                        "--hour", "2", "--minute", "30", "--count", "3", "--json"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdoutLines.filter { !$0.isEmpty }.count == 1, "\(out.stdout)")
        let v = try JSONValue.parse(out.stdout)
        #expect(v["zone"] == "America/New_York")
        #expect(v["after"] == "2026-03-08T06:59:00Z")
        #expect(v["trigger"]?["hour"]?.int64 == 2 && v["trigger"]?["minute"]?.int64 == 30)
        // The same fires as the script mode (DST gap on 8 March: 02:30 does not exist → 03:00).
        #expect(v["next"] == ["2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"], "\(v)")
        let both = try ChildProcess.run(["next", "--hour", "2", "--json", "--jsonl"])
        #expect(both.status == 64)
    }
}
