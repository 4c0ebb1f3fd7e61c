@testable import FencepostAgent
import FencepostLinux
import FencepostTestSupport
import Foundation
import Glibc
import Testing

/// The agent's start as systemd sees it, through a real `NOTIFY_SOCKET` that the test binds (an
/// AF_UNIX datagram socket, as systemd's): the state file and the zone set's build are reported
/// in `STATUS=` lines, each with `EXTEND_TIMEOUT_USEC=`, and only then comes `READY=1`.
// No `.timeLimit`: Swift Testing counts it from the test's start, including the time it waits for
// one of the cooperative pool's two threads while long synchronous tests (a million zones) hold
// them; in a full run that was minutes, and the limit failed tests that then passed. Every wait
// inside is bounded instead (polls with deadlines, ChildProcess.run's time limit).
@Suite(.serialized, .processes) struct DaemonStartupProgressTests {
    /// A first start with 70,000 zones: more than one progress callback of the build (every
    /// 65,536 features), so a progress line with the share of the file read must come.
    @Test func progressAndExtensionsComeBeforeReady() throws {
        let seed: UInt64 = 14
        let d = try AgentProcess()
        try Data(DaemonZonesTests.zones(70_000, seed: seed).utf8).write(to: d.dir.appendingPathComponent("zones.geojson"))
        try d.writeConfig("zones = \"zones.geojson\"\n[gpio]\nbackend = \"console\"\n")
        let socket = try NotifySocket(path: d.dir.appendingPathComponent("notify").path)
        try d.start(agent: true, environment: ["NOTIFY_SOCKET": socket.path])
        defer {
            d.signal(SIGTERM)
            _ = d.waitForExit(timeout: 10)
        }
        var messages: [String] = []
        let readySeen = d.wait(timeout: 150) {
            messages += socket.receiveAll()
            return messages.contains { $0.split(separator: "\n").contains("READY=1") }
        }
        #expect(readySeen, "no READY=1; seed \(seed); messages: \(messages); log:\n\(d.stderr)")
        #expect(d.wait(timeout: 10) { messages += socket.receiveAll(); return messages.last?.contains("pending") == true },
                "no running status after READY=1: \(messages)")
        guard let ready = messages.firstIndex(where: { $0.split(separator: "\n").contains("READY=1") }) else { return }
        let before = Array(messages[..<ready])
        // Every message before READY=1 is a status with an extension of the start's time-out.
        for m in before {
            #expect(m.hasPrefix("STATUS=") && m.hasSuffix("\nEXTEND_TIMEOUT_USEC=30000000"), "\(m)")
        }
        let statuses = before.map { $0.split(separator: "\n")[0].dropFirst("STATUS=".count) }
        #expect(statuses.first?.hasPrefix("loading state file \(d.statePath)") == true, "\(statuses)")
        let expectedOrder = ["loading state file", "applying the configuration's requests", "zone set: reading",
                             "building zone set: 65,536 zones read (", "building zone set: 70,000 zones read; indexing and writing"]
        var position = 0
        for s in statuses where position < expectedOrder.count && s.hasPrefix(expectedOrder[position]) { position += 1 }
        #expect(position == expectedOrder.count, "missing or out of order: \(expectedOrder[min(position, expectedOrder.count - 1)]); statuses: \(statuses)")
        #expect(statuses.contains { $0.contains("65,536 zones read (") && $0.contains("% of ") && $0.hasSuffix(" MB)") }, "\(statuses)")
        #expect(!statuses.contains { $0.contains("zones read (100 %") }, "the end of reading is a step, not progress: \(statuses)")
        // READY=1 once, and nothing after it extends the start.
        #expect(messages.filter { $0.split(separator: "\n").contains("READY=1") }.count == 1, "\(messages)")
        #expect(!messages[ready...].contains { $0.contains("EXTEND_TIMEOUT_USEC") }, "\(messages)")
        #expect(d.stderr.contains("zone set built: 70000 zones"), "log:\n\(d.stderr)")
    }

    /// A restart with the set already built: no build progress, READY=1 after the state and the
    /// mapped set.
    @Test func restartWithoutBuildStillReportsItsSteps() throws {
        let d = try AgentProcess()
        try Data(DaemonZonesTests.zones(50, seed: 3).utf8).write(to: d.dir.appendingPathComponent("zones.geojson"))
        try d.writeConfig("zones = \"zones.geojson\"\n[gpio]\nbackend = \"console\"\n")
        let socket = try NotifySocket(path: d.dir.appendingPathComponent("notify").path)
        for run in 0 ..< 2 {
            try d.start(agent: true, environment: ["NOTIFY_SOCKET": socket.path])
            var messages: [String] = []
            let readySeen = d.wait(timeout: 60) {
                messages += socket.receiveAll()
                return messages.contains("READY=1")
            }
            #expect(readySeen, "run \(run): \(messages); log:\n\(d.stderr)")
            let steps = messages.prefix { $0 != "READY=1" }
            #expect(steps.first?.hasPrefix("STATUS=loading state file") == true, "run \(run): \(messages)")
            #expect(steps.contains { $0.hasPrefix("STATUS=zone set: reading") }, "run \(run): \(messages)")
            #expect(steps.contains { $0.contains("indexing and writing") } == (run == 0), "run \(run): \(messages)")
            d.signal(SIGTERM)
            #expect(d.waitForExit(timeout: 10)?.status == 0)
            _ = socket.receiveAll()   // the running status and STOPPING=1 of this run
        }
    }
}

