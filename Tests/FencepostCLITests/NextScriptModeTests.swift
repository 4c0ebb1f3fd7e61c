import Foundation
import Testing
import FencepostTestSupport

/// `fencepost next --jsonl`, end to end through a real child process.
@Suite(.processes) struct NextScriptModeTests {
    @Test func answersTheExampleExactly() throws {
        let line = #"{"after":"2026-03-08T06:59:00Z","tz":"America/New_York","match":{"hour":2,"minute":30},"policy":"nextTime","repeatedTime":"first","count":3}"#
        let out = try ChildProcess.run(["next", "--jsonl"], input: line + "\n")
        #expect(out.status == 0)
        // 02:30 does not exist on 8 March 2026 in New York: nextTime gives the end of the gap.
        #expect(out.stdout == #"{"next":["2026-03-08T07:00:00Z","2026-03-09T06:30:00Z","2026-03-10T06:30:00Z"]}"# + "\n")
        #expect(out.stderr == "")
    }

    @Test func defaultsAndOneFire() throws {
        let out = try ChildProcess.run(
            ["next", "--jsonl"], input: #"{"after":"2026-03-08T06:59:00Z","tz":"America/New_York","match":{"hour":2,"minute":30}}"#)
        #expect(out.stdout == #"{"next":["2026-03-08T07:00:00Z"]}"# + "\n", "last line without newline is answered")
    }

    @Test func badLinesGetErrorsAndTheRunGoesOn() throws {
        let good = #"{"after":"2026-01-01T00:00:00Z","tz":"UTC","match":{"hour":7}}"#
        let lines = [
            good,
            "not json",
            #"{"after":"2026-01-01T00:00:00Z","match":{"hour":7},"colour":"red"}"#,
            #"{"match":{"hour":7,"minutes":3}}"#,
            #"{"match":{"hour":"seven"}}"#,
            #"{"tz":"Atlantis/Capital","match":{"hour":7}}"#,
            #"{"tz":"UTC","match":{"hour":24}}"#,
            #"{"tz":"UTC","match":{"hour":1},"count":10001}"#,
            #"{"tz":"UTC","match":{"hour":1},"policy":"sometimes"}"#,
            "[1,2]",
            "",
            good,
        ]
        let out = try ChildProcess.run(["next", "--jsonl"], input: lines.joined(separator: "\n") + "\n")
        #expect(out.status == 0)
        let answers = out.stdoutLines
        try #require(answers.count == lines.count)
        #expect(answers[0] == #"{"next":["2026-01-01T07:00:00Z"]}"#)
        #expect(answers[1].hasPrefix(#"{"error":"not JSON: "#))
        #expect(answers[2].contains(#"unknown key \"colour\""#))
        #expect(answers[3].contains(#"unknown key \"match.minutes\""#))
        #expect(answers[4].contains(#"\"match.hour\" must be an integer"#))
        #expect(answers[5].contains("Atlantis/Capital"))
        #expect(answers[6].contains("hour") && answers[6].contains("24"))
        #expect(answers[7].contains("count"))
        #expect(answers[8].contains("sometimes"))
        #expect(answers[9].contains("expected a JSON object"))
        #expect(answers[10] == #"{"error":"empty line"}"#)
        #expect(answers[11] == answers[0])
        for a in answers[1...10] { #expect(a.hasPrefix(#"{"error":""#) && a.hasSuffix("}"), "\(a)") }
    }

    @Test func orderIsPreservedOver10000Lines() throws {
        // Line k asks for the next minute (k mod 60) after base + k hours (+ k seconds), in UTC;
        // every 7th line is broken. The expected answer is computed here independently.
        let base: Int64 = 1_767_225_600  // 2026-01-01T00:00:00Z
        var input = ""
        var expected: [String] = []
        for k in 0..<10_000 {
            if k % 7 == 3 {
                input += #"{"tz":"UTC","match":{"minute":"x\#(k)"}}"# + "\n"
                expected.append("error")
                continue
            }
            let after = base + Int64(k) * 3600 + Int64(k % 60)
            let minute = k % 60
            var fire = after - after % 3600 + Int64(minute) * 60
            if fire <= after { fire += 3600 }
            input += #"{"after":"\#(iso(after))","tz":"UTC","match":{"minute":\#(minute)}}"# + "\n"
            expected.append(#"{"next":["\#(iso(fire))"]}"#)
        }
        let out = try ChildProcess.run(["next", "--jsonl"], input: input)
        #expect(out.status == 0)
        let answers = out.stdoutLines
        try #require(answers.count == expected.count)
        var mismatches = 0
        for (k, (a, e)) in zip(answers, expected).enumerated() {
            let ok = e == "error" ? a.hasPrefix(#"{"error":"#) : a == e
            if !ok {
                mismatches += 1
                if mismatches <= 5 { Issue.record("line \(k): got \(a), expected \(e)") }
            }
        }
        #expect(mismatches == 0)
    }

    @Test func offsetsFractionsAndCRLF() throws {
        let input = [
            #"{"after":"2026-03-08T01:59:00.999-05:00","tz":"America/New_York","match":{"hour":2,"minute":30}}"#,
            #"{"after":"2026-03-08T07:59:00+01:00","tz":"UTC","match":{"minute":0}}"#,
        ].joined(separator: "\r\n") + "\r\n"
        let out = try ChildProcess.run(["next", "--jsonl"], input: input)
        #expect(out.stdoutLines == [#"{"next":["2026-03-08T07:00:00Z"]}"#, #"{"next":["2026-03-08T07:00:00Z"]}"#])
    }

    @Test func deviceZoneComesFromTZ() throws {
        let line = #"{"after":"2026-07-01T00:00:00Z","match":{"hour":9}}"# + "\n"
        let berlin = try ChildProcess.run(["next", "--jsonl"], input: line, environment: ["TZ": "Europe/Berlin"])
        #expect(berlin.stdout == #"{"next":["2026-07-01T07:00:00Z"]}"# + "\n")
        let utc = try ChildProcess.run(["next", "--jsonl"], input: line, environment: ["TZ": "UTC"])
        #expect(utc.stdout == #"{"next":["2026-07-01T09:00:00Z"]}"# + "\n")
    }

    @Test func noMoreFires() throws {
        let out = try ChildProcess.run(
            ["next", "--jsonl"], input: #"{"after":"2026-01-01T00:00:00Z","tz":"UTC","match":{"year":2025,"hour":1}}"# + "\n"
                + #"{"after":"2026-12-31T21:00:00Z","tz":"UTC","match":{"year":2026,"month":12,"day":31,"hour":22},"count":5}"# + "\n")
        #expect(out.stdoutLines == [#"{"next":[]}"#, #"{"next":["2026-12-31T22:00:00Z"]}"#])
    }

    @Test func jsonlRefusesOtherOptions() throws {
        let out = try ChildProcess.run(["next", "--jsonl", "--hour", "3"])
        #expect(out.status == 64)
    }
}

func iso(_ seconds: Int64) -> String {
    let date = Date(timeIntervalSince1970: TimeInterval(seconds))
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
    func two(_ v: Int?) -> String { String(format: "%02d", v!) }
    return "\(c.year!)-\(two(c.month))-\(two(c.day))T\(two(c.hour)):\(two(c.minute)):\(two(c.second))Z"
}
