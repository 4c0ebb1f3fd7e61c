import FencepostTestSupport
import Foundation
import Testing

/// A value computed once on a thread of its own, awaited by tests. Not on Swift concurrency's
/// cooperative pool: it has as many threads as cores (two on CI), and a test blocked there for the
/// minutes of a cross-build holds back every other test meanwhile.
final class ThreadFuture<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Value?
    private var waiting: [CheckedContinuation<Value, Never>] = []

    /// Starts `body` on a new thread at once.
    init(_ body: @escaping @Sendable () -> Value) {
        Thread { self.finish(body()) }.start()
    }

    private func finish(_ value: Value) {
        lock.lock()
        result = value
        let waiters = waiting
        waiting = []
        lock.unlock()
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// The value, once `body` has returned.
    var value: Value {
        get async {
            await withCheckedContinuation { waiter in
                lock.lock()
                if let result {
                    lock.unlock()
                    waiter.resume(returning: result)
                } else {
                    waiting.append(waiter)
                    lock.unlock()
                }
            }
        }
    }
}

/// Runs a blocking call (a child process) off the cooperative pool and awaits its result.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await ThreadFuture { Result(catching: body) }.value.get()
}

/// The Embedded Swift builds of the agent (board/cross-build), each made once per test run: for
/// this machine (x86_64, run natively) and for 64-bit ARM (run under qemu-aarch64-static).
enum EmbeddedBuilds {
    /// What the aarch64 build and its emulation need (board/install-deps installs them).
    static let crossTools = ["/usr/bin/aarch64-linux-gnu-gcc", "/usr/bin/qemu-aarch64-static"]
    static let crossToolsPresent = crossTools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    /// CI (.ci/run) sets this: there a missing cross toolchain is a failure, not a skip.
    static let required = TestInputs.required
    static let enabled = crossToolsPresent || required
    static let skipReason: Comment = "the cross toolchain (gcc-aarch64-linux-gnu, qemu-user-static) is not installed: run board/install-deps"

    struct BuildFailed: Error, CustomStringConvertible { var description: String }

    /// Both builds, started together (each is mostly one compiler process at a time: together they
    /// use both cores) the first time a test asks for either. The x86_64 build is unoptimized
    /// (`--debug`, a third of the compile time): it checks that Embedded Swift's library and the
    /// C shims compute what the host build computes. The aarch64 build is the board's, `-Osize`.
    static let x86_64Build = ThreadFuture { build(["--debug", "x86_64"]) }
    static let aarch64Build = ThreadFuture { build(["aarch64"]) }
    static var builds: (x86_64: ThreadFuture<Result<URL, BuildFailed>>, aarch64: ThreadFuture<Result<URL, BuildFailed>>) {
        (x86_64Build, aarch64Build)
    }
    static var x86_64: Result<URL, BuildFailed> { get async { await x86_64Build.value } }
    static var aarch64: Result<URL, BuildFailed> { get async { await aarch64Build.value } }

    /// Runs `board/cross-build arguments…`; its last line of output is the binary.
    static func build(_ arguments: [String]) -> Result<URL, BuildFailed> {
        let script = AgentProcess.root.appendingPathComponent("board/cross-build")
        let name = arguments.joined(separator: " ")
        // A cold build takes 3-8 min on two cores, more when the other tests run beside it.
        guard let out = try? ChildProcess.run(arguments, environment: [:], executable: script, timeLimit: 2400) else {
            return .failure(BuildFailed(description: "board/cross-build \(name) could not be started"))
        }
        let path = out.stdout.split(separator: "\n").last.map(String.init) ?? ""
        guard out.status == 0, FileManager.default.isExecutableFile(atPath: path) else {
            return .failure(BuildFailed(description: "board/cross-build \(name) failed (\(out.status)):\n\(out.stderr.suffix(6000))"))
        }
        return .success(URL(fileURLWithPath: path))
    }

