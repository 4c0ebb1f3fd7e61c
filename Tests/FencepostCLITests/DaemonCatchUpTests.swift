import FencepostJSON
import FencepostTestSupport
import Foundation
import Testing

/// The agent held off the CPU (SIGSTOP) while hundreds of fires fall due, then let go (SIGCONT):
/// it catches up a few fires a loop turn, so no turn's own work (CPU time) passes 50 ms, and
/// every fire is delivered once, in due order, and it logs how late it woke.
@Suite(.serialized, .processes) struct DaemonCatchUpTests {
    static let count = 500

    @Test func aStoppedAgentCatchesUpWithoutALongTurn() throws {
        let d = try AgentProcess()
        try d.writeConfig("[engine]\npending_cap = 2000\ndelivered_cap = 2000\n")
        try d.start(agent: true)
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")

        // One-shot requests due 1.5 … 4 s after their add, 50 to a control request (each add one
        // short turn); due order is index order (later adds, later offsets).
        for start in stride(from: 0, to: Self.count, by: 50) {
            let lines = (start ..< min(start + 50, Self.count)).map { i in
                #"{"id":"late-\#(i)","content":{"title":"T\#(i)","interruptionLevel":"passive"},"trigger":{"interval":{"seconds":\#(1.5 + Double(i) * 0.005)}}}"#
            }.joined(separator: "\n") + "\n"
            let out = try d.cli(["add", "-"], input: lines)
            try #require(out.status == 0, "\(out.stderr)")
        }
        // Held off the CPU until every fire is due (as a host that starves the agent for seconds).
        // The first fire is due no later than 1.5 s from now; the agent is left to finish the last
        // add's turn, so it is stopped while it waits in epoll_wait.
        let firstDue = Date().timeIntervalSince1970 + 1.5
        usleep(200_000)
        d.signal(SIGSTOP)
        let stopped = Date().timeIntervalSince1970
        usleep(5_000_000)
        d.signal(SIGCONT)
        // It wakes late by the stop past the first fire's deadline, and says so: not a slow turn.
        let woke = d.waitForLog("after a timer was due")
        let lateLine = d.stderr.split(separator: "\n").first { $0.contains("after a timer was due") }.map(String.init) ?? ""
        let lateMs = lateLine.range(of: "woke ").flatMap { Double(lateLine[$0.upperBound...].prefix { $0 != " " }) }
        let leastMs = (stopped + 5 - max(firstDue, stopped)) * 1000 - 100
        #expect(woke && (lateMs ?? 0) >= leastMs && (lateMs ?? .infinity) <= 6000,
                "a wake \(lateMs.map { "\($0) ms" } ?? "not logged") late, expected \(Int(leastMs)) … 6000 ms; log:\n\(d.stderr.suffix(2000))")

        var delivered: [JSONValue] = []
        let all = d.wait(timeout: 60) {
            delivered = (try? JSONValue.parse((try? d.cli(["delivered", "--json"]).stdout) ?? ""))?.array ?? []
            return delivered.count >= Self.count
        }
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 20)?.status == 0, "log:\n\(d.stderr.suffix(2000))")
        #expect(all, "\(delivered.count) of \(Self.count) delivered; log:\n\(d.stderr.suffix(2000))")

        let requests = delivered.compactMap { $0["request"]?.string }
        #expect(requests.count == Self.count && Set(requests).count == Self.count, "\(requests.count) deliveries, \(Set(requests).count) requests")
        let order = requests.compactMap { Int($0.dropFirst("late-".count)) }
        #expect(order == order.sorted(), "not in due order: \(order.prefix(40))")

        let summary = try #require(LoopTurnSummary(log: d.stderr), "no summary of the loop turns in the log:\n\(d.stderr.suffix(2000))")
        print("catch-up after SIGSTOP, \(Self.count) fires: \(summary.line)")
        #expect(summary.overOnTheCPU == 0, "loop turns over 50 ms of the agent's own work: \(summary.line)\n\(d.slowTurns.joined(separator: "\n"))")
    }
}
