// `fencepost fleet push DEVICE… [FILE] [--zones GEOJSON]`: a config's requests and categories, and
// a zone set (a blob through the broker), as the boards' desired state, the next version.
import ArgumentParser
import FencepostAgent
import FencepostJSON
import FencepostLinux
import Fleet

struct FleetPushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Publish a config's requests and categories, and a zone set, as boards' desired state.",
        discussion: """
            FILE is read as `fencepost apply` reads it (a TOML config: its [[request]] and \
            [[category]] tables; or JSON lines). The document goes to \
            fencepost/v1/dev/DEVICE/desired, retained, with the version after the one the broker \
            holds (the retained desired document, or the version the board reported, whichever \
            is higher), so a board that is off gets it when it comes back. The board applies a \
            version only when it is newer than the one it applied, all or nothing, through the \
            same path as `fencepost apply`, and says so on …/reported: --wait waits for that.

            --zones publishes a GeoJSON zone set as a blob first: gzipped, named by its \
            SHA-256, in retained chunks under fencepost/v1/fleet/FLEET/blob/SHA/ (a blob the \
            broker holds already is not sent again), and the documents name it; each board \
            fetches, verifies and builds it before it applies the document. Without FILE, each \
            board's requests and categories stay those of its retained desired document.

            Device ids have no dot or slash: the last argument is FILE when it has one.

            Two operators pushing to one board at the same moment can choose the same version; \
            the board applies the first it sees. Give --version to set it yourself.
            """)

    @Argument(help: ArgumentHelp("The boards' device ids, then the config (.toml or .jsonl) unless --zones alone is pushed.", valueName: "device… [file]"))
    var targets: [String] = []

    @Option(help: ArgumentHelp("A GeoJSON zone set to publish and name in the documents.", valueName: "geojson"))
    var zones: String?

    @Option(help: ArgumentHelp("The fleet whose topics hold the zone set's blob.", valueName: "name"))
    var fleet = "default"

    @Option(help: ArgumentHelp("Bytes per chunk of the zone set's blob (1024 to 65536).", valueName: "bytes"))
    var chunkSize = BlobManifest.maximumChunkSize

    @Option(help: ArgumentHelp("The version to publish (default: one more than the broker's).", valueName: "n"))
    var version: Int64?

    @Option(help: ArgumentHelp("Wait this many seconds for the boards to report the version applied (or why not).", valueName: "seconds"))
    var wait: Double?

    @Flag(help: "Print what was published (and, with --wait, the board's report) as JSON.")
    var json = false

    @OptionGroup var connection: FleetConnectionOptions

    /// The device ids and the config file among the arguments.
    var split: (devices: [String], file: String?) {
        guard let last = targets.last, last.contains(".") || last.contains("/") else { return (targets, nil) }
        return (Array(targets.dropLast()), last)
    }

    func validate() throws {
        if let version, version < 1 { throw ValidationError("--version must be 1 or more") }
        if let wait, !(wait > 0 && wait <= 86400) { throw ValidationError("--wait must be between 0 and 86400 seconds") }
        if split.devices.isEmpty { throw ValidationError("name at least one device") }
        if split.file == nil && zones == nil { throw ValidationError("give a config FILE, --zones, or both") }
        if !(BlobManifest.minimumChunkSize...BlobManifest.maximumChunkSize).contains(chunkSize) {
            throw ValidationError("--chunk-size must be from \(BlobManifest.minimumChunkSize) to \(BlobManifest.maximumChunkSize)")
        }
    }

    func run() throws {
        try runClient("fleet push") { () throws(ClientFailure) in
            let (devices, file) = split
            let deviceTopics = try devices.map { (d) throws(ClientFailure) -> FleetTopics in try OperatorTopics.of(d) }
            let config = try file.map { (f) throws(ClientFailure) -> ClientInput.Config in try ClientInput.config(f) }
            var zoneSet: BlobReference?
            var blobText = ""
            let session = try connection.connect()
            defer { session.close() }
            if let zones {
                let name: FleetName
                do throws(FleetError) { name = try FleetName(fleet) } catch { throw ClientFailure(ExitCode.validationFailure.rawValue, "--fleet: \(error.message)") }
                let published = try FleetBlobPublisher.publish(zones: zones, fleet: name, chunkSize: chunkSize, session: session, timeout: connection.timeoutNanoseconds)
                zoneSet = published.reference
                blobText = published.summary
                if !json { try writeStandardOutput(blobText + "\n") }
            }
            var reports: [JSONValue] = []
            var failed: [String] = []
            for (device, topics) in zip(devices, deviceTopics) {
                let (current, _) = try FleetRetained.versions(session, topics: topics, timeout: connection.timeoutNanoseconds)
                let next = version ?? (current + 1)
                if let version, version <= current {
                    throw ClientFailure(ExitCode.validationFailure.rawValue, "--version \(version) is not newer than \(current), \(device)'s on the broker; the board would ignore it")
                }
                var document: [(key: String, value: JSONValue)] = [
                    ("v", 1), ("version", .integer(next)), ("issuedAt", .string(OperatorClock.text(milliseconds: OperatorClock.nowMilliseconds()))),
                ]
                var requestCount = 0
                var categoryCount: Int?
                if let config {
                    document.append(("requests", .array(config.requests.map(\.value))))
                    if let c = config.categories { document.append(("categories", .array(c.map(\.value)))) }
                    requestCount = config.requests.count
                    categoryCount = config.categories?.count
                } else if let kept = try FleetBlobPublisher.retainedDesired(session, topics: topics, timeout: connection.timeoutNanoseconds) {
                    for key in ["requests", "categories"] { if let v = kept[key] { document.append((key, v)) } }
                    requestCount = kept["requests"]?.array?.count ?? kept["requests"]?["inline"]?.array?.count ?? 0
                    categoryCount = kept["categories"]?.array?.count
                }
                if let zoneSet { document.append(("zoneSet", zoneSet.json)) }
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
                    if report == nil { failed.append("published version \(next); \(device) did not report it within \(Int(wait)) s") }
                }
                if json {
                    reports.append(.object([("device", .string(device)), ("version", .integer(next)),
                                            ("requests", .integer(Int64(requestCount))),
                                            ("categories", categoryCount.map { .integer(Int64($0)) } ?? .null),
                                            ("zoneSet", zoneSet?.json ?? .null),
                                            ("reported", report ?? .null)]))
                } else {
                    var text = "\(device): desired version \(next) published (\(requestCount) requests"
                    text += categoryCount.map { ", \($0) categories" } ?? ""
                    text += zoneSet.map { ", zone set \($0.sha256.prefix(12))…)" } ?? ")"
                    text += "\n"
                    if let report { text += "\(device): " + FleetRetained.describeReport(report) + "\n" }
                    try writeStandardOutput(text)
                }
                if let report, report["state"]?.string != "applied" { failed.append("\(device) did not apply version \(next)") }
            }
            if json { try printJSON(reports.count == 1 ? reports[0] : .array(reports)) }
            if !failed.isEmpty {
                let noAnswer = failed.allSatisfy { $0.contains("did not report it") }
                throw ClientFailure(noAnswer ? ClientFailure.tryLater : ClientFailure.dataError,
                                    failed.joined(separator: "; ") + (noAnswer ? " (off, or offline: it applies the retained document when it connects)" : ""))
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
