// `fencepost fleet push DEVICE FILE`: a config's requests and categories as the board's desired
// state, the next version.
import ArgumentParser
import FencepostAgent
import FencepostJSON
import FencepostLinux
import Fleet

struct FleetPushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Publish a config's requests and categories as a board's desired state.",
        discussion: """
            FILE is read as `fencepost apply` reads it (a TOML config: its [[request]] and \
            [[category]] tables; or JSON lines). The document goes to \
            fencepost/v1/dev/DEVICE/desired, retained, with the version after the one the broker \
            holds (the retained desired document, or the version the board reported, whichever \
            is higher), so a board that is off gets it when it comes back. The board applies a \
            version only when it is newer than the one it applied, all or nothing, through the \
            same path as `fencepost apply`, and says so on …/reported: --wait waits for that.

            Two operators pushing to one board at the same moment can choose the same version; \
            the board applies the first it sees. Give --version to set it yourself.
            """)

    @Argument(help: ArgumentHelp("The board's device id.", valueName: "device"))
    var device: String

    @Argument(help: ArgumentHelp("The config: .toml, or .jsonl.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The version to publish (default: one more than the broker's).", valueName: "n"))
    var version: Int64?

    @Option(help: ArgumentHelp("Wait this many seconds for the board to report the version applied (or why not).", valueName: "seconds"))
    var wait: Double?

    @Flag(help: "Print what was published (and, with --wait, the board's report) as JSON.")
    var json = false

    @OptionGroup var connection: FleetConnectionOptions

    func validate() throws {
        if let version, version < 1 { throw ValidationError("--version must be 1 or more") }
        if let wait, !(wait > 0 && wait <= 86400) { throw ValidationError("--wait must be between 0 and 86400 seconds") }
    }

    func run() throws {
        try runClient("fleet push") { () throws(ClientFailure) in
            let topics = try OperatorTopics.of(device)
            let config = try ClientInput.config(file)
            let session = try connection.connect()
            defer { session.close() }
            let (current, _) = try FleetRetained.versions(session, topics: topics, timeout: connection.timeoutNanoseconds)
            let next = version ?? (current + 1)
            if let version, version <= current {
                throw ClientFailure(ExitCode.validationFailure.rawValue, "--version \(version) is not newer than \(current), the broker's; the board would ignore it")
            }
            var document: [(key: String, value: JSONValue)] = [
                ("v", 1), ("version", .integer(next)), ("issuedAt", .string(OperatorClock.text(milliseconds: OperatorClock.nowMilliseconds()))),
                ("requests", .array(config.requests.map(\.value))),
            ]
            if let c = config.categories { document.append(("categories", .array(c.map(\.value)))) }
            let payload = JSONValue.object(document).serialized()
            do {
                try session.publish(topic: topics.desired, payload: Array(payload.utf8), qos: 1, retain: true,
                                    timeout: connection.timeoutNanoseconds)
            } catch {
                throw ClientFailure(ClientFailure.unavailable, "publishing \(topics.desired): \(error)")
            }
            var report: JSONValue?
            if let wait {
                report = try FleetRetained.waitForReport(session, topics: topics, version: next, timeout: UInt64(wait * 1e9))
                if report == nil {
                    if json { try printJSON(.object([("device", .string(device)), ("version", .integer(next)), ("reported", .null)])) }
                    throw ClientFailure(ClientFailure.tryLater, "published version \(next); \(device) did not report it within \(Int(wait)) s (off, or offline: it applies the retained document when it connects)")
                }
            }
            if json {
                try printJSON(.object([("device", .string(device)), ("version", .integer(next)),
                                       ("requests", .integer(Int64(config.requests.count))),
                                       ("categories", config.categories.map { .integer(Int64($0.count)) } ?? .null),
                                       ("reported", report ?? .null)]))
            } else {
                var text = "\(device): desired version \(next) published (\(config.requests.count) requests"
                text += config.categories.map { ", \($0.count) categories)" } ?? ")"
                text += "\n"
                if let report { text += "\(device): " + FleetRetained.describeReport(report) + "\n" }
                try writeStandardOutput(text)
            }
            if let report, report["state"]?.string != "applied" {
                throw ClientFailure(ClientFailure.dataError, "\(device) did not apply version \(next)")
            }
        }
    }
}

/// Reading what the broker retains for a device.
enum FleetRetained {
    /// How long retained messages are waited for after the SUBACK: mosquitto sends them right
    /// behind it, in the same write.
    static let settle: UInt64 = 300_000_000

    /// The desired version retained on the broker and the one the board reported (0 when none).
    static func versions(_ session: MQTTBlockingSession, topics: FleetTopics, timeout: UInt64) throws(ClientFailure) -> (desired: Int64, reported: Int64) {
        let device = topics.device.text
        let desiredTopic = topics.desired, reportedTopic = topics.reported
        do {
            try session.subscribe(desiredTopic, qos: 1, timeout: timeout)
            try session.subscribe(reportedTopic, qos: 1, timeout: timeout)
        } catch { throw ClientFailure(ClientFailure.unavailable, "subscribing to \(device)'s desired and reported: \(error)") }
        var desired: Int64 = 0, reported: Int64 = 0
        for m in session.messages(for: settle) {
            guard let value = try? JSONValue.parse(String(decoding: m.payload, as: UTF8.self)) else { continue }
            if m.topic == desiredTopic { desired = max(desired, value["version"]?.int64 ?? 0) }
            if m.topic == reportedTopic { reported = max(reported, value["desiredVersion"]?.int64 ?? 0) }
        }
        return (max(desired, reported), reported)
    }

    /// Waits for `reported` to speak of `version` (applied or failed); nil after `timeout`.
    static func waitForReport(_ session: MQTTBlockingSession, topics: FleetTopics, version: Int64, timeout: UInt64) throws(ClientFailure) -> JSONValue? {
        let topic = topics.reported
        let deadline = OperatorClock.monotonic() + timeout
        while let m = session.nextMessage(until: deadline) {
            guard m.topic == topic, let value = try? JSONValue.parse(String(decoding: m.payload, as: UTF8.self)) else { continue }
            guard value["desiredVersion"]?.int64 == version, let state = value["state"]?.string else { continue }
            if state == "applied" || state == "failed" || state == "rejected" { return value }
        }
        return nil
    }

    /// One line for a `reported` document.
    static func describeReport(_ report: JSONValue) -> String {
        let version = report["desiredVersion"]?.int64.map(String.init) ?? "?"
        let state = report["state"]?.string ?? "?"
        var text = "version \(version) \(state)"
        if let error = report["error"], !error.isNull {
            text += ": " + (error["message"]?.string ?? error.string ?? error.serialized())
        }
        return PrintableText.escaped(text)
    }
}
