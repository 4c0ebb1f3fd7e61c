import FencepostLinux
import FencepostTestSupport
import Foundation
import Testing

/// The agent as a process against lost state, lost configured requests and a backlog of reminders.
@Suite(.processes) struct RoadStateTests {
    /// A config whose state file lives in its own subfolder (so that the folder can be removed).
    static func stateInSubfolder(_ d: AgentProcess) throws -> (config: String, folder: String) {
        let folder = d.dir.appendingPathComponent("state").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return ("state = \"\(folder)/state.sqlite\"\nclock_trust = \"always\"\ntime_zone = \"UTC\"\n" + DaemonTests.gpio
                + "\n[socket]\npath = \"\(d.socketPath)\"\nmode = 0o600\n", folder)
    }

    /// The state folder removed while the agent runs: the next change is not acknowledged, the agent
    /// stops with an error naming the state file; at the next start the missing folder is an error;
    /// a marker without its database is an error too (not a fresh, empty start).
    @Test func stateFolderRemovedWhileRunning() throws {
        let d = try AgentProcess()
        let (config, folder) = try Self.stateInSubfolder(d)
        try Data(config.utf8).write(to: URL(fileURLWithPath: d.configPath))
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let add = try d.cli(["add", "-"], input: #"{"id":"a","trigger":{"interval":{"seconds":3600}}}"#)
        #expect(add.status == 0, "\(add.stderr)")
        try FileManager.default.removeItem(atPath: folder)
        let lost = try d.cli(["add", "-"], input: #"{"id":"b","trigger":{"interval":{"seconds":3600}}}"#)
        #expect(lost.status != 0, "a change into a removed file was acknowledged: \(lost.stdout)")
        #expect(lost.stderr.contains("not done: the state could not be made durable"), "\(lost.stderr)")
        let exit = d.waitForExit(timeout: 15)
        #expect(exit != nil && exit?.status != 0, "log:\n\(d.stderr)")
        #expect(d.stderr.contains("state.sqlite") && d.stderr.contains("removed"), "log:\n\(d.stderr)")

        // Start again: the folder is gone, the marker beside it says there was state.
        try d.start()
        let noFolder = d.waitForExit(timeout: 15)
        #expect(noFolder != nil && noFolder?.status != 0, "log:\n\(d.stderr)")
        #expect(d.stderr.contains("marker") && d.stderr.contains("state.sqlite"), "log:\n\(d.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/state.sqlite"), "an empty database was created")

        // The folder back with its marker but without the database: refused, not a fresh start.
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/state.sqlite.marker"))
        try d.start()
        let noDatabase = d.waitForExit(timeout: 15)
        #expect(noDatabase != nil && noDatabase?.status != 0, "log:\n\(d.stderr)")
        #expect(d.stderr.contains("marker"), "log:\n\(d.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/state.sqlite"), "an empty database was created")
    }

    /// Only the database removed (the folder stays): detected by the file's identity.
    @Test func stateFileRemovedWhileRunning() throws {
        let d = try AgentProcess()
        try d.writeConfig(DaemonTests.gpio)
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: d.statePath + suffix) }
        let lost = try d.cli(["add", "-"], input: #"{"id":"b","trigger":{"interval":{"seconds":3600}}}"#)
        #expect(lost.status != 0, "\(lost.stdout)")
        #expect(lost.stderr.contains("not done: the state could not be made durable"), "\(lost.stderr)")
        let exit = d.waitForExit(timeout: 15)
        #expect(exit != nil && exit?.status != 0, "log:\n\(d.stderr)")
        try d.start()
        let again = d.waitForExit(timeout: 15)
        #expect(again != nil && again?.status != 0, "log:\n\(d.stderr)")
        #expect(d.stderr.contains("marker"), "log:\n\(d.stderr)")
    }

    /// A state file the agent's user may not write is refused at start (run as nobody; root may
    /// write any file).
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                   "needs root and setpriv, to run the agent as nobody"))
    func readOnlyStateFileIsRefusedAtStart() throws {
        let d = try AgentProcess()
        try d.writeConfig(DaemonTests.gpio)
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 15)?.status == 0, "log:\n\(d.stderr)")
        chmod(d.dir.path, 0o777)
        chmod(d.configPath, 0o644)
        for suffix in ["", "-wal", "-shm", ".marker"] { chmod(d.statePath + suffix, 0o644) }
        try d.start(wrapper: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
        let exit = d.waitForExit(timeout: 15)
        #expect(exit != nil && exit?.status != 0, "log:\n\(d.stderr)")
        #expect(d.stderr.contains("read-only") && d.stderr.contains("state.sqlite"), "log:\n\(d.stderr)")
    }

    /// pending_cap = 2: a configured repeating request is evicted by two sooner one-shots; once
    /// they are removed, SIGHUP (and a restart) bring it back, reported as added.
    @Test func evictedConfiguredRequestComesBack() throws {
        let d = try AgentProcess()
        let body = DaemonTests.gpio + """
            [engine]
            pending_cap = 2

            [[request]]
            id = "configured"
            content = { title = "Configured" }
            trigger = { interval = { seconds = 86400, repeats = true } }

            """
        try d.writeConfig(body)
        try d.start()
        #expect(d.waitForLog("1 added (configured)"), "log:\n\(d.stderr)")
        let add = try d.cli(["add", "-"], input: """
            {"id":"one","trigger":{"interval":{"seconds":600}}}
            {"id":"two","trigger":{"interval":{"seconds":700}}}
            """)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(d.waitForLog("evicted"), "log:\n\(d.stderr)")
        #expect(!((try? d.cli(["pending", "--json"]))?.stdout ?? "").contains("\"configured\""))
        let remove = try d.cli(["remove", "one", "two"])
        #expect(remove.status == 0, "\(remove.stderr)")
        d.signal(SIGHUP)
        #expect(d.wait(timeout: 10) { d.stderr.components(separatedBy: "added (configured)").count >= 3 }, "log:\n\(d.stderr)")
        #expect(d.wait(timeout: 5) { ((try? d.cli(["pending", "--json"]))?.stdout ?? "").contains("\"configured\"") },
                "log:\n\(d.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 15)?.status == 0)
    }

    /// 50 deliveries left unanswered, a restart, then a timeSensitive chime due 2.5 s later: it
    /// sounds within 1 s of due (the reminders, 1.5 s of flash each, never play in front of it).
    @Test func newDeliveryIsNotDelayedByReminders() throws {
        let d = try AgentProcess()
        try d.writeConfig(DaemonTests.gpio)
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let many = (0 ..< 50).map { #"{"id":"old\#($0)","content":{"title":"Old","interruptionLevel":"passive"},"trigger":{"interval":{"seconds":0.1}}}"# }
        let add = try d.cli(["add", "-"], input: many.joined(separator: "\n"))
        #expect(add.status == 0, "\(add.stderr)")
        #expect(d.wait(timeout: 20) { d.stderr.components(separatedBy: "delivered old").count > 50 }, "log:\n\(d.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 15)?.status == 0)
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let before = d.pinChanges.filter { $0.name == "buzzer" && $0.on }.count
        // An interval trigger of 3 s, its due instant taken from before the CLI starts: the real due
        // instant is no earlier, so `late` is never understated. The answer to `add` is part of
        // the measure: an agent whose loop is held up at start (reading /proc/self/smaps took
        // 3.4 s in a debug build) answers late and fails here.
        let due = Date().timeIntervalSince1970 + 3
        let new = try d.cli(["add", "-"], input: #"{"id":"new","content":{"title":"New","sound":"chime","interruptionLevel":"timeSensitive"},"trigger":{"interval":{"seconds":3}}}"#)
        #expect(new.status == 0, "\(new.stderr); log:\n\(d.stderr)")
        let sounded = d.wait(timeout: 60) { d.pinChanges.filter { $0.name == "buzzer" && $0.on }.count > before }
        let late = Date().timeIntervalSince1970 - due
        #expect(sounded && late < 1.0, "the chime sounded \(late) s after due; log:\n\(d.stderr)")
        print("reminder backlog: 50 unanswered, the new timeSensitive chime sounded at most \(Int(late * 1000)) ms after due")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 15)?.status == 0)
    }
}
