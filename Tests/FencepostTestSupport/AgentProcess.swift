import FencepostJSON
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The agent as a real child process in a temporary folder of its own: `fencepost run` or the
/// lean `fencepost-agent`, its configuration, state database and control socket in the folder,
/// its standard output (the console GPIO) and standard error (the log) captured to a pair of
/// files a run.
///
/// Spawned as every helper program of the tests is (``SpawnedProcess``: an empty signal mask and
/// default dispositions, as systemd starts it, no descriptor of the test process), so SIGTERM
/// stops it and SIGKILL is a power cut. A start while an earlier run still runs leaves that one
/// running. At deinit every run still running is killed and the folder removed, so every path
/// out of a test cleans up; ``peers`` (a broker, a fault proxy) live as long as the agent.
public final class AgentProcess {
    /// The folder, under /tmp and short: a socket's path holds at most 107 bytes.
    public let dir: URL
    public let configPath: String
    public let socketPath: String
    public let statePath: String
    /// What the agent talks to (a broker, a fault proxy): kept alive as long as the agent is.
    public var peers: [AnyObject] = []
    /// Every run, in order.
    private var children: [SpawnedProcess] = []
    private var outputs: [(out: String, err: String)] = []

    /// The repository's root.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The demo drive of board/demo (NMEA).
    public static let demoDrive = root.appendingPathComponent("board/demo/duesseldorf-2009-07-07.nmea").path

    /// Configuration text: the GPS replays ``demoDrive`` at `speed` times real time (with
    /// `exitAtEnd` the agent exits at its end), the GPIO is the console.
    public static func demoReplay(speed: Int, exitAtEnd: Bool = false) -> String {
        """
        [gps]
        source = "replay"
        file = "\(demoDrive)"
        speed = \(speed)
        \(exitAtEnd ? "exit_at_end = true\n" : "")[gpio]
        backend = "console"

        """
    }

    public init() throws {
        dir = URL(fileURLWithPath: "/tmp").appendingPathComponent("fp-agent-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        configPath = dir.appendingPathComponent("fencepost.toml").path
        socketPath = dir.appendingPathComponent("control.sock").path
        statePath = dir.appendingPathComponent("state.sqlite").path
    }

    deinit {
        for child in children { child.stop(signal: SIGKILL, timeout: 10) }
        try? FileManager.default.removeItem(at: dir)
    }

    // MARK: Configuration

    /// The configuration's `clock_trust` (``header``).
    public var clockTrust = "always"
    /// The configuration's `time_zone` (``header``); nil: none, the device's zone (TZ, /etc/localtime).
    public var timeZone: String? = "UTC"

    /// The configuration's head: state in the folder, the clock trusted, UTC (the socket goes at the end).
    public var header: String {
        """
        state = "\(statePath)"
        clock_trust = "\(clockTrust)"
        \(timeZone.map { "time_zone = \"\($0)\"" } ?? "")

        """
    }

    /// Writes the configuration: ``header``, `body`, then the `[socket]` table (its `mode`, then
    /// `socketExtra`).
    public func writeConfig(_ body: String, socketMode: String = "0o600", socketExtra: String = "") throws {
        let text = header + body + "\n[socket]\npath = \"\(socketPath)\"\nmode = \(socketMode)\n" + socketExtra
        try Data(text.utf8).write(to: URL(fileURLWithPath: configPath))
    }

    // MARK: Running

    /// The current (or last) run.
    public var process: SpawnedProcess? { children.last }
    /// How many times it was started.
    public var runs: Int { children.count }
    /// The running child's pid; nil when none runs.
    public var pid: pid_t? { process.flatMap { $0.isRunning ? $0.pid : nil } }
    public var isRunning: Bool { process?.isRunning == true }

    /// Starts `fencepost run --config …`, with `agent` the lean `fencepost-agent --config …`
    /// instead; a start after a stop is a restart.
    ///
    /// `wrapper` runs it under another program (`["/usr/bin/strace", …]`): the wrapper gets the
    /// binary's path and arguments after its own. `environment` is added to the test's own.
    public func start(_ extra: [String] = [], agent: Bool = false, wrapper: [String] = [], environment: [String: String] = [:]) throws {
        guard let binary = agent ? Binaries.agent : Binaries.fencepost else { throw Binaries.NotFound() }
        let run = children.count
        let files = (out: dir.appendingPathComponent("stdout-\(run)").path, err: dir.appendingPathComponent("stderr-\(run)").path)
        let arguments = wrapper + [binary] + (agent ? [] : ["run"]) + ["--config", configPath] + extra
        children.append(try SpawnedProcess(arguments, output: files.out, errors: files.err, environment: environment))
        outputs.append(files)
    }

    /// Waits until the control socket answers `status` (the agent is running); false when it
    /// ended or `timeout` seconds passed first.
    public func waitUntilRunning(timeout: Double = 30) -> Bool {
        wait(timeout: timeout) { (try? cli(["status", "--json"]).status) == 0 || !isRunning } && isRunning
    }

    public func signal(_ s: Int32) { process?.signal(s) }

    /// SIGTERM, SIGKILL after 20 s.
    public func stop() { process?.stop(signal: SIGTERM, timeout: 20) }

    /// SIGKILL: a power cut.
    public func powerCut() { process?.stop(signal: SIGKILL, timeout: 5) }

    /// Waits for the current run to end: its status (the exit code, or the number of the signal
    /// that ended it) and how long the wait took; nil after `timeout` seconds.
    public func waitForExit(timeout: Double) -> (status: Int32, seconds: Double)? {
        guard let p = process else { return nil }
        let start = Date()
        guard wait(timeout: timeout, { !p.isRunning }), let raw = p.exitStatus else { return nil }
        let signal = raw & 0x7f
        return (signal == 0 ? (raw >> 8) & 0xff : signal, Date().timeIntervalSince(start))
    }

    /// Waits until `condition` holds (every 20 ms); false after `timeout` seconds.
    @discardableResult
    public func wait(timeout: Double, _ condition: () -> Bool) -> Bool { SpawnedProcess.wait(timeout: timeout, condition) }

    // MARK: What it wrote

    /// The current run's standard output (the console GPIO).
    public var stdout: String { outputs.last.map { Self.read($0.out) } ?? "" }
    /// The current run's standard error (the log).
    public var stderr: String { outputs.last.map { Self.read($0.err) } ?? "" }
    /// Every run's log, in order.
    public var log: String { outputs.map { Self.read($0.err) }.joined(separator: "\n--- restart ---\n") }

    private static func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// Waits for the current run's log to contain `text`.
    @discardableResult
    public func waitForLog(_ text: String, timeout: Double = 20) -> Bool { wait(timeout: timeout) { stderr.contains(text) } }

    /// The console lines `+S.sss s  NAME (BCM n) on|off`, parsed.
    public var pinChanges: [(time: Double, name: String, on: Bool)] {
        stdout.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 4, parts[0].hasPrefix("+"), let t = Double(parts[0].dropFirst()) else { return nil }
            return (t, String(parts[2]), parts.last == "on")
        }
    }