    /// What the armhf build and its emulation need (board/install-deps installs them).
    static let armhfTools = ["/usr/bin/arm-linux-gnueabihf-gcc", "/usr/bin/qemu-arm-static"]
    static let armhfToolsPresent = armhfTools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    static let armhfEnabled = armhfToolsPresent || required
    static let armhfSkipReason: Comment = "the armhf cross toolchain (gcc-arm-linux-gnueabihf, qemu-user-static) is not installed: run board/install-deps"
    /// The 32-bit ARM build (`-Osize`, as a board gets it), made the first time a test asks for it.
    static let armhfBuild = ThreadFuture { build(["armhf"]) }
    static var armhf: Result<URL, BuildFailed> { get async { await armhfBuild.value } }

    /// Runs an armhf binary under qemu-arm (board/run-armhf), off the cooperative pool.
    static func runArmhf(_ binary: URL, _ arguments: [String], timeLimit: Double = 600) async throws -> ChildProcess.Output {
        try await offThePool {
            try ChildProcess.run([binary.path] + arguments,
                                 executable: AgentProcess.root.appendingPathComponent("board/run-armhf"), timeLimit: timeLimit)
        }
    }

    /// Runs an aarch64 binary under qemu (board/run-aarch64), off the cooperative pool.
    static func runAArch64(_ binary: URL, _ arguments: [String]) async throws -> ChildProcess.Output {
        try await offThePool {
            try ChildProcess.run([binary.path] + arguments,
                                 executable: AgentProcess.root.appendingPathComponent("board/run-aarch64"))
        }
    }
}

@Suite(.enabled(if: EmbeddedBuilds.enabled, EmbeddedBuilds.skipReason), .serialized, .processes)
struct EmbeddedBuildTests {
    /// The algorithm check's digest covers every answer of the seeded core checks: a difference in
    /// floating point, byte order or word size between the builds changes it.
    @Test func algorithmCheckPassesWithTheSameDigestInEveryBuild() async throws {
        try #require(EmbeddedBuilds.crossToolsPresent, EmbeddedBuilds.skipReason)
        _ = EmbeddedBuilds.builds   // both start now
        let agent = try #require(ChildProcess.agentBinary)
        let host = try await offThePool { try ChildProcess.run(["--check-algorithms"], executable: agent) }
        let embedded = try await EmbeddedBuilds.x86_64.get()
        let arm = try await EmbeddedBuilds.aarch64.get()
        let x86 = try await offThePool { try ChildProcess.run(["--check-algorithms"], executable: embedded) }
        let qemu = try await EmbeddedBuilds.runAArch64(arm, ["--check-algorithms"])
        for (name, out) in [("host", host), ("embedded x86_64", x86), ("aarch64 under qemu", qemu)] {
            #expect(out.status == 0, "\(name):\n\(out.stdout)\(out.stderr)")
            #expect(out.stdout.split(separator: "\n").last?.hasPrefix("digest ") == true, "\(name):\n\(out.stdout)")
            // The Embedded runtime's BridgeObject retain, replaced (CFencepostLinux/embedded.c):
            // the toolchain's masks a small string's tag bits off, and the aarch64 agent faults.
            #expect(out.stdout.contains("runtime: swift_bridgeObjectRetain returns its argument: ok"), "\(name):\n\(out.stdout)")
        }
        let digest = { (o: ChildProcess.Output) in o.stdout.split(separator: "\n").last.map(String.init) ?? "" }
        #expect(digest(x86) == digest(host), "embedded x86_64:\n\(x86.stdout)\nhost:\n\(host.stdout)")
        #expect(digest(qemu) == digest(host), "aarch64:\n\(qemu.stdout)\nhost:\n\(host.stdout)")
        // Every check ran: four report lines besides the seed and the digest.
        #expect(host.stdout.split(separator: "\n").filter { $0.contains(" cases, ok") }.count == 4, "\(host.stdout)")
    }

