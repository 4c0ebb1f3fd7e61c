// JSON-RPC 2.0 framing of the control socket (design §6): one object a line, no batches.
//
//   → {"jsonrpc":"2.0","id":7,"method":"pending","params":{}}
//   ← {"jsonrpc":"2.0","id":7,"result":[…]}
//   ← {"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"…","data":{"rule":"interval"}}}
//
// A message without "id" is a notification: it is carried out and never answered, not even with
// an error. Parse errors and requests whose id cannot be read are answered with "id": null.
// The id goes back as the very text it came in (``RPCID``): the spec asks for the same value, and
// a number read and written again would not be (`1e3` → `1000.0`, 20 digits rounded).
// A line longer than `[socket] max_message_bytes` is answered -32600 with `"data":{"limit":N}`
// and id null (the line was not read), and the connection is closed once that is written.
import FencepostJSON
import LocalNotifications

/// The error codes of JSON-RPC 2.0 §5.1, and the one server error this agent uses.
public enum RPCErrorCode: Int64, Sendable {
    case parseError = -32700
    case invalidRequest = -32600
    case methodNotFound = -32601
    case invalidParams = -32602
    case internalError = -32603
    /// The state file could not be written (the daemon stops).
    case serverError = -32000
}

/// An error answer: code, a sentence, and optional structured data.
public struct RPCError: Error, Sendable, CustomStringConvertible {
    public var code: RPCErrorCode
    public var message: String
    public var data: JSONValue?

    public init(_ code: RPCErrorCode, _ message: String, data: JSONValue? = nil) {
        self.code = code; self.message = message; self.data = data
    }

    /// A rule broken by a request: -32602 naming the rule in the message and in `data.rule`.
    public static func rule(_ e: RequestError, at path: String = "") -> RPCError {
        RPCError(.invalidParams, "\(path.isEmpty ? "" : path + ": ")\(e.message) (rule \(e.rule.rawValue))",
                 data: .object([("rule", .string(e.rule.rawValue))]))
    }

    /// Wrong parameters that are not a request's rule (a missing key, a wrong type).
    public static func params(_ message: String) -> RPCError { RPCError(.invalidParams, message) }

    public var description: String { message }

    var json: JSONValue {
        var m: [(key: String, value: JSONValue)] = [("code", .integer(code.rawValue)), ("message", .string(message))]
        if let data { m.append(("data", data)) }
        return .object(m)
    }
}

/// A request's id: its JSON text exactly as the client wrote it (a string, a number or null,
/// checked when read), so that the answer carries the same value byte for byte.
struct RPCID: Equatable {
    /// The id's JSON text, without the whitespace around it.
    let text: [UInt8]

    /// `null`: the answer to a line whose id cannot be read.
    static let null = RPCID(text: Array("null".utf8))
}

/// Writing answers.
enum RPCReply {
    /// `{"jsonrpc":"2.0","id":…,"result":…}` and a newline.
    static func result(_ value: JSONValue, id: RPCID) -> [UInt8] { line(id, "result", value) }

    /// `{"jsonrpc":"2.0","id":…,"error":{…}}` and a newline.
    static func error(_ e: RPCError, id: RPCID) -> [UInt8] { line(id, "error", e.json) }

    static func line(_ id: RPCID, _ key: String, _ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        out.append(contentsOf: id.text)
        out.append(contentsOf: ",\"".utf8)
        out.append(contentsOf: key.utf8)
        out.append(contentsOf: "\":".utf8)
        value.serialize(into: &out)
        out.append(contentsOf: "}\n".utf8)
        return out
    }
}

/// One JSON-RPC request read from a line.
struct RPCRequest {
    /// nil for a notification (no "id" member); `null` when the id was given as null.
    var id: RPCID?
    var method: String
    /// The params object (an absent "params" reads as `{}`).
    var params: JSONValue

    /// Reads `line`.
    /// - Returns: the request, or the error to answer with and the id to answer it with (null
    ///   when unreadable; nil: do not answer, the message was a notification).
    static func read(_ line: [UInt8]) -> RPCRead {
        let parsed = line.withUnsafeBufferPointer { bytes in
            Result { () throws(JSONError) in try JSONValue.parse(bytes, keepingTextOf: "id") }
        }
        let value: JSONValue
        let idText: ArraySlice<UInt8>?
        switch parsed {
        case .success(let p): value = p.value; idText = p.memberText
        case .failure(let error): return .failure(RPCError(.parseError, "parse error: \(error)"), id: .null)
        }
        let members: [(key: String, value: JSONValue)]
        switch value {
        case .object(let m): members = m
        case .array: return .failure(RPCError(.invalidRequest, "invalid request: batches are not supported; send one object a line"), id: .null)
        default: return .failure(RPCError(.invalidRequest, "invalid request: a message must be a JSON object, got \(value.kindDescription)"), id: .null)
        }
        // The id first, so that later errors can be answered with it.
        var id: RPCID? = nil
        var hasID = false
        for (k, v) in members where k == "id" {
            hasID = true
            switch v {
            case .string, .integer, .number, .null: id = idText.map { RPCID(text: Array($0)) }
            default: return .failure(RPCError(.invalidRequest, "invalid request: \"id\" must be a string, a number or null, got \(v.kindDescription)"), id: .null)
            }
        }
        let answerID: RPCID = hasID ? (id ?? .null) : .null
        func invalid(_ message: String) -> RPCRead {
            .failure(RPCError(.invalidRequest, "invalid request: " + message), id: answerID)
        }
        for (k, _) in members where !["jsonrpc", "id", "method", "params"].contains(k) {
            return invalid("unknown member \"\(k)\" (a request has jsonrpc, id, method, params)")
        }
        guard value["jsonrpc"] == .string("2.0") else { return invalid("\"jsonrpc\" must be \"2.0\"") }
        guard case .string(let method)? = value["method"] else { return invalid("\"method\" must be a string") }
        let params = value["params"] ?? .object([])
        switch params {
        case .object: break
        case .array:
            // A well-formed request with wrong params: a notification is not answered.
            return .failure(RPCError.params("params must be an object (named parameters), not an array"), id: hasID ? answerID : nil)
        default: return invalid("\"params\" must be an object, got \(params.kindDescription)")
        }
        return .request(RPCRequest(id: hasID ? (id ?? .null) : nil, method: method, params: params))
    }
}

/// A line read: a request, or the error to answer (with `id`; nil: a notification, no answer).
enum RPCRead {
    case request(RPCRequest)
    case failure(RPCError, id: RPCID?)
}
