// `fencepost fleet devices`: every board the broker knows, from its retained status, desired,
// reported and health documents, and where the roll-out stands across them.
import ArgumentParser
import FencepostAgent
import FencepostJSON
import FencepostLinux
import Fleet

struct FleetDevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the boards: online or not, the version applied, their health.",
        discussion: """
            Reads the retained fencepost/v1/dev/+/status, …/desired, …/reported and …/health \
            documents (a board publishes its own when it connects and when they change; desired \
            is the operator's). A board is offline when its Will said so: 1.5 × its keepalive \
            after its link died, plus its Will Delay.

            Columns: DEVICE, STATUS (online or offline, since), DESIRED (the version pushed and \
            the first 12 digits of its zone set's SHA-256), ROLL-OUT (where the board stands \
            with that version: applied, downloading have/of chunks, verifying, building, failed \
            and why, or silent: no word about it yet), APPLIED (the version its last report \
            speaks of, and that report's state), OUTBOX (events not yet acknowledged, and the \
            age of the oldest), CLOCK, FIX, PENDING (requests), SEEN (when its health was \
            published). A last line counts the boards: applied, downloading (verifying and \
            building included), failed, silent. --json prints one object per board with the \
            four documents as they are and its "rollout" standing.
            """)

    @Option(help: ArgumentHelp("Only this board.", valueName: "device"))
    var device: String?

    @Flag(help: "One JSON object a line: {\"device\":…, \"status\":…, \"reported\":…, \"health\":…}.")
    var json = false

    @OptionGroup var connection: FleetConnectionOptions

    func run() throws {
        try runClient("fleet devices") { () throws(ClientFailure) in
            let one = try device.map { (d: String) throws(ClientFailure) in try OperatorTopics.of(d) }
            let mqtt = try connection.connect()
            defer { mqtt.close() }
            let leaves: [(name: String, topic: FleetTopics.Leaf)] = [("status", .status), ("desired", .desired), ("reported", .reported), ("health", .health)]
            for leaf in leaves {
                let filter = OperatorTopics.filter(one, leaf.topic)
                do { try mqtt.subscribe(filter, qos: 1, timeout: connection.timeoutNanoseconds) } catch {
                    throw ClientFailure(ClientFailure.unavailable, "subscribing to \(filter): \(error)")
                }
            }
            var boards: [String: [String: JSONValue]] = [:]
            for m in FleetRetained.settled(mqtt) {
                for leaf in leaves {
                    guard let name = OperatorTopics.device(of: m.topic, leaf.topic) else { continue }
                    let value = (try? JSONValue.parse(String(decoding: m.payload, as: UTF8.self)))
                        ?? .string(String(decoding: m.payload, as: UTF8.self))
                    boards[name, default: [:]][leaf.name] = value
                }
            }
            let names = boards.keys.sorted()
            if json {
                var text = ""
                for name in names {
                    let b = boards[name]!
                    let standing = Self.standing(b)
                    text += JSONValue.object([("device", .string(name))] + leaves.map { ($0.name, b[$0.name] ?? .null) }
                        + [("rollout", .string(standing.bucket.rawValue)), ("rolloutText", .string(standing.text))]).serialized() + "\n"
                }
                return try writeStandardOutput(text)
            }
            if names.isEmpty {
                return try writeStandardOutput(device.map { "the broker holds nothing for \($0)\n" } ?? "the broker holds no board's status\n")
            }
            let now = OperatorClock.nowMilliseconds()
            var summary = RolloutSummary()
            let rows = names.map { name -> [String] in
                let b = boards[name]!
                let standing = Self.standing(b)
                summary.add(standing)
                return [name, Self.status(b["status"]), Self.desired(b["desired"]), PrintableText.escaped(standing.text),
                        Self.applied(b["reported"]), Self.outbox(b["health"], now: now),
                        b["health"]?["clock"]?.string ?? "-",
                        Self.fix(b["health"]), b["health"]?["pending"]?.int64.map(String.init) ?? "-",
                        Self.age(b["health"]?["at"]?.string, now: now)]
            }
            try writeStandardOutput(ClientText.table(["DEVICE", "STATUS", "DESIRED", "ROLL-OUT", "APPLIED", "OUTBOX", "CLOCK", "FIX", "PENDING", "SEEN"], rows)
                                    + "\(names.count) boards: \(summary.text)\n")
        }
    }

    /// Where a board stands with its retained desired version (any version when none is retained).
    static func standing(_ b: [String: JSONValue]) -> RolloutStanding {
        RolloutStanding(reported: b["reported"], version: b["desired"]?["version"]?.int64)
    }

    /// `v7 9f2c01ab34cd…` (the version pushed and its zone set), `v7`, or `-`.
    static func desired(_ d: JSONValue?) -> String {
        guard let d, let version = d["version"]?.int64 else { return "-" }
        let sha = d["zoneSet"]?["sha256"]?.string.map { " " + $0.prefix(12) + "…" } ?? ""
        return PrintableText.escaped("v\(version)" + sha)
    }

    static func status(_ s: JSONValue?) -> String {
        guard let s else { return "-" }
        guard let online = s["online"]?.bool else { return "?" }
        let since = s["since"]?.string ?? s["at"]?.string
        return (online ? "online" : "offline") + (since.map { " since \($0)" } ?? "")
    }

    static func applied(_ r: JSONValue?) -> String {
        guard let r else { return "-" }
        let text = FleetRetained.describeReport(r)
        return text.hasPrefix("version ") ? "v" + text.dropFirst(8) : text
    }

    static func outbox(_ h: JSONValue?, now: Int64) -> String {
        guard let o = h?["outbox"] else { return "-" }
        let depth = o["depth"]?.int64 ?? o["rows"]?.int64
        var text = depth.map(String.init) ?? "?"
        if let oldest = o["oldestSeconds"]?.double, (depth ?? 0) > 0 {
            text += " (oldest \(InstantText.duration(Int64(oldest.rounded()))))"
        }
        return text
    }

    static func fix(_ h: JSONValue?) -> String {
        guard let f = h?["fix"], let age = f["ageSeconds"]?.double else { return "none" }
        var text = age < 1 ? "now" : "\(InstantText.duration(Int64(age.rounded()))) ago"
        if let error = f["error"]?.double { text += " ±\(Int(error.rounded())) m" }
        return text
    }

    /// `3min ago` from an RFC 3339 time with milliseconds.
    static func age(_ at: String?, now: Int64) -> String {
        guard let at, case .success(let instant) = InstantText.parse(Array(at.utf8)) else { return "-" }
        let seconds = now / 1000 - instant.secondsSinceEpoch
        return seconds <= 0 ? "now" : "\(InstantText.duration(seconds)) ago"
    }
}