    /// Embedded Swift prints "(cannot print value in embedded Swift)" for an interpolated value it
    /// has no description of (a `Duration`, an enum without one): the Embedded agent's log, at
    /// level debug, under systemd's watchdog variables, through a replay with deliveries and a
    /// `status` answer, has none of them.
    @Test func embeddedAgentPrintsEveryValueItLogs() async throws {
        try #require(EmbeddedBuilds.crossToolsPresent, EmbeddedBuilds.skipReason)
        let embedded = try await EmbeddedBuilds.x86_64.get()
        let d = try AgentProcess()
        let drive = d.dir.appendingPathComponent("short.nmea")
        let start = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        try Data(BoardClockTests.parked(from: start, seconds: 8).utf8).write(to: drive)
        try d.writeConfig("""
            [gps]
            source = "replay"
            file = "\(drive.path)"
            speed = 2
            exit_at_end = true

            [log]
            level = "debug"

            """ + DaemonTests.gpio + DaemonGPSTests.depot + BoardClockTests.calendarRequest("soon", at: start.addingTimeInterval(2)))
        let config = d.configPath, notify = d.dir.appendingPathComponent("notify").path
        let run = try await offThePool {
            try ChildProcess.run(["--config", config],
                                 environment: ["TZ": "UTC", "NOTIFY_SOCKET": notify, "WATCHDOG_USEC": "2000000"],
                                 executable: embedded, timeLimit: 120)
        }
        #expect(run.status == 0, "status \(run.status):\n\(run.stderr)")
        #expect(run.stderr.contains("systemd watchdog every 1000 ms"), "\(run.stderr)")
        #expect(run.stderr.contains("delivered depot/") && run.stderr.contains("delivered soon/"), "\(run.stderr)")
        #expect(!run.stderr.contains("cannot print value"), "\(run.stderr)")
    }

    /// The cross-built agent is an ARM binary, and the README's demo run by it under qemu gives the
    /// same deliveries, in the same order, at the same drive times (the fix in each location
    /// delivery's log line) as the host build.
    @Test func theDemoUnderQemuDeliversAsTheHostBuildDoes() async throws {
        try #require(EmbeddedBuilds.crossToolsPresent, EmbeddedBuilds.skipReason)
        let arm = try await EmbeddedBuilds.aarch64.get()
        let header = try FileHandle(forReadingFrom: arm).read(upToCount: 20) ?? Data()
        #expect(header.count == 20 && header.prefix(4) == Data([0x7f, 0x45, 0x4c, 0x46]) && header[4] == 2
                && header[18] == 0xb7 && header[19] == 0, "not a 64-bit ELF for aarch64 (EM_AARCH64 = 183)")

        let agent = try #require(ChildProcess.agentBinary)
        let host = try await offThePool {
            try Self.runDemo { config in try ChildProcess.run(["--config", config], executable: agent) }
        }
        let qemu = try await offThePool {
            try Self.runDemo { config in
                try ChildProcess.run([arm.path, "--config", config],
                                     executable: AgentProcess.root.appendingPathComponent("board/run-aarch64"))
            }
        }
        #expect(host.status == 0, "\(host.stderr)")
        #expect(qemu.status == 0, "\(qemu.stderr)")
        let deliveries = { (o: ChildProcess.Output) in o.stderr.split(separator: "\n").filter { $0.contains(" delivered ") } }
        let expected = deliveries(host)
        // The demo's zones and interval (README): depot enter and exit, school zone, customer, the timer.
        #expect(expected.count >= 5, "\(host.stderr)")
        #expect(expected.filter { $0.contains(" (fix 2009-07-07T") }.count >= 4, "\(host.stderr)")
        #expect(deliveries(qemu) == expected, "aarch64 under qemu:\n\(qemu.stderr)\nhost:\n\(host.stderr)")
    }

    /// board/demo copied to a fresh folder (its state and socket paths moved there), run by `run`.
    static func runDemo(_ run: (String) throws -> ChildProcess.Output) throws -> ChildProcess.Output {
        let fm = FileManager.default
        let dir = fm.temporaryDirectory.appendingPathComponent("fp-demo-\(UUID().uuidString.prefix(8))")
        try fm.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? fm.removeItem(at: dir) }
        let demo = AgentProcess.root.appendingPathComponent("board/demo")
        for name in ["zones.geojson", "duesseldorf-2009-07-07.nmea"] {
            try fm.copyItem(at: demo.appendingPathComponent(name), to: dir.appendingPathComponent(name))
        }
        var config = try String(contentsOf: demo.appendingPathComponent("fencepost.toml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "/tmp/fencepost-demo/", with: dir.path + "/")
        guard !config.contains("/tmp/fencepost-demo") else {   // runs off the test's task: no #expect here
            throw EmbeddedBuilds.BuildFailed(description: "board/demo/fencepost.toml: a /tmp/fencepost-demo path was not moved")
        }
        let path = dir.appendingPathComponent("fencepost.toml").path
        try Data(config.utf8).write(to: URL(fileURLWithPath: path))
        return try run(path)
    }
}

