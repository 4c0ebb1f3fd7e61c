import FencepostTestSupport
import Foundation
import Testing

/// After work the agent gives memory back once it has been idle 10 s (IdleRelease): the code a
/// delivery ran (the state write, the hook, the pattern) leaves the page table again.
// No `.timeLimit`: Swift Testing counts it from the test's start, including the time it waits for
// one of the cooperative pool's two threads while long synchronous tests (a million zones) hold
// them; in a full run that was minutes, and the limit failed tests that then passed. Every wait
// inside is bounded instead (polls with deadlines, ChildProcess.run's time limit).
@Suite(.serialized, .processes) struct IdleMemoryTests {
    @Test func aDeliveryIsFollowedByAReleaseOnceIdle() throws {
        let d = try AgentProcess()
        try d.writeConfig("[log]\nlevel = \"debug\"\n\n" + DaemonTests.gpio)
        try d.start(agent: true)
        defer { d.signal(SIGKILL); _ = d.waitForExit(timeout: 10) }
        #expect(d.waitForLog("start-up memory released"), "log:\n\(d.stderr)")
        let pid = try #require(d.process?.pid)
        let binary = try #require(ChildProcess.agentBinary).resolvingSymlinksInPath().path
        let add = try d.cli(["add", "-"], input: #"{"id":"soon","content":{"title":"Soon"},"trigger":{"interval":{"seconds":1}}}"# + "\n")
        #expect(add.status == 0, "\(add.stderr)")
        #expect(d.waitForLog("delivered soon", timeout: 20), "log:\n\(d.stderr)")
        let afterDelivery = Self.codeKiB(pid: pid, binary: binary)
        #expect(d.waitForLog("idle 10 s after work", timeout: 30), "no release after the delivery; log:\n\(d.stderr)")
        usleep(200_000)
        let afterRelease = Self.codeKiB(pid: pid, binary: binary)
        #expect(afterRelease < afterDelivery, "the agent's code in the page table: \(afterDelivery) kB after the delivery, \(afterRelease) kB after the release")
        let releases = d.stderr.components(separatedBy: "idle 10 s after work").count - 1
        #expect(releases == 1, "one delivery, \(releases) releases; log:\n\(d.stderr)")
    }

    /// The resident kB of `binary`'s executable mappings in process `pid` (/proc/PID/smaps).
    static func codeKiB(pid: Int32, binary: String) -> Int {
        guard let smaps = try? String(contentsOfFile: "/proc/\(pid)/smaps", encoding: .utf8) else { return -1 }
        var total = 0, inCode = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), !first.hasSuffix(":"), fields.count >= 5 {
                inCode = fields[1] == "r-xp" && fields.count >= 6 && fields[5...].joined(separator: " ") == binary
            } else if inCode, fields.first == "Rss:", fields.count >= 2 {
                total += Int(fields[1]) ?? 0
            }
        }
        return total
    }
}
