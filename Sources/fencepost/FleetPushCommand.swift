// `fencepost fleet push DEVICE… [FILE] [--zones GEOJSON]`: a config's requests and categories, and
// a zone set (a blob through the broker), as the boards' desired state, the next version. A
// request list too large for a document goes as a blob too (JSON Lines, checked here by the
// board's own reader before anything is published).
import ArgumentParser
import FencepostAgent
import FencepostJSON
import FencepostLinux
import Fleet
#if canImport(Glibc)
import Glibc
#endif

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
            same path as `fencepost apply`, and says so on …/reported.

            --wait SECONDS follows every board's …/reported at once until each has applied or \
            failed its version, printing a line when a board's standing changes (downloading \
            have/of chunks every tenth of the way, verifying, building, applied, failed and \
            why), then a count: applied, downloading, failed, silent. Exit 0 when all applied; \
            65 naming the boards that failed (and those still silent); 75 naming the silent \
            ones when none failed (a board that is off applies the retained document when it \
            connects, so a later `fencepost fleet devices` shows it):

              fencepost fleet push van-1 van-2 --zones schools.geojson --wait 1800

            --zones publishes a GeoJSON zone set as a blob first: gzipped, named by its \
            SHA-256, in retained chunks under fencepost/v1/fleet/FLEET/blob/SHA/ (a blob the \
            broker holds already is not sent again), and the documents name it; each board \
            fetches, verifies and builds it before it applies the document. Without FILE, each \
            board's requests and categories stay those of its retained desired document.

            FILE's requests go in the document itself while they take at most 48 KiB of JSON (a \
            board applies documents up to its [socket] max_message_bytes, 64 KiB by default); a \
            larger list, or any with --requests-blob, goes as a blob like a zone set (gzipped \
            JSON Lines, one request a line, shared by every board given the same list), and the \
            documents name it. Each request is read first as the board reads it (shape, unique \
            ids); a bad one stops the push naming its line in FILE. A board keeps the list in force: a later \
            version naming the same list (new categories, a new zone set) is applied without \
            fetching it again.

              fencepost fleet push van-1 van-2 customer-sites.jsonl --wait 600

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

    @Option(help: ArgumentHelp("Bytes per chunk of a blob (1024 to 65536).", valueName: "bytes"))
    var chunkSize = BlobManifest.maximumChunkSize

    @Flag(help: "Send FILE's requests as a blob, whatever their size.")
    var requestsBlob = false

    /// The most bytes of JSON requests sent inside a document: room under the boards' default
    /// bound of a document (64 KiB) for its categories and envelope.
    static let inlineRequestBytes = 48 << 10

    @Option(help: ArgumentHelp("The version to publish (default: one more than the broker's).", valueName: "n"))
    var version: Int64?

    @Option(help: ArgumentHelp("Follow the boards' reports for at most this many seconds, until each applied or failed its version.", valueName: "seconds"))
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
        if requestsBlob && split.file == nil { throw ValidationError("--requests-blob sends FILE's requests: give a config FILE") }
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
            var requestList: BlobReference?
            // The requests as JSON Lines, checked, when they go as a blob.
            var listText: [UInt8]?
            if let config, let file {
                let lines = config.requests.map { $0.value.serialized() }
                if requestsBlob || lines.reduce(0, { $0 + $1.utf8.count + 1 }) > Self.inlineRequestBytes {
                    listText = try Self.checkedList(lines, config: config, file: file)
                }
            }
            let fleetName: FleetName
            do throws(FleetError) { fleetName = try FleetName(fleet) } catch { throw ClientFailure(ExitCode.validationFailure.rawValue, "--fleet: \(error.message)") }
            let session = try connection.connect()
            defer { session.close() }
            if let zones {
                let published = try FleetBlobPublisher.publish(zones, format: .geojson, option: "--zones \(zones)", fleet: fleetName, chunkSize: chunkSize,
                                                               session: session, timeout: connection.timeoutNanoseconds)
                zoneSet = published.reference
                if !json { try writeStandardOutput(published.summary + "\n") }
            }
            if let listText, let file {
                let temporary = FleetBlobPublisher.temporaryFolder + "/fencepost-push-\(getpid()).jsonl"
                defer { BlobFile.remove(temporary) }
                do throws(ReplayFailure) { try writeWholeFile(temporary, listText, what: "the request list") } catch {
                    throw ClientFailure(error.code, error.message)
                }
                let published = try FleetBlobPublisher.publish(temporary, format: .jsonl, option: "the requests of \(file)", fleet: fleetName,
                                                               chunkSize: chunkSize, session: session, timeout: connection.timeoutNanoseconds)
                requestList = published.reference
                if !json { try writeStandardOutput(published.summary + "\n") }
            }
            // Every board's version and kept requests are read before anything is published, so
            // no board waits for another's answer and no answer is read (and lost) as an old one.
            var targets: [PushTarget] = []
            let held = try FleetRetained.versions(session, boards: deviceTopics, timeout: connection.timeoutNanoseconds)
            for ((device, topics), retained) in zip(zip(devices, deviceTopics), held) {
                let current = retained.current
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
                    if let requestList {
                        document.append(("requests", .object([("blob", requestList.json)])))
                    } else {
                        document.append(("requests", .array(config.requests.map(\.value))))
                    }
                    if let c = config.categories { document.append(("categories", .array(c.map(\.value)))) }
                    requestCount = config.requests.count
                    categoryCount = config.categories?.count
                } else if let kept = retained.desiredDocument {
                    for key in ["requests", "categories"] { if let v = kept[key] { document.append((key, v)) } }
                    requestCount = kept["requests"]?.array?.count ?? kept["requests"]?["inline"]?.array?.count ?? 0
                    categoryCount = kept["categories"]?.array?.count
                }
                if let zoneSet { document.append(("zoneSet", zoneSet.json)) }
                targets.append(PushTarget(device: device, topics: topics, version: next, document: .object(document),
                                          requests: requestCount, categories: categoryCount))
            }
            for t in targets {
                do {
                    try session.publish(topic: t.topics.desired, payload: Array(t.document.serialized().utf8), qos: 1, retain: true,
                                        timeout: connection.timeoutNanoseconds)
                } catch {
                    throw ClientFailure(ClientFailure.unavailable, "publishing \(t.topics.desired): \(error)")
                }
                if !json {
                    var text = "\(t.device): desired version \(t.version) published (\(t.requests) requests"
                    text += t.categories.map { ", \($0) categories" } ?? ""
                    text += requestList.map { " in request list \($0.sha256.prefix(12))…" } ?? ""
                    text += zoneSet.map { ", zone set \($0.sha256.prefix(12))…)" } ?? ")"
                    try writeStandardOutput(text + "\n")
                }
            }
            var followed = RolloutFollower(targets: targets)
            if let wait {
                try followed.follow(session, until: OperatorClock.monotonic() + UInt64(wait * 1e9), printing: !json)
            }
            if json {
                let reports = targets.map { t -> JSONValue in
                    .object([("device", .string(t.device)), ("version", .integer(t.version)),
                             ("requests", .integer(Int64(t.requests))),
                             ("categories", t.categories.map { .integer(Int64($0)) } ?? .null),
                             ("zoneSet", zoneSet?.json ?? .null),
                             ("requestsBlob", requestList?.json ?? .null),
                             ("reported", followed.reports[t.device] ?? .null),
                             ("rollout", wait == nil ? .null : .string(followed.standing(t.device).bucket.rawValue))])
                }
                try printJSON(reports.count == 1 ? reports[0] : .array(reports))
            }
            if let wait { try followed.finish(waited: wait, printing: !json) }
        }
    }
}

