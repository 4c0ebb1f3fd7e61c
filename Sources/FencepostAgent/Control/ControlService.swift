// The control service (design §6): one JSON-RPC line in, one answer out, over the durable
// notification center. No I/O of its own: the daemon reads lines (LineFramer), calls `handle`,
// writes `line`, signals `output`'s deliveries and acknowledgements, and stops on `fatal`.
//
//   method           params                                     result
//   add              {"request":{…}} | {"requests":[…]}         {"added":[ids],"evicted":[outcome…]}
//   pending          {}                                         [{"request","nextFire","regionState","waitingFor"}]
//   remove           {"ids":[…]} | {"all":true}                 {"removed":[ids]}
//   delivered        {}                                         [delivery…]
//   removeDelivered  {"ids":[…]} | {"all":true}                 {"removed":[ids]}
//   ack              {"delivery":id,"action":"default"}         {"delivery","action","snoozed"}
//   categories       {} | {"set":[…]}                           [category…]
//   apply            {"requests":[…],"categories":[…]}          {"added","replaced","removed","unchanged"}
//   status           {}                                         {"clock","gps","badge","delivered","pending"}
//
// Lists are all-or-nothing: every request is checked (on a copy of the engine) before the
// center commits any of them.
import CivilTime
import FencepostJSON
import FencepostLinux
import LocalNotifications

/// What the daemon does with one handled line.
public struct ControlReply {
    /// The answer, a whole line ending in `\n` (enqueue it as is); nil for a JSON-RPC
    /// notification, which is never answered.
    public var line: [UInt8]?
    /// Deliveries to signal and acknowledgements to act on (already committed).
    public var output: EngineOutput
    /// The state file could not be written: the engine's memory is ahead of the file; the daemon
    /// must stop (systemd restarts it from the last commit). `line` then carries a -32000 error.
    public var fatal: CenterError?
    /// The method called (nil for a line that is not a request): the loop names it when slow.
    public var method: String?
    /// An `apply` decoded and cheaply checked, to be carried out in parts by the caller, who
    /// owes its answer (`line` is nil): only when ``ControlService/handle(line:center:clock:deferringApply:status:)``
    /// was asked to defer it.
    var deferredApply: DeferredApply?

    public init(line: [UInt8]?, output: EngineOutput = EngineOutput(), fatal: CenterError? = nil, method: String? = nil) {
        self.line = line; self.output = output; self.fatal = fatal; self.method = method
    }
}

/// A socket's `apply` whose plan the daemon carries out in parts (AgentDaemon+PartedApply.swift),
/// answering `id` once it ends: ``DeferredApply/answer(_:_:)``.
struct DeferredApply {
    /// nil: a JSON-RPC notification, never answered.
    let id: RPCID?
    let requests: [NotificationRequest]
    /// nil: the categories are left as they are.
    let categories: [NotificationCategory]?

    /// The answer line, byte for byte the one of the same apply made at once: its result, or
    /// the error that refused it (nil for a notification).
    static func answer(_ id: RPCID?, _ outcome: Result<ApplyResult, RPCError>) -> [UInt8]? {
        guard let id else { return nil }
        switch outcome {
        case .success(let result): return RPCReply.result(result.json, id: id)
        case .failure(let error): return RPCReply.error(error, id: id)
        }
    }
}

/// The JSON-RPC methods of the agent, over one ``DurableNotificationCenter``.
///
/// Keeps no state of its own: what `apply` installed is remembered in the store (see
/// AppliedRequests.swift).
public struct ControlService {
    /// The methods, in the order `method not found` lists them.
    public static let methods = ["add", "pending", "remove", "delivered", "removeDelivered", "ack", "categories", "apply", "status"]

    public init() {}

    /// Handles one line (without its `\n`). Never traps on any input. `status` is asked only by
    /// the `status` method (it reads the clock's synchronisation and the GPS counters: work no
    /// other line needs). `deferringApply` (the daemon's socket): an `apply` whose params decode
    /// is not carried out but returned as the reply's `deferredApply`, unanswered; its errors
    /// found while decoding are answered at once.
    public mutating func handle(line: [UInt8], center: DurableNotificationCenter, clock: EngineClock,
                                status: () -> AgentStatus) -> ControlReply {
        handle(line: line, center: center, clock: clock, deferringApply: false, status: status)
    }

