@testable import fencepost
import FencepostJSON
import FencepostTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension AgentProcess {
    /// Whether the built agent has a fleet link (its config reader knows `[fleet]`); when not,
    /// prints why the test is skipped.
    static let hasFleetLink: Bool = {
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

    /// Writes a config whose [fleet] reaches `broker` (a URL) as `device` (keepalive 5 s, then
    /// `more` lines of the section; `extra` as in ``writeFleetConfig(fleet:extra:)``), starts the
    /// lean agent and waits until it runs and `online` (the broker) says it is online. Whether it
    /// got there, for the test to expect; the log says why not.
    func startOnFleet(_ broker: String, device: String, online: MosquittoBroker, more: String = "", extra: String = "") throws -> Bool {
        try writeFleetConfig(fleet: "broker = \"\(broker)\"\ndevice = \"\(device)\"\nkeepalive = 5\n" + more, extra: extra)
        try start(agent: true)
        return waitUntilRunning() && FleetFaultTests.waitOnline(online)
    }

    /// Writes the config (``writeConfig(_:socketMode:socketExtra:)``): `extra` (top-level keys),
    /// room for many requests, and `fleet` as the body of the [fleet] section (nil: no [fleet]).
    func writeFleetConfig(fleet: String?, extra: String = "") throws {
        try writeConfig("""
            \(extra)
            [engine]
            pending_cap = 20000
            delivered_cap = 20000

            \(fleet.map { "[fleet]\n" + $0 } ?? "")

            """)
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
        SpawnedProcess.wait(timeout: timeout) { has(count, type: type) }
    }

    /// ``waitFor(_:type:timeout:)`` for an `async` test: it waits by suspending.
    func waitFor(_ count: Int, type: String? = nil, timeout: Double) async -> Bool {
        await SpawnedProcess.suspending(timeout: timeout) { has(count, type: type) }
    }

    /// Whether `count` distinct events (of `type` when given) have come.
    func has(_ count: Int, type: String?) -> Bool {
        unique.filter { type == nil || $0["type"]?.string == type }.count >= count
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
