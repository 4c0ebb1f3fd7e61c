@testable import fencepost
import FencepostJSON
import FencepostTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `fencepost-agent` with a `[fleet]` section, as a child process in a folder of its own (state,
/// config, control socket, log), spawned with an empty signal mask (SIGTERM stops it, SIGKILL is
/// a power cut). The console GPIO writes to its output.
final class FleetAgentProcess {
    let folder: URL
    var configPath: String { folder.appendingPathComponent("fencepost.toml").path }
    var socketPath: String { folder.appendingPathComponent("control.sock").path }
    var statePath: String { folder.appendingPathComponent("state.sqlite").path }
    private(set) var process: SpawnedProcess?
    private(set) var runs = 0
    /// What the agent talks to (its broker, a fault proxy): kept alive as long as the agent is.
    var peers: [AnyObject] = []
    /// Every run's output, in order (the agent's log and the console GPIO).
    private var outputs: [String] = []

    /// Whether the built agent has a fleet link (its config reader knows `[fleet]`); when not,
    /// prints why the test is skipped.
    static let supported: Bool = {
        let dir = "/tmp/fp-fleet-probe-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/f.toml"
        try? "state = \"\(dir)/s.sqlite\"\n[fleet]\nbroker = \"unix:\(dir)/b.sock\"\ndevice = \"van-1\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        guard let out = try? Binaries.run(["check-config", file]) else { return false }
        if out.stderr.contains("unknown key `fleet`") {
            print("the agent has no fleet link in this build ([fleet] is an unknown key): skipped")
            return false
        }
        return true
    }()

    init() throws {
        folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("fp-agent-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit {
        process?.stop(signal: SIGKILL, timeout: 5)
        try? FileManager.default.removeItem(at: folder)
    }

    /// Writes the config: state, a trusted clock, UTC, room for many requests, `fleet` as the
    /// body of the [fleet] section (nil: no [fleet]), `extra` before it.
    func writeConfig(fleet: String?, extra: String = "") throws {
        let text = """
            state = "\(statePath)"
            clock_trust = "always"
            time_zone = "UTC"
            \(extra)
            [engine]
            pending_cap = 20000
            delivered_cap = 20000

            [socket]
            path = "\(socketPath)"
            mode = 0o600

            \(fleet.map { "[fleet]\n" + $0 } ?? "")

            """
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    func start() throws {
        precondition(process?.isRunning != true)
        guard let binary = Binaries.agent else { throw SpawnError(message: "fencepost-agent not found next to the test bundle") }
        let out = folder.appendingPathComponent("output-\(runs)").path
        outputs.append(out)
        runs += 1
        process = try SpawnedProcess([binary, "--config", configPath], output: out)
    }

    /// Waits for the control socket to answer (the agent is running).
    func waitUntilRunning(timeout: Double = 30) -> Bool {
        SpawnedProcess.wait(timeout: timeout) { (try? cli(["status", "--json"]).status) == 0 || process?.isRunning == false }
            && process?.isRunning == true
    }

    func stop() { process?.stop(signal: SIGTERM, timeout: 20) }
    func powerCut() { process?.stop(signal: SIGKILL, timeout: 5) }

    /// All runs' output.
    var log: String { outputs.map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" }.joined(separator: "\n--- restart ---\n") }

    /// `fencepost ARGS --socket …`.
    func cli(_ arguments: [String], input: String? = nil) throws -> Binaries.Output {
        if let input {
            let file = folder.appendingPathComponent("input-\(UUID().uuidString.prefix(6))").path
            try input.write(toFile: file, atomically: true, encoding: .utf8)
            defer { unlink(file) }
            return try Binaries.run(arguments + [file, "--socket", socketPath])
        }
        return try Binaries.run(arguments + ["--socket", socketPath])
    }

    /// Adds one-shot interval requests `prefix-i` due after `seconds[i]`, `batch` to a `fencepost
    /// add` (each batch one control request: one loop turn); returns the wall time (Unix seconds)
    /// just before the first call and just after the last, so each due time lies within
    /// [before + s, after + s].
    func addIntervals(prefix: String, seconds: [Double], batch: Int = 100) throws -> (before: Double, after: Double) {
        let before = Date().timeIntervalSince1970
        for start in stride(from: 0, to: seconds.count, by: batch) {
            let lines = seconds.indices[start ..< min(start + batch, seconds.count)].map { i in
                #"{"id":"\#(prefix)-\#(i)","content":{"title":"T\#(i)","interruptionLevel":"passive"},"trigger":{"interval":{"seconds":\#(seconds[i])}}}"#
            }.joined(separator: "\n") + "\n"
            let out = try cli(["add"], input: lines)
            guard out.status == 0 else { throw SpawnError(message: "fencepost add: \(out.stderr)") }
        }
        return (before, Date().timeIntervalSince1970)
    }

    /// Lines where the agent said a loop turn took over 50 ms (wall or CPU; the line says which).
    var slowTurns: [String] {
        log.split(separator: "\n").filter { $0.contains("loop turn took") }.map(String.init)
    }

    /// From the summary the agent logs when it stops (stop it first): the turn with the most CPU
    /// time, its milliseconds and what it did.
    var mostCPUInOneTurn: (milliseconds: Double, what: String)? { LoopTurnSummary(log: log)?.mostCPU }

    /// From the summary the agent logs when it stops (stop it first): turns whose own work (CPU
    /// time) passed 50 ms, and the summary line; nil when there is no summary.
    var turnsOverBudgetOnTheCPU: (count: Int, summary: String)? {
        LoopTurnSummary(log: log).map { ($0.overOnTheCPU, $0.line) }
    }
}

/// A backend consumer: mosquitto_sub on the broker's Unix socket with a durable session (it
/// reconnects by itself and the broker keeps what arrives meanwhile, while the broker lives or
/// persists), printing each `evt` payload of the device as it comes, duplicates included.
final class EventConsumer {
    let process: SpawnedProcess
    let path: String

    init(broker: MosquittoBroker, device: String, name: String = "backend") throws {
        path = broker.folder.appendingPathComponent("consumer-\(name)").path
        process = try SpawnedProcess(["/usr/bin/mosquitto_sub", "--unix", broker.socketPath, "-V", "5", "-q", "1", "-c", "-i", name,
                                      "-x", "3600", "-t", "fencepost/v1/dev/\(device)/evt", "-F", "%p"], output: path)
    }

    /// Every payload received, in order, duplicates included (lines that are not JSON are kept as
    /// strings: mosquitto_sub's own messages).
    var received: [JSONValue] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { (try? JSONValue.parse(String($0))) ?? .string(String($0)) }
    }

    /// The events deduplicated by id, in the order of their first arrival.
    var unique: [JSONValue] {
        var seen: Set<String> = []
        return received.filter { e in e["id"]?.string.map { seen.insert($0).inserted } ?? false }
    }

    /// Waits until `count` distinct events (of `type` when given) have come.
    @discardableResult
    func waitFor(_ count: Int, type: String? = nil, timeout: Double) -> Bool {
        SpawnedProcess.wait(timeout: timeout) { unique.filter { type == nil || $0["type"]?.string == type }.count >= count }
    }
}

/// What a consumer that dedups by id must see: every event once, seqs strictly increasing from
/// `first`, and no hole except the seqs some gap event announces (a gap event comes after the rows
/// that survived the drop, so a hole may come before its announcement). The problems found.
func sequenceProblems(_ events: [JSONValue], first: Int64 = 1) -> [String] {
    var announced: [ClosedRange<Int64>] = []
    for e in events where e["type"]?.string == "gap" {
        if let from = e["from"]?.int64, let to = e["to"]?.int64, from <= to { announced.append(from ... to) }
    }
    func covered(_ seq: Int64) -> Bool { announced.contains { $0.contains(seq) } }
    var problems: [String] = []
    var expected = first
    for e in events {
        guard let seq = e["seq"]?.int64 else { problems.append("no seq: \(e.serialized())"); continue }
        if seq < expected { problems.append("seq \(seq) after \(expected - 1)") }
        if seq > expected {
            let missing = (expected ..< seq).filter { !covered($0) }
            if !missing.isEmpty { problems.append("seqs \(missing.first!)...\(missing.last!) (\(missing.count)) never came, before \(seq)") }
        }
        expected = max(expected, seq + 1)
    }
    return problems
}

/// An RFC 3339 UTC time with milliseconds (`at` of an event) as Unix seconds.
func unixSeconds(_ text: String?) -> Double? {
    guard let text else { return nil }
    let f = ISO8601DateFormatter()
    f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    if let d = f.date(from: text) { return d.timeIntervalSince1970 }
    f.formatOptions = [.withInternetDateTime]
    return f.date(from: text)?.timeIntervalSince1970
}