    /// Whether every output that was switched on was switched off again at the end.
    public var allOutputsOffAtEnd: Bool {
        var state: [String: Bool] = [:]
        for c in pinChanges { state[c.name] = c.on }
        return state.values.allSatisfy { !$0 }
    }

    /// Every run's lines where the agent said a loop turn took over 50 ms (wall or CPU; the line
    /// says which).
    public var slowTurns: [String] {
        log.split(separator: "\n").filter { $0.contains("loop turn took") }.map(String.init)
    }

    /// The ``slowTurns`` that were the agent's own work (over 50 ms of CPU time: a turn that only
    /// waited off the CPU on a loaded machine is not the agent's doing), after printing every slow
    /// turn under `label`.
    public func ownSlowTurns(printing label: String) -> [String] {
        let all = slowTurns
        for line in all { print("\(label): slow: \(line)") }
        return all.filter { $0.contains("(the agent's own work)") }
    }

    /// From the summary the agent logs when it stops (stop it first): the turn with the most CPU
    /// time, its milliseconds and what it did.
    public var mostCPUInOneTurn: (milliseconds: Double, what: String)? { LoopTurnSummary(log: log)?.mostCPU }

    /// From the summary the agent logs when it stops (stop it first): turns whose own work (CPU
    /// time) passed 50 ms, and the summary line; nil when there is no summary.
    public var turnsOverBudgetOnTheCPU: (count: Int, summary: String)? {
        LoopTurnSummary(log: log).map { ($0.overOnTheCPU, $0.line) }
    }

    // MARK: Talking to it

    /// `fencepost ARGUMENTS --socket …` with `input` on standard input (killed after 120 s: the
    /// CLI gives up on a silent agent after 30).
    public func cli(_ arguments: [String], input: String = "") throws -> Binaries.Output {
        try Binaries.run(arguments + ["--socket", socketPath], input: input, timeLimit: 120)
    }

    /// Sends one line on a fresh connection to the control socket; the answer line, nil when
    /// none came within `timeout` seconds.
    public func send(_ line: String, timeout: Double = 10) throws -> String? {
        guard let c = RawClient(socketPath) else { throw SpawnError(message: "cannot connect to \(socketPath)") }
        guard c.sendLine(line, timeout: timeout) else { return nil }
        return c.readLine(timeout: timeout)
    }

    /// One JSON-RPC call on a fresh connection: the answer (its `result` or `error`).
    public func call(_ method: String, _ params: String = "{}") throws -> JSONValue {
        let line = #"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":\#(params)}"#
        guard let answer = try send(line) else { throw SpawnError(message: "\(method): no answer within 10 s") }
        return try JSONValue.parse(answer)
    }

    /// Adds one-shot interval requests `prefix-i` due after `seconds[i]`, `batch` to a `fencepost
    /// add` (each batch one control request: one loop turn); returns the wall time (Unix seconds)
    /// just before the first call and just after the last, so each due time lies within
    /// [before + s, after + s].
    public func addIntervals(prefix: String, seconds: [Double], batch: Int = 100) throws -> (before: Double, after: Double) {
        let before = Date().timeIntervalSince1970
        for start in stride(from: 0, to: seconds.count, by: batch) {
            let lines = seconds.indices[start ..< min(start + batch, seconds.count)].map { i in
                #"{"id":"\#(prefix)-\#(i)","content":{"title":"T\#(i)","interruptionLevel":"passive"},"trigger":{"interval":{"seconds":\#(seconds[i])}}}"#
            }.joined(separator: "\n") + "\n"
            let out = try cli(["add", "-"], input: lines)
            guard out.status == 0 else { throw SpawnError(message: "fencepost add: \(out.stderr)") }
        }
        return (before, Date().timeIntervalSince1970)
    }
}