extension FleetPushCommand {
    /// The requests as JSON Lines, one a line, checked by the board's own reader (their shape,
    /// ids unique; the rules that depend on a board's settings are the board's to check); a
    /// request it would refuse stops the push, named at its line in `file`.
    static func checkedList(_ lines: [String], config: ClientInput.Config, file: String) throws(ClientFailure) -> [UInt8] {
        var text: [UInt8] = []
        for line in lines { text += Array(line.utf8); text.append(0x0A) }
        do throws(FleetError) {
            _ = try FleetRequestList.parse(text) { k in k >= 1 && k <= config.requests.count ? "\(file):\(config.requests[k - 1].line)" : "request \(k)" }
        } catch {
            throw ClientFailure(ClientFailure.dataError, error.message)
        }
        return text
    }
}

/// One board of a push: its topics, the version it is given, and the document.
struct PushTarget {
    var device: String
    var topics: FleetTopics
    var version: Int64
    var document: JSONValue
    var requests: Int
    var categories: Int?
}

/// `push --wait`: follows every board's `reported` at once until each has applied or failed its
/// version, or the deadline, printing a line when a board's standing changes (a download every
/// tenth of the way).
struct RolloutFollower {
    let targets: [PushTarget]
    private(set) var reports: [String: JSONValue] = [:]
    private var printed: [String: String] = [:]

    init(targets: [PushTarget]) { self.targets = targets }

    func standing(_ device: String) -> RolloutStanding {
        RolloutStanding(reported: reports[device], version: targets.first { $0.device == device }?.version)
    }

