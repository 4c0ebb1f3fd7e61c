import FencepostLinux
import FencepostTestSupport
import Foundation
import Testing

/// `fencepost status --follow`: on a pipe one line when something changes and none while nothing
/// does; on a terminal a redraw about once a second; in both, Ctrl-C or SIGTERM ends it, and a
/// pipe whose reader went away ends it while nothing changes.
///
/// Each follower is started with SIGINT, SIGTERM and SIGHUP blocked, as a child of a Swift
/// Testing or Dispatch worker thread is (they block nearly every signal and a spawned process
/// inherits the mask). The follower reads them from a signalfd, blocked or not; a follower that
/// slept in `usleep` would leave such a SIGINT pending for ever, and this test would hang.
// No `.timeLimit`: Swift Testing counts it from the test's start, including the time it waits for
// one of the cooperative pool's two threads while long synchronous tests (a million zones) hold
// them; in a full run that was minutes, and the limit failed tests that then passed. Every wait
// inside is bounded instead (polls with deadlines, ChildProcess.run's time limit).
@Suite(.serialized, .processes) struct StatusFollowTests {
    @Test func pipeGetsALinePerChangeAndEndsOnInterrupt() throws {
        let d = try AgentProcess()
        try d.writeConfig(DaemonTests.gpio)
        try d.start()
        defer { Self.stop(d) }
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let out = d.dir.appendingPathComponent("follow.out")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        let p = try Self.follow(d, stdout: try FileHandle(forWritingTo: out))
        defer { Self.kill(p) }
        func lines() -> [String] { ((try? String(contentsOf: out, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }
        #expect(d.wait(timeout: 10) { lines().count >= 1 })
        Thread.sleep(forTimeInterval: 3)   // three polls, nothing changed: still one line
        #expect(lines().count == 1, "\(lines())")
        #expect(lines().first?.contains("pending 0") == true, "\(lines())")
        let add = try d.cli(["add", "-"], input: #"{"id":"later","content":{"title":"Later"},"trigger":{"interval":{"seconds":3600}}}"# + "\n")
        #expect(add.status == 0, "\(add.stderr)")
        #expect(d.wait(timeout: 10) { lines().count >= 2 }, "\(lines())")
        p.interrupt()
        let status = Self.waitForExit(p, timeout: 5)
        #expect(status == 0, "SIGINT did not end status --follow (nil: still running after 5 s)")
        let all = lines()
        #expect(all.count == 2, "\(all)")
        #expect(all.last?.contains("pending 1") == true, "\(all)")
        #expect(all.allSatisfy { $0.contains("clock trusted (always)") && $0.contains("gps not connected") }, "\(all)")
    }

    /// `fencepost status --follow | head -1`: head exits after the first line; nothing changes
    /// afterwards, so nothing is written, yet the follower must end.
    @Test func pipeWhoseReaderLeftEndsIt() throws {
        let d = try AgentProcess()
        try d.writeConfig(DaemonTests.gpio)
        try d.start()
        defer { Self.stop(d) }
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let pipe = Pipe()
        let p = try Self.follow(d, stdout: pipe.fileHandleForWriting)
        defer { Self.kill(p) }
        try pipe.fileHandleForWriting.close()
        let reader = pipe.fileHandleForReading
        let flags = fcntl(reader.fileDescriptor, F_GETFL)
        _ = fcntl(reader.fileDescriptor, F_SETFL, flags | O_NONBLOCK)
        var got: [UInt8] = []
        #expect(d.wait(timeout: 10) {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = read(reader.fileDescriptor, &buffer, buffer.count)
            if n > 0 { got += buffer[0 ..< n] }
            return got.contains(UInt8(ascii: "\n"))
        }, "no first line")
        try reader.close()
        let status = Self.waitForExit(p, timeout: 5)
        #expect(status == 0, "status --follow went on after its reader left (nil: still running after 5 s)")
    }

    /// On a terminal: the screen is cleared and the status drawn about once a second; SIGTERM
    /// ends it.
    @Test func terminalRedrawsEverySecondUntilTerminated() throws {
        let d = try AgentProcess()
        try d.writeConfig(DaemonTests.gpio)
        try d.start()
        defer { Self.stop(d) }
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let pty = try PseudoTerminal()
        guard let device = FileHandle(forUpdatingAtPath: pty.devicePath) else {
            Issue.record("cannot open \(pty.devicePath)")
            return
        }
        let p = try Self.follow(d, stdout: device)
        defer { Self.kill(p) }
        try device.close()
        let master = pty.master.rawValue
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        var screen: [UInt8] = []
        func drain() {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(master, &buffer, buffer.count)
                guard n > 0 else { return }
                screen += buffer[0 ..< n]
            }
        }
        let clear = Array("\u{1B}[H\u{1B}[2J".utf8)
        func redraws() -> Int {
            var count = 0, i = 0
            while i + clear.count <= screen.count {
                if Array(screen[i ..< i + clear.count]) == clear { count += 1; i += clear.count } else { i += 1 }
            }
            return count
        }
        let start = Date()
        #expect(d.wait(timeout: 10) { drain(); return redraws() >= 3 }, "redraws: \(redraws())")
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 1.5 && elapsed < 8, "three redraws took \(elapsed) s (one a second expected)")
        let text = String(decoding: screen, as: UTF8.self)
        #expect(text.contains("Ctrl-C to stop"), "\(text)")
        Glibc.kill(p.processIdentifier, SIGTERM)
        let status = Self.waitForExit(p, timeout: 5)
        #expect(status == 0, "SIGTERM did not end status --follow (nil: still running after 5 s)")
    }

    // MARK: Helpers

    /// Starts `fencepost status --follow` on `d`'s socket with `stdout`, from this thread with
    /// SIGINT, SIGTERM and SIGHUP blocked (the child inherits the mask), then restores the mask.
    static func follow(_ d: AgentProcess, stdout: FileHandle) throws -> Process {
        guard let binary = ChildProcess.binary else { throw ChildProcess.NotFound() }
        let p = Process()
        p.executableURL = binary
        p.arguments = ["status", "--follow", "--socket", d.socketPath]
        p.standardOutput = stdout
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        var blocked = sigset_t(), old = sigset_t()
        sigemptyset(&blocked)
        for s in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&blocked, s) }
        pthread_sigmask(SIG_BLOCK, &blocked, &old)
        defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
        try p.run()
        return p
    }

    /// The exit status once `p` ended, or nil when it still runs after `timeout` seconds.
    static func waitForExit(_ p: Process, timeout: Double) -> Int32? {
        let end = Date().addingTimeInterval(timeout)
        while p.isRunning && Date() < end { usleep(20_000) }
        if p.isRunning { return nil }
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// Ends `p` whatever it does (a follower that ignored its signals must not outlive the test).
    static func kill(_ p: Process) {
        guard p.isRunning else { return }
        Glibc.kill(p.processIdentifier, SIGKILL)
        _ = waitForExit(p, timeout: 5)
    }

    static func stop(_ d: AgentProcess) {
        d.signal(SIGTERM)
        _ = d.waitForExit(timeout: 10)
    }
}
