import FencepostJSON
import FencepostLinux
import Foundation
import SeededRandom
import Testing
import FencepostTestSupport

/// Crash safety: `fencepost simulate --state` (engine + SQLite store, committing each step before
/// printing it) is SIGKILLed at 200 random instants of a busy schedule and started again each time;
/// every fire must be accounted for exactly once and none printed twice.
///
/// Guarantee shown: each fire is recorded exactly once (delivered, late, coalesced into one, or
/// missed — by its request's policy); the printed line (the outward signal) is at most once.
@Suite(.serialized, .processes) struct CrashSafetyTests {
    static let start = "2026-01-01T00:00:00Z", end = "2026-01-01T12:00:00Z"
    static let span: Int64 = 12 * 3600

    static var requests: String {
        var lines = [#"{"categories":[{"id":"R","actions":[{"id":"snooze","title":"Later","snoozeSeconds":120}]}]}"#]
        let policies = [#""coalesce""#, #""skip""#, #"{"late":120}"#]
        for (k, p) in policies.enumerated() {
            lines.append(#"{"id":"minute-\#(k)","content":{"title":"m","categoryIdentifier":"R"},"trigger":{"calendar":{"match":{"second":\#(k * 20)},"tz":"Europe/Berlin","repeats":true}},"missed":\#(p)}"#)
        }
        for k in 0 ..< 12 {
            lines.append(#"{"id":"every-\#(60 + k * 13)","trigger":{"interval":{"seconds":\#(60 + k * 13),"repeats":true}},"missed":\#(policies[k % 3])}"#)
        }
        for k in 1 ... 6 {
            lines.append(#"{"id":"once-\#(k)","trigger":{"interval":{"seconds":\#(k * 1800),"repeats":false}}}"#)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func killedAt200RandomPointsLosesNothingAndRepeatsNothing() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["FENCEPOST_CRASH_SEED"] ?? "") ?? 0xC0A5_4001
        var rng = SplitMix64(seed: seed)
        let folder = try ReplayTests.Folder()
        let requestFile = try folder.write("requests.jsonl", Self.requests)
        let state = folder.path("state.sqlite")
        let arguments = ["simulate", "--requests", requestFile, "--start", Self.start, "--end", Self.end, "--tz", "UTC",
                         "--state", state, "--resume-gap", "20", "--jsonl"]
        guard let binary = ChildProcess.binary else { throw ChildProcess.NotFound() }

        var printed: [String] = []
        var killsLanded = 0, attempts = 0
        func runOnce(killAfterMicroseconds: UInt32?) throws -> Bool {
            let outURL = folder.url.appendingPathComponent("out-\(attempts)")
            FileManager.default.createFile(atPath: outURL.path, contents: nil)
            let handle = try FileHandle(forWritingTo: outURL)
            let p = Process()
            p.executableURL = binary
            p.arguments = arguments
            p.standardOutput = handle
            p.standardError = FileHandle.nullDevice
            try p.run()
            if let delay = killAfterMicroseconds {
                usleep(delay)
                kill(p.processIdentifier, SIGKILL)
            }
            p.waitUntilExit()
            try handle.close()
            let text = String(decoding: try Data(contentsOf: outURL), as: UTF8.self)
            for line in text.split(separator: "\n") {
                // A line cut by the kill is not a delivery that was printed.
                guard let v = try? JSONValue.parse(String(line)), let id = v["delivery"]?.string else { continue }
                printed.append(id)
            }
            attempts += 1
            return p.terminationReason == .uncaughtSignal
        }
        while killsLanded < 200 && attempts < 600 {
            if try runOnce(killAfterMicroseconds: UInt32(5_000 + rng.next() % 60_000)) { killsLanded += 1 }
        }
        #expect(killsLanded >= 200, "seed \(seed): only \(killsLanded) kills landed in \(attempts) runs")
        _ = try runOnce(killAfterMicroseconds: nil)     // to the end

        // Printed at most once.
        var seen: Set<String> = []
        for id in printed { #expect(seen.insert(id).inserted, "seed \(seed): delivery \(id) printed twice") }

        // Every fire accounted for exactly once, from the state file.
        let store = try NotificationStore(path: state)
        let snapshot = try store.load()
        let outcomes = try store.outcomes(limit: 100_000)
        var accounted: [String: Int64] = [:]
        for d in snapshot.deliveries {
            let v = try JSONValue.parse(d.json)
            accounted[d.requestID, default: 0] += d.outcome == "coalesced" ? (v["count"]?.int64 ?? 0) : 1
        }
        for o in outcomes where o.event == "missed" {
            accounted[o.requestID, default: 0] += try JSONValue.parse(o.detail)["count"]?.int64 ?? 0
        }
        for id in printed { #expect(snapshot.deliveries.contains { $0.deliveryID == id }, "printed \(id) is not in the state file") }
        let pending = Dictionary(uniqueKeysWithValues: snapshot.requests.map { ($0.id, $0.state) })
        for k in 0 ..< 3 {
            let id = "minute-\(k)"
            #expect(accounted[id] == Self.span / 60, "seed \(seed): \(id) accounted \(accounted[id] ?? 0) of \(Self.span / 60) fires")
            let fires = try JSONValue.parse(try #require(pending[id], "\(id) lost"))["fires"]?.int64
            #expect(fires == Self.span / 60)
        }
        for k in 0 ..< 12 {
            let seconds = Int64(60 + k * 13), id = "every-\(seconds)"
            #expect(accounted[id] == Self.span / seconds, "seed \(seed): \(id) accounted \(accounted[id] ?? 0) of \(Self.span / seconds) fires")
            #expect(pending[id] != nil, "\(id) lost")
        }
        for k in 1 ... 6 {
            #expect(accounted["once-\(k)"] == 1, "seed \(seed): once-\(k) accounted \(accounted["once-\(k)"] ?? 0)")
            #expect(pending["once-\(k)"] == nil)
        }
        #expect(snapshot.categories.map(\.id) == ["R"])
        print("crash safety: seed \(seed), \(killsLanded) kills landed in \(attempts) runs, \(printed.count) deliveries printed, \(snapshot.deliveries.count) recorded")
    }
}