    mutating func follow(_ session: MQTTBlockingSession, until deadline: UInt64, printing: Bool) throws(ClientFailure) {
        var byTopic: [String: PushTarget] = [:]
        for t in targets { byTopic[t.topics.reported] = t }
        while !targets.allSatisfy({ standing($0.device).isFinal }), let m = session.nextMessage(until: deadline) {
            guard let t = byTopic[m.topic], let value = try? JSONValue.parse(m.payload) else { continue }
            let s = RolloutStanding(reported: value, version: t.version)
            if case .silent = s { continue }   // about another version
            reports[t.device] = value
            guard printing else { continue }
            let line = Self.progressKey(s)
            if printed[t.device] != line {
                printed[t.device] = line
                try writeStandardOutput(PrintableText.escaped("\(t.device): version \(t.version) \(s.text)") + "\n")
            }
        }
    }

    /// What a progress line says; a download changes it each tenth of the way.
    static func progressKey(_ s: RolloutStanding) -> String {
        if case .downloading(let have, let of) = s { return "downloading \(of > 0 ? have * 10 / of : 0)" }
        return s.text
    }

    /// The summary, and the exit: 0 when every board applied; 65 naming the failed (and the
    /// silent) boards; 75 when only silence is left (a board off applies it when it connects).
    func finish(waited: Double, printing: Bool) throws(ClientFailure) {
        let standings = targets.map { standing($0.device) }
        if printing { try writeStandardOutput("\(targets.count) boards: \(RolloutSummary(standings).text)\n") }
        var failed: [String] = [], silent: [String] = []
        for (t, s) in zip(targets, standings) {
            switch s {
            case .applied: break
            case .failed: failed.append("\(t.device) failed version \(t.version): " + s.text.dropFirst("failed: ".count))
            case .silent: silent.append("\(t.device) did not report version \(t.version) within \(Int(waited)) s")
            default: silent.append("\(t.device) did not finish version \(t.version) within \(Int(waited)) s (last: \(s.text))")
            }
        }
        guard !failed.isEmpty || !silent.isEmpty else { return }
        let text = PrintableText.escaped((failed + silent).joined(separator: "; "))
        if failed.isEmpty {
            throw ClientFailure(ClientFailure.tryLater, text + " (off, offline or slow: it applies the retained document when it connects)")
        }
        throw ClientFailure(ClientFailure.dataError, text)
    }
}

/// Reading what the broker retains for a device.
enum FleetRetained {
    /// How long retained messages are waited for after the SUBACK: mosquitto sends them right
    /// behind it, in the same write.
    static let settle: UInt64 = 300_000_000

    /// The messages that come until no *retained* one has come for ``settle`` (the retained
    /// ones behind a SUBACK, however many; live messages — boards reporting progress meanwhile —
    /// are kept but do not hold the wait open), for at most `limit` nanoseconds.
    static func settled(_ session: MQTTBlockingSession, limit: UInt64 = 60_000_000_000) -> [MQTTMessage] {
        var out: [MQTTMessage] = []
        var quietAt = OperatorClock.monotonic() + settle
        let end = OperatorClock.monotonic() + limit
        while let m = session.nextMessage(until: min(end, quietAt)) {
            out.append(m)
            if m.retain { quietAt = OperatorClock.monotonic() + settle }
        }
        return out
    }

    /// What the broker retains for a board that `push` needs: the desired document (its requests
    /// and categories are kept when only a zone set is pushed), its version and the version the
    /// board reported (0 when none).
    struct Versions {
        var desired: Int64 = 0
        var reported: Int64 = 0
        var desiredDocument: JSONValue?
        /// The version a new document must be above.
        var current: Int64 { max(desired, reported) }
    }

    /// Every board's ``Versions``, read together: all the subscriptions first, then one wait for
    /// the retained messages behind them (``settled(_:limit:)``), so a push to n boards waits
    /// ``settle`` once, not n times.
    static func versions(_ session: MQTTBlockingSession, boards: [FleetTopics], timeout: UInt64) throws(ClientFailure) -> [Versions] {
        var index: [String: (board: Int, desired: Bool)] = [:]
        for (i, topics) in boards.enumerated() {
            index[topics.desired] = (i, true)
            index[topics.reported] = (i, false)
            do {
                try session.subscribe(topics.desired, qos: 1, timeout: timeout)
                try session.subscribe(topics.reported, qos: 1, timeout: timeout)
            } catch { throw ClientFailure(ClientFailure.unavailable, "subscribing to \(topics.device.text)'s desired and reported: \(error)") }
        }
        var out = [Versions](repeating: Versions(), count: boards.count)
        for m in settled(session) {
            guard let hit = index[m.topic], let value = try? JSONValue.parse(m.payload) else { continue }
            let i = hit.board
            if hit.desired {
                out[i].desired = max(out[i].desired, value["version"]?.int64 ?? 0)
                out[i].desiredDocument = value
            } else {
                out[i].reported = max(out[i].reported, value["desiredVersion"]?.int64 ?? 0)
            }
        }
        return out
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
