// The desired document (retained on D/desired) and the commands (D/cmd).
import CivilTime
import FencepostJSON

/// A desired-state document:
///
///     {"v":1,"version":42,"issuedAt":"2026-11-26T06:00:00Z",
///      "requests":[…] | {"inline":[…]} | {"blob":{…}},  "categories":[…], "zoneSet":{…}}
///
/// `requests` and `categories` have exactly the shapes of the control socket's `apply`; the agent
/// hands them to the same code (all or nothing). A list too large for a document travels as a
/// blob (`{"blob":{"sha256":…,"format":"jsonl",…}}`, FleetBlob.swift): gzip-compressed JSON Lines,
/// one request per line; the board fetches, checks and reads it, then applies it the same way. `requests` absent: none (a desired document
/// says the whole state); `categories` absent: the categories are left as they are.
/// Unknown members are refused (a typo must not silently mean "nothing").
public struct FleetDesiredDocument: Sendable {
    public var version: Int64
    public var issuedAt: WallInstant?
    /// The `apply` parameters: `{"requests":[…]}` plus `"categories":[…]` when given (with a
    /// requests blob, `requests` is empty here: the blob's list takes its place).
    public var applyParameters: JSONValue
    /// The requests given inline (0 when they come as a blob: the blob says how many).
    public var requestCount: Int
    /// The request list as a blob (FleetBlob.swift); nil: `requests` is inline (or absent).
    public var requestsBlob: BlobReference?
    /// The zone set to have, a blob named by its hash (FleetBlob.swift); nil: the zone set stays as it is.
    public var zoneSet: BlobReference?

    /// The largest document of the protocol. A board applies at most its control socket's bound
    /// on a line (`[socket] max_message_bytes`, 64 KiB by default): the document is applied in one
    /// loop turn, as the socket's `apply` is.
    public static let maximumBytes = 1 << 20

    /// Parses a document of at most `maximumBytes` (and ``maximumBytes``); a larger one is refused
    /// as `desired.tooLarge`, naming both sizes and the setting.
    public init(parsing payload: [UInt8], maximumBytes limit: Int = Self.maximumBytes) throws(FleetError) {
        let bound = min(limit, Self.maximumBytes)
        guard payload.count <= bound else {
            throw FleetError("desired.tooLarge", "the desired document has \(payload.count) bytes; this board applies at most \(bound)"
                + (bound < Self.maximumBytes ? " ([socket] max_message_bytes, the bound of the control socket's apply)" : ""))
        }
        let doc: JSONValue
        do { doc = try JSONValue.parse(payload) } catch {
            throw FleetError("desired.invalid", "the desired document is not JSON: \(error)")
        }
        guard let members = doc.object else {
            throw FleetError("desired.invalid", "the desired document must be an object, got \(doc.kindDescription)")
        }
        for m in members where !["v", "version", "issuedAt", "requests", "categories", "zoneSet", "settings"].contains(m.key) {
            throw FleetError("desired.invalid", "the desired document has an unknown key \"\(m.key)\"")
        }
        if let v = doc["v"], v.int64 != 1 {
            throw FleetError("desired.unsupported", "the desired document's \"v\" is \(v.serialized()); this agent reads version 1")
        }
        guard let version = doc["version"]?.int64, version > 0 else {
            throw FleetError("desired.invalid", "the desired document needs \"version\": an integer above 0")
        }
        self.version = version
        if let t = doc["issuedAt"] {
            guard let s = t.string, case .success(let parsed) = RFC3339.parse(Array(s.utf8)) else {
                throw FleetError("desired.invalid", "\"issuedAt\" must be an RFC 3339 time, got \(t.serialized())")
            }
            issuedAt = parsed.instant
        }
        if let z = doc["zoneSet"] { zoneSet = try BlobReference(parsing: z, key: "zoneSet") }
        var requests: [JSONValue] = []
        switch doc["requests"] {
        case nil: break
        case .array(let list)?: requests = list
        case .object(let o)?:
            switch (o.count, o.first?.key, o.first?.value) {
            case (1, "inline", .array(let list)?): requests = list
            case (1, "blob", let reference?): requestsBlob = try BlobReference(parsing: reference, key: "requests.blob", format: .jsonl)
            default:
                throw FleetError("desired.invalid", "\"requests\" must be an array, {\"inline\": [...]} or {\"blob\": {...}}")
            }
        case let v?: throw FleetError("desired.invalid", "\"requests\" must be an array, {\"inline\": [...]} or {\"blob\": {...}}, got \(v.kindDescription)")
        }
        var params: [(key: String, value: JSONValue)] = [("requests", .array(requests))]
        switch doc["categories"] {
        case nil: break
        case .array(let list)?: params.append(("categories", .array(list)))
        case let v?: throw FleetError("desired.invalid", "\"categories\" must be an array, got \(v.kindDescription)")
        }
        requestCount = requests.count
        applyParameters = .object(params)
    }
}

