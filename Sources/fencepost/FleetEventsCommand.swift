// `fencepost fleet events`: the boards' events, each once, in seq order per board.
import ArgumentParser
import FencepostAgent
import FencepostJSON
import FencepostLinux
import Fleet

struct FleetEventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print the boards' events (deliveries, responses, transitions, gaps), each once.",
        discussion: """
            Subscribes to fencepost/v1/dev/+/evt (or one board's with --device) with QoS 1. A \
            board sends each event until the broker acknowledges it, so after a cut the same \
            event can arrive twice: it is printed once (by its id), and each board's events in \
            their seq order (a hole is waited for --hold seconds, then reported on standard error \
            and passed). A gap event says the board's outbox was full and names what it dropped.

            The broker keeps events only for a session: with --session NAME the broker holds what \
            arrives while this command is not running (for its Session Expiry, --session-expiry) \
            and hands it over at the next run. Without --follow the command ends once nothing \
            has come for --idle seconds.

            Lines: time, device, #seq, type, then what the event says. --json prints each event \
            as the board sent it, with "device" added in front.
            """)

    @Option(help: ArgumentHelp("Only this board's events.", valueName: "device"))
    var device: String?

    @Flag(help: "Keep printing until interrupted (reconnecting after a cut).")
    var follow = false

    @Flag(help: "One JSON object a line.")
    var json = false

    @Option(help: ArgumentHelp("A durable session: this client id, Clean Start off, the broker keeps events for it.", valueName: "name"))
    var session: String?

    @Option(help: ArgumentHelp("With --session: seconds the broker keeps the session after a disconnect.", valueName: "seconds"))
    var sessionExpiry: UInt32 = 7 * 86400

    @Option(help: ArgumentHelp("Without --follow: end after this many seconds with nothing new.", valueName: "seconds"))
    var idle: Double = 2

    @Option(help: ArgumentHelp("Seconds an event after a hole in seq waits for the hole to fill.", valueName: "seconds"))
    var hold: Double = 5

    @OptionGroup var connection: FleetConnectionOptions

    func validate() throws {
        guard idle > 0, idle <= 86400 else { throw ValidationError("--idle must be between 0 and 86400 seconds") }
        guard hold >= 0, hold <= 3600 else { throw ValidationError("--hold must be between 0 and 3600 seconds") }
    }

    func run() throws {
        try runClient("fleet events") { () throws(ClientFailure) in
            let one = try device.map { (d: String) throws(ClientFailure) in try OperatorTopics.of(d) }
            let filter = OperatorTopics.filter(one, .events)
            let mqtt = try connection.connect(clientID: session, sessionExpiry: session == nil ? 0 : sessionExpiry)
            defer { mqtt.close() }
            do { try mqtt.subscribe(filter, qos: 1, timeout: connection.timeoutNanoseconds) } catch {
                throw ClientFailure(ClientFailure.unavailable, "subscribing to \(filter): \(error)")
            }
            var stream = FleetEventStream(holdNanoseconds: UInt64(hold * 1e9))
            var lastNew = OperatorClock.monotonic()
            // The session's other events (connections, disconnections) seen so far.
            var eventsSeen = 0
            while true {
                let now = OperatorClock.monotonic()
                if !follow && now >= lastNew + UInt64(idle * 1e9) { break }
                let step = min(UInt64(idle * 1e9), 250_000_000)
                // The client reconnects by itself; a broker that lost the session needs the
                // subscription again.
                for event in mqtt.pending.dropFirst(eventsSeen) {
                    if case .connected(let sessionPresent) = event, !sessionPresent {
                        _ = try? mqtt.client.subscribe(filter, qos: 1)
                    }
                    if case .disconnected(let why) = event {
                        if !follow { throw ClientFailure(ClientFailure.unavailable, "disconnected: \(why)") }
                        writeErrorLine("fencepost fleet events: disconnected (\(why)); reconnecting")
                    }
                }
                eventsSeen = mqtt.pending.count
                if let m = mqtt.nextMessage(until: now + step) {
                    guard let device = OperatorTopics.device(of: m.topic, .events) else { continue }
                    switch ReceivedFleetEvent.parse(device: device, payload: m.payload) {
                    case .failure(let problem):
                        writeErrorLine("fencepost fleet events: \(m.topic): \(problem.message)")
                    case .success(let event):
                        let out = stream.receive(event, now: OperatorClock.monotonic())
                        if !out.events.isEmpty { lastNew = OperatorClock.monotonic() }
                        try emit(out)
                    }
                }
                try emit(stream.expire(now: OperatorClock.monotonic()))
            }
            try emit(stream.finish())
        }
    }

    private func emit(_ out: FleetEventStream.Output) throws(ClientFailure) {
        for hole in out.missing {
            writeErrorLine("fencepost fleet events: \(hole.device): seq \(hole.from)\(hole.from == hole.to ? "" : "-\(hole.to)") not received (waited \(hold) s)")
        }
        guard !out.events.isEmpty else { return }
        var text = ""
        for e in out.events {
            if json {
                var members: [(key: String, value: JSONValue)] = [("device", .string(e.device))]
                members += (e.payload.object ?? []).filter { $0.key != "device" }
                text += JSONValue.object(members).serialized() + "\n"
            } else {
                text += Self.line(e) + "\n"
            }
        }
        try writeStandardOutput(text)
    }

    /// `2026-11-26T07:12:03.120Z  van-0042  #123  delivery  depot/3/12 (request depot; region z-1234 enter)`.
    static func line(_ e: ReceivedFleetEvent) -> String {
        let p = e.payload
        var what: [String] = []
        switch e.type {
        case "delivery":
            if let d = p["delivery"]?.string { what.append(d) }
            var detail: [String] = []
            if let r = p["request"]?.string { detail.append("request \(r)") }
            if let t = p["trigger"], let kind = t["kind"]?.string {
                detail.append([kind, t["region"]?.string, t["event"]?.string].compactMap { $0 }.joined(separator: " "))
            }
            if !detail.isEmpty { what.append("(" + detail.joined(separator: "; ") + ")") }
        case "response":
            what += [p["delivery"]?.string, p["action"]?.string, p["source"]?.string.map { "from \($0)" }].compactMap { $0 }
        case "transition":
            what += [p["region"]?.string, p["event"]?.string].compactMap { $0 }
        case "gap":
            let from = p["from"]?.int64.map(String.init) ?? "?", to = p["to"]?.int64.map(String.init) ?? "?"
            what.append("seq \(from)-\(to) dropped")
            if let reason = p["reason"]?.string { what.append("(\(reason))") }
            if let dropped = p["dropped"]?.object {
                what.append(dropped.map { "\($0.key) \($0.value.int64.map(String.init) ?? $0.value.serialized())" }.joined(separator: ", "))
            }
        default:
            break
        }
        let at = p["at"]?.string ?? "-"
        return PrintableText.escaped("\(at)  \(e.device)  #\(e.seq)  \(e.type)" + (what.isEmpty ? "" : "  " + what.joined(separator: " ")))
    }
}