/// StartupProgress's pacing on a clock of the test's: a step at once, a step's first progress at
/// once, later progress at most once a second.
@Suite(.processes) struct StartupProgressPacingTests {
    @Test func progressIsSentAtMostOnceASecondAfterTheStepsFirst() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-sp-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = try NotifySocket(path: dir.appendingPathComponent("n").path)
        var t: UInt64 = 0
        let progress = StartupProgress(notifier: try SystemdNotifier(notifySocket: socket.path), now: { t })
        progress.step("a")
        progress.progress { "p1" }
        t = 500_000_000
        progress.progress { "p2" }
        t = 1_200_000_000
        progress.progress { "p3" }
        t = 1_300_000_000
        progress.progress { "p4" }
        progress.step("b")
        progress.progress { "p5" }
        progress.ready()
        let got = socket.receiveAll().map { $0.replacingOccurrences(of: "\nEXTEND_TIMEOUT_USEC=30000000", with: "+") }
        #expect(got == ["STATUS=a+", "STATUS=p1+", "STATUS=p3+", "STATUS=b+", "STATUS=p5+", "READY=1"])
        #expect(StartupProgress.zoneSetText(features: 420_000, offset: 42_000_000, total: 100_000_000)
                == "building zone set: 420,000 zones read (42 % of 100.0 MB)")
        #expect(StartupProgress.count(1_000_000) == "1,000,000" && StartupProgress.count(999) == "999")
    }

    @Test func withoutNotifySocketNothingIsSent() throws {
        let progress = StartupProgress(notifier: try SystemdNotifier(notifySocket: nil))
        progress.step("a")
        progress.progress { Issue.record("text made without a socket"); return "" }
        progress.ready()
        #expect(progress.messagesSent == 0)
    }
}

/// A datagram socket bound at `path`, as systemd's notification socket.
final class NotifySocket {
    let path: String
    let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw Errno.current }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        precondition(bytes.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long: \(path)")
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { let e = Errno.current; close(fd); throw e }
    }

    deinit { close(fd) }

    /// Every datagram waiting, as text, without blocking.
    func receiveAll() -> [String] {
        var out: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n >= 0 else { return out }
            out.append(String(decoding: buffer[..<n], as: UTF8.self))
        }
    }
}