/// A command on D/cmd:
///
///     {"v":1,"id":"op-77","name":"ack","args":{"delivery":"depot/3/12","action":"dismiss"},
///      "expiresAt":"2026-11-26T08:00:00Z"}
///
/// `expiresAt` is mandatory: an expired command is refused, never acted on late.
public struct FleetCommand: Hashable, Sendable {
    public enum Name: String, Hashable, Sendable, CaseIterable {
        case ack, removeDelivered, status, resync
    }

    public var id: String
    public var name: Name
    public var args: JSONValue
    public var expiresAt: WallInstant

    public static let maximumBytes = 64 << 10

    /// A command refused at parsing: its id when readable (so the refusal can name it), and why.
    public struct Refusal: Error, Hashable, Sendable {
        public var id: String?
        public var error: FleetError
        init(_ id: String?, _ error: FleetError) { self.id = id; self.error = error }
    }

    /// Parses a command.
    public static func parse(_ payload: [UInt8]) -> Result<FleetCommand, Refusal> {
        guard payload.count <= maximumBytes else {
            return .failure(Refusal(nil, FleetError("command.invalid", "the command has \(payload.count) bytes; at most \(maximumBytes)")))
        }
        guard let doc = try? JSONValue.parse(payload), doc.object != nil else {
            return .failure(Refusal(nil, FleetError("command.invalid", "the command is not a JSON object")))
        }
        let id = doc["id"]?.string
        guard let id, !id.isEmpty, id.utf8.count <= 128 else {
            return .failure(Refusal(nil, FleetError("command.invalid", "the command needs \"id\": a string of 1 to 128 bytes")))
        }
        guard let nameText = doc["name"]?.string else {
            return .failure(Refusal(id, FleetError("command.invalid", "command \(id): \"name\" is missing")))
        }
        guard let name = Name(rawValue: nameText) else {
            let known = Name.allCases.map { $0.rawValue }.joined(separator: ", ")
            return .failure(Refusal(id, FleetError("command.unknown", "command \(id): unknown name \"\(nameText)\" (known: \(known))")))
        }
        guard let e = doc["expiresAt"] else {
            return .failure(Refusal(id, FleetError("command.invalid", "command \(id): \"expiresAt\" is mandatory")))
        }
        guard let s = e.string, case .success(let t) = RFC3339.parse(Array(s.utf8)) else {
            return .failure(Refusal(id, FleetError("command.invalid", "command \(id): \"expiresAt\" must be an RFC 3339 time, got \(e.serialized())")))
        }
        let args = doc["args"] ?? .object([])
        guard args.object != nil else {
            return .failure(Refusal(id, FleetError("command.invalid", "command \(id): \"args\" must be an object")))
        }
        return .success(FleetCommand(id: id, name: name, args: args, expiresAt: t.instant))
    }

    /// Whether the command may be acted on at `now`. `now` nil: the wall clock is not trusted, so
    /// the expiry cannot be checked — refused too (a stale command must not act).
    public func check(now: WallInstant?) -> FleetError? {
        guard let now else {
            return FleetError("command.clockUntrusted", "command \(id): the device's clock is not trusted, so its expiry cannot be checked")
        }
        if now >= expiresAt {
            return FleetError("command.expired", "command \(id) expired at \(expiresAt) (now \(now))")
        }
        return nil
    }

    /// The result payload on D/cmd/res.
    public static func result(id: String?, ok: Bool, result: JSONValue?, error: FleetError?) -> [UInt8] {
        var m: [(key: String, value: JSONValue)] = [("v", 1), ("id", id.map { .string($0) } ?? .null), ("ok", .bool(ok))]
        if let result { m.append(("result", result)) }
        if let error { m.append(("error", .object([("code", .string(error.code)), ("message", .string(error.message))]))) }
        return bytes(.object(m))
    }
}