/// The 32-bit build (armhf: `time_t` and `Int` are 32 bits on Debian 12 armhf) under qemu-arm: its
/// algorithm check agrees with the host's, and a calendar request for 2040 (past 2038-01-19, the last
/// second a 32-bit `time_t` holds) is armed without a trap.
@Suite(.enabled(if: EmbeddedBuilds.armhfEnabled, EmbeddedBuilds.armhfSkipReason), .serialized, .processes)
struct ArmhfBuildTests {
    @Test func algorithmCheckAndA2040CalendarRequestUnderQemuArm() async throws {
        try #require(EmbeddedBuilds.armhfToolsPresent, EmbeddedBuilds.armhfSkipReason)
        let arm = try await EmbeddedBuilds.armhf.get()
        let header = try FileHandle(forReadingFrom: arm).read(upToCount: 20) ?? Data()
        #expect(header.count == 20 && header[4] == 1 && header[18] == 40 && header[19] == 0,
                "not a 32-bit ELF for ARM (ELFCLASS32, EM_ARM = 40)")
        let agent = try #require(ChildProcess.agentBinary)
        let host = try await offThePool { try ChildProcess.run(["--check-algorithms"], executable: agent) }
        let qemu = try await EmbeddedBuilds.runArmhf(arm, ["--check-algorithms"])
        #expect(qemu.status == 0, "\(qemu.stdout)\(qemu.stderr)")
        let digest = { (o: ChildProcess.Output) in o.stdout.split(separator: "\n").last.map(String.init) ?? "" }
        #expect(digest(qemu) == digest(host) && digest(host).hasPrefix("digest "), "armhf:\n\(qemu.stdout)\nhost:\n\(host.stdout)")

        // The agent with a 2040 request and a short replay that ends it.
        let d = try AgentProcess()
        let drive = d.dir.appendingPathComponent("short.nmea")
        try Data(BoardClockTests.parked(from: Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)), seconds: 5).utf8)
            .write(to: drive)
        try d.writeConfig("""
            [gps]
            source = "replay"
            file = "\(drive.path)"
            speed = 5
            exit_at_end = true

            """ + DaemonTests.gpio + BoardClockTests.calendarRequest("y2040", at: Date(timeIntervalSince1970: 2_222_222_222)))
        let run = try await EmbeddedBuilds.runArmhf(arm, ["--config", d.configPath], timeLimit: 120)
        #expect(run.status == 0, "status \(run.status):\n\(run.stderr)")
        #expect(run.stderr.contains("configuration applied") && run.stderr.contains("replay finished"), "\(run.stderr)")
        #expect(!run.stderr.contains("Fatal error") && !run.stderr.contains("cannot print value"), "\(run.stderr)")
    }
}