    mutating func handle(line: [UInt8], center: DurableNotificationCenter, clock: EngineClock, deferringApply: Bool,
                         status: () -> AgentStatus) -> ControlReply {
        let request: RPCRequest
        switch RPCRequest.read(line) {
        case .request(let r): request = r
        case .failure(let error, let id): return ControlReply(line: id.map { RPCReply.error(error, id: $0) })
        }
        var call = Call(center: center, clock: clock, params: request.params)
        call.defersApply = deferringApply
        let result: Result<JSONValue, RPCError>
        do throws(RPCError) {
            result = .success(try dispatch(request.method, &call, status: status))
        } catch {
            result = .failure(error)
        }
        let method = request.method
        if case .success = result, let d = call.deferredApply {
            var reply = ControlReply(line: nil, output: call.output, fatal: call.fatal, method: method)
            reply.deferredApply = DeferredApply(id: request.id, requests: d.requests, categories: d.categories)
            return reply
        }
        guard let id = request.id else { return ControlReply(line: nil, output: call.output, fatal: call.fatal, method: method) }
        switch result {
        case .success(let value):
            return ControlReply(line: RPCReply.result(value, id: id), output: call.output, fatal: call.fatal, method: method)
        case .failure(let e): return ControlReply(line: RPCReply.error(e, id: id), output: call.output, fatal: call.fatal, method: method)
        }
    }

    /// One method called in process with its params (the fleet link's desired document and
    /// commands): the same dispatch, the same code, as a line on the socket. `source`: who
    /// answers a delivery through it.
    public mutating func call(_ method: String, params: JSONValue, center: DurableNotificationCenter, clock: EngineClock,
                              answeredBy source: ResponseSource, status: () -> AgentStatus)
        -> (result: Result<JSONValue, RPCError>, output: EngineOutput, fatal: CenterError?) {
        var call = Call(center: center, clock: clock, params: params, source: source)
        do throws(RPCError) {
            let value = try dispatch(method, &call, status: status)
            return (.success(value), call.output, call.fatal)
        } catch {
            return (.failure(error), call.output, call.fatal)
        }
    }

    /// The answer to a line longer than `limit` bytes (the framer dropped it; its id is unknown).
    /// `data.limit` tells a client the limit, so that it can send smaller messages.
    public static func tooLong(limit: Int) -> [UInt8] {
        RPCReply.error(RPCError(.invalidRequest, "invalid request: the line is longer than \(limit) bytes ([socket] max_message_bytes)",
                                data: .object([("limit", .integer(Int64(limit)))])), id: .null)
    }

    mutating func dispatch(_ method: String, _ call: inout Call, status: () -> AgentStatus) throws(RPCError) -> JSONValue {
        switch method {
        case "add": return try add(&call)
        case "pending": return try pending(&call)
        case "remove": return try remove(&call)
        case "delivered": return try delivered(&call)
        case "removeDelivered": return try removeDelivered(&call)
        case "ack": return try ack(&call)
        case "categories": return try categories(&call)
        case "apply": return try apply(&call)
        case "status": return try statusResult(&call, status())
        default:
            throw RPCError(.methodNotFound, "method not found: \"\(method)\" (methods: \(Self.methods.joined(separator: ", ")))")
        }
    }
}

/// One call's context: the params, and what it produced for the daemon.
struct Call {
    let center: DurableNotificationCenter
    let clock: EngineClock
    let params: JSONValue
    /// Who answers a delivery through this call.
    var source: ResponseSource = .socket
    var output = EngineOutput()
    var fatal: CenterError?
    /// `apply` is decoded only, its list left in `deferredApply` (the daemon's socket).
    var defersApply = false
    var deferredApply: (requests: [NotificationRequest], categories: [NotificationCategory]?)?

    /// Runs an engine operation through the center; a store failure becomes `fatal` and a -32000.
    /// `path` names the list element a broken rule belongs to (`requests[2]`).
    mutating func perform(meta: [(String, String)] = [], store: [StoreChange] = [], path: () -> String = { "" },
                          _ operation: (inout NotificationEngine) throws(RequestError) -> EngineOutput) throws(RPCError) -> EngineOutput {
        do {
            let out = try center.perform(meta: meta, store: store, answeredBy: source, operation)
            output.append(out)
            return out
        } catch {
            switch error {
            case .request(let e): throw RPCError.rule(e, at: path())
            case .store:
                fatal = error
                throw RPCError(.serverError, "\(error); the agent stops")
            }
        }
    }

    /// Checks that params has only `allowed` keys.
    func keys(_ allowed: [String]) throws(RPCError) {
        guard case .object(let m) = params else { throw RPCError.params("params must be an object") }
        for (k, _) in m where !allowed.contains(k) {
            throw RPCError.params("unknown parameter \"\(k)\" (known: \(allowed.isEmpty ? "none" : allowed.joined(separator: ", ")))")
        }
    }

    /// `{"ids":[…]}` or `{"all":true}`: nil for all.
    func idsOrAll() throws(RPCError) -> [String]? {
        try keys(["ids", "all"])
        let ids = params["ids"], all = params["all"]
        switch (ids, all) {
        case (nil, .bool(true)?): return nil
        case (.array(let list)?, nil), (.array(let list)?, .bool(false)?):
            var out: [String] = []
            for (i, v) in list.enumerated() {
                guard case .string(let s) = v else { throw RPCError.params("ids[\(i)] must be a string, got \(v.kindDescription)") }
                out.append(s)
            }
            return out
        default:
            throw RPCError.params("give {\"ids\":[…]} or {\"all\":true}")
        }
    }
}
