import FencepostJSON
import Foundation
import Testing
import FencepostTestSupport

/// `fencepost simulate` end to end through the built binary.
@Suite(.processes) struct SimulateTests {
    static let requests = """
        # a comment, then a blank line

        {"id":"fasting","content":{"title":"Glucose","body":"Check now","sound":"default","interruptionLevel":"active","userInfo":{"meal":"fasting"}},"trigger":{"calendar":{"match":{"hour":7,"minute":0},"tz":"Europe/Berlin","repeats":true}}}
        {"id":"gap","trigger":{"calendar":{"match":{"hour":2,"minute":30},"tz":"Europe/Berlin","repeats":true,"policy":"strict"}}}
        {"id":"break","trigger":{"interval":{"seconds":7200,"repeats":false}}}
        """

    func lines(_ out: String) throws -> [(t: String, id: String, event: String)] {
        try out.split(separator: "\n").map { line in
            let v = try JSONValue.parse(String(line))
            return (v["t"]!.string!, v["id"]!.string!, v["event"]!.string!)
        }
    }

    @Test func calendarAndIntervalAcrossSpringForward() throws {
        let folder = try ReplayTests.Folder()
        let file = try folder.write("r.jsonl", Self.requests)
        let r = try ChildProcess.run(["simulate", "--requests", file, "--start", "2026-03-28T00:00:00Z",
                                      "--end", "2026-03-31T00:00:00Z", "--tz", "Europe/Berlin", "--jsonl"])
        #expect(r.status == 0, "\(r.stderr)")
        let got = try lines(r.stdout)
        #expect(got.map(\.t) == got.map(\.t).sorted())
        #expect(got.filter { $0.id == "fasting" }.map(\.t) == ["2026-03-28T06:00:00Z", "2026-03-29T05:00:00Z", "2026-03-30T05:00:00Z"])
        // Strict: 02:30 does not exist on the 29th in Berlin, so that day has none.
        #expect(got.filter { $0.id == "gap" }.map(\.t) == ["2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z"])
        #expect(got.filter { $0.id == "break" }.map(\.t) == ["2026-03-28T02:00:00Z"])
        #expect(got.allSatisfy { $0.event == "delivered" })
    }

    @Test func capEvictionIsReported() throws {
        let folder = try ReplayTests.Folder()
        let file = try folder.write("r.jsonl", Self.requests)
        let r = try ChildProcess.run(["simulate", "--requests", file, "--start", "2026-03-28T00:00:00Z",
                                      "--end", "2026-03-28T12:00:00Z", "--pending-cap", "2", "--jsonl", "--tz", "UTC"])
        #expect(r.status == 0, "\(r.stderr)")
        let got = try lines(r.stdout)
        // Pending: fasting (06:00Z), gap (01:30Z), break (02:00Z): fasting fires last and goes.
        #expect(got.first.map { "\($0.id) \($0.event)" } == "fasting evicted")
        #expect(!got.contains { $0.id == "fasting" && $0.event == "delivered" })
    }

    /// `--delivered-cap` bounds what the simulation keeps, as the agent's cap does (the soak's
    /// month in one process uses it to see drift): the same deliveries, and a "pruned" outcome for
    /// each one dropped. Below 1 it is refused.
    @Test func deliveredCapKeepsTheEventsAndIsChecked() throws {
        let folder = try ReplayTests.Folder()
        let file = try folder.write("r.jsonl", Self.requests)
        let args = ["simulate", "--requests", file, "--start", "2026-03-27T00:00:00Z", "--end", "2026-04-02T00:00:00Z", "--jsonl", "--tz", "UTC"]
        let all = try ChildProcess.run(args)
        let capped = try ChildProcess.run(args + ["--delivered-cap", "1"])
        #expect(all.status == 0 && capped.status == 0, "\(all.stderr)\(capped.stderr)")
        let delivered = { (text: String) in text.split(separator: "\n").filter { $0.contains(#""event":"delivered""#) } }
        #expect(delivered(all.stdout).count >= 6)
        #expect(delivered(capped.stdout) == delivered(all.stdout))
        // What the cap drops is said, as the agent says it.
        #expect(capped.stdout.contains(#""event":"pruned""#) && capped.stdout.contains("more than 1 delivered"))
        #expect(!all.stdout.contains(#""event":"pruned""#))
        let zero = try ChildProcess.run(args + ["--delivered-cap", "0"])
        #expect(zero.status == 64 && zero.stderr.contains("--delivered-cap must be at least 1"), "\(zero.stderr)")
    }

    @Test func badLinesNameFileLineAndRule() throws {
        let folder = try ReplayTests.Folder()
        let cases: [(String, String)] = [
            ("{\"id\":\"a\",\"trigger\":{\"interval\":{\"seconds\":10,\"repeats\":true}}}", "r.jsonl:2: a repeating interval must be at least 60 s, got 10 s [rule: repeatingInterval]"),
            ("{\"id\":\"a\",\"trigger\":", "r.jsonl:2: not JSON"),
            ("{\"id\":\"a\",\"trigger\":{\"location\":{\"region\":{\"circle\":{\"lat\":1,\"lon\":2}}}}}", "has no \"radius\" (metres) [rule: radius]"),
            ("{\"id\":\"a\",\"content\":{\"categoryIdentifier\":\"X\"},\"trigger\":{\"interval\":{\"seconds\":10}}}", "[rule: unknownCategory]"),
        ]
        for (line, message) in cases {
            let file = try folder.write("r.jsonl", "# first line\n" + line + "\n")
            let r = try ChildProcess.run(["simulate", "--requests", file, "--start", "2026-03-28T00:00:00Z", "--end", "2026-03-29T00:00:00Z"])
            #expect(r.status == 65)
            #expect(r.stderr.contains(message), "\(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
        let missing = try ChildProcess.run(["simulate", "--requests", folder.path("none.jsonl"), "--start", "2026-03-28T00:00:00Z", "--end", "2026-03-29T00:00:00Z"])
        #expect(missing.status == 66)
    }

    @Test func locationTriggerFromARecordedDrive() throws {
        let folder = try ReplayTests.Folder()
        let log = try folder.write("drive.nmea", ReplayTests.drive())
        // The replay test's depot: a 100 m circle 600 m east of the start, crossed from about 50 s to 70 s.
        let lon = 7.0 + 600 / ReplayTests.metresPerDegreeLon
        let file = try folder.write("r.jsonl", """
            {"id":"depot","trigger":{"location":{"region":{"circle":{"lat":51.0,"lon":\(lon),"radius":100}},"notifyOnEntry":true,"notifyOnExit":true,"repeats":true}}}
            """)
        let r = try ChildProcess.run(["simulate", "--requests", file, "--gps", log, "--jsonl"])
        #expect(r.status == 0, "\(r.stderr)")
        let got = try lines(r.stdout)
        #expect(got.map(\.id) == ["depot", "depot"])
        let out = r.stdout.split(separator: "\n").map(String.init)
        #expect(out.first?.contains("\"regionEvent\":\"enter\"") == true)
        #expect(out.last?.contains("\"regionEvent\":\"exit\"") == true)
        #expect(got.first.map { $0.t >= "2011-09-15T05:12:50Z" && $0.t <= "2011-09-15T05:12:53Z" } == true, "\(got)")
    }
}
