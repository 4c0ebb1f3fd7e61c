// The CLI's side of the control protocol: one JSON-RPC call per command over the agent's Unix
// socket, errors mapped to sysexits codes, and the helpers the client commands share (tables,
// times in UTC with "in 3h 12min").
import ArgumentParser
import CivilTime
import FencepostAgent
import FencepostJSON
import FencepostLinux
#if canImport(Glibc)
import Glibc
#endif

/// `--socket PATH`, shared by the client commands.
struct SocketOptions: ParsableArguments {
    static let defaultPath = "/run/fencepost/control.sock"

    @Option(name: .long, help: ArgumentHelp("The agent's control socket (default \(SocketOptions.defaultPath), or $FENCEPOST_SOCKET).", valueName: "path"))
    var socket: String?

    /// The path to use: the option, else `$FENCEPOST_SOCKET`, else the default.
    var path: String {
        if let socket { return socket }
        if let env = getenv("FENCEPOST_SOCKET"), let s = String(validatingCString: env), !s.isEmpty { return s }
        return Self.defaultPath
    }
}

/// Why a client command failed: the message for standard error and the exit status.
struct ClientFailure: Error {
    var code: Int32
    var message: String
    /// Set when the agent refused the message as longer than its limit (`[socket]
    /// max_message_bytes`): that limit, in bytes. Nothing of the message was carried out.
    var messageLimit: Int?
    init(_ code: Int32, _ message: String, messageLimit: Int? = nil) {
        self.code = code; self.message = message; self.messageLimit = messageLimit
    }

    /// EX_DATAERR: the agent refused the parameters, or an input file is wrong.
    static let dataError: Int32 = 65
    /// EX_NOINPUT.
    static let noInput: Int32 = 66
    /// EX_UNAVAILABLE: the agent cannot be reached.
    static let unavailable: Int32 = 69
    /// EX_IOERR.
    static let ioError: Int32 = 74
}

/// One call to the agent.
enum ControlClient {
    /// How long to wait for the answer (an `apply` of a large config included).
    static let timeout: Duration = .seconds(30)
    /// The longest answer taken (listings come in pages of at most 512 KiB; one large request
    /// with a big polygon can exceed that).
    static let maximumAnswerBytes = 16 << 20
    /// The agent's longest message unless its `[socket] max_message_bytes` says otherwise (it
    /// answers a longer line with its limit: ``ClientFailure/messageLimit``).
    static let defaultMessageLimit = 65536

    /// The line ``call(_:_:_:timeout:)`` sends, without its newline.
    static func requestLine(_ method: String, _ params: JSONValue) -> String {
        JSONValue.object([("jsonrpc", "2.0"), ("id", 1), ("method", .string(method)), ("params", params)]).serialized()
    }

    /// Calls `method` with `params` and returns the result, waiting at most `timeout` for it.
    /// - Throws: 69 when the agent cannot be reached (the message says whether nothing listens,
    ///   or it listens and did not answer), 65 for invalid params (-32602), 1 for any other
    ///   JSON-RPC error.
    static func call(_ socket: String, _ method: String, _ params: JSONValue = .object([]),
                     timeout: Duration = ControlClient.timeout) throws(ClientFailure) -> JSONValue {
        func unreachable(_ detail: String) -> ClientFailure {
            ClientFailure(ClientFailure.unavailable, "cannot reach the agent at \(socket): \(detail) (is `fencepost run` running?)")
        }
        func failed(_ detail: String) -> ClientFailure {
            ClientFailure(ClientFailure.unavailable, "the agent at \(socket) accepted `\(method)` but \(detail)")
        }
        func connectDetail(_ e: UnixSocketError) -> String {
            switch e.reason {
            case .system(let operation, let errno): "\(operation): \(errno)"
            default: "\(e)"
            }
        }
        let client: UnixClient
        do { client = try UnixClient.connect(socket, maximumLineLength: maximumAnswerBytes) } catch { throw unreachable(connectDetail(error)) }
        /// What went wrong after the connection was made: the agent runs, so no "is it running?".
        func answerDetail(_ e: UnixSocketError) -> ClientFailure {
            let got = client.bytesReceived
            switch e.reason {
            case .timedOut where got == 0:
                return failed("sent no answer within \(timeout) (it is busy or stuck; `journalctl -u fencepost` says which)")
            case .timedOut:
                return failed("its answer stopped after \(got) bytes and did not end within \(timeout)")
            case .closedByPeer where got == 0:
                return failed("closed the connection without answering (refused, or closed as idle or at its connection cap; see its log)")
            case .closedByPeer:
                return failed("closed the connection after \(got) bytes, before the answer ended")
            case .lineTooLong(let limit):
                return failed("its answer is longer than this client takes (\(limit / (1 << 20)) MiB); ask for pages with --limit")
            case .system(let operation, let errno):
                return failed("the connection failed: \(operation): \(errno)")
            default:
                return failed("\(e)")
            }
        }
        let request = requestLine(method, params)
        let line: String
        do {
            do {
                try client.sendLine(request)
            } catch {
                // The agent may have answered and closed before reading (a refused peer): its
                // answer is still in the socket's receive buffer.
                guard let refusal = try? client.readLine(timeout: .milliseconds(200)) else { throw error }
                line = refusal
                return try interpret(line, sent: request.utf8.count)
            }
            line = try client.readLine(timeout: timeout)
        } catch let e as ClientFailure { throw e } catch let e as UnixSocketError { throw answerDetail(e) } catch {
            throw failed("\(error)")
        }
        return try interpret(line, sent: request.utf8.count)
    }

    /// The result of a JSON-RPC answer line, or its error as a failure. `sent`: the length of
    /// the line sent, told when the agent found it too long.
    static func interpret(_ line: String, sent: Int) throws(ClientFailure) -> JSONValue {
        let answer: JSONValue
        do { answer = try JSONValue.parse(line) } catch {
            throw ClientFailure(1, "the agent answered something that is not JSON: \(error)")
        }
        if let error = answer["error"] {
            if error["code"]?.int64 == -32600, let limit = error["data"]?["limit"]?.int64 {
                throw ClientFailure(ClientFailure.dataError,
                                    "the message is \(sent) bytes; the agent takes messages of at most \(limit) bytes (its [socket] max_message_bytes)",
                                    messageLimit: Int(clamping: limit))
            }
            let message = error["message"]?.string ?? "\(error)"
            let code = error["code"]?.int64
            throw ClientFailure(code == -32602 ? ClientFailure.dataError : 1, message)
        }
        guard let result = answer["result"] else { throw ClientFailure(1, "the agent's answer has neither result nor error: \(line)") }
        return result
    }
}

/// Runs a client command's body: a failure is printed as `fencepost NAME: message` and exits
/// with its code.
func runClient(_ name: String, _ body: () throws(ClientFailure) -> Void) throws {
    do {
        try body()
    } catch {
        writeErrorLine("fencepost \(name): \(error.message)")
        throw ExitCode(error.code)
    }
}

/// Writes `text` to standard output.
func writeStandardOutput(_ text: String) throws(ClientFailure) {
    let bytes = Array(text.utf8)
    let result = bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try FileDescriptor.standardOutput.writeAll(raw) } }
    if case .failure(let error) = result {
        throw ClientFailure(ClientFailure.ioError, "cannot write standard output: \(error)")
    }
}

/// Prints a JSON result, one line.
func printJSON(_ value: JSONValue) throws(ClientFailure) {
    try writeStandardOutput(value.serialized() + "\n")
}

/// Writes one line to standard error, its control characters escaped (``PrintableText``): an
/// error message may quote a file's contents or the agent's words.
func writeErrorLine(_ message: String) { writeStandardError(PrintableText.escaped(message) + "\n") }

/// Text helpers for the human output. Titles, ids and messages come from whoever added them, and a
/// terminal must show their control characters, not obey them: a table escapes each cell
/// (``table(_:_:)``, what `pending` and `delivered` print), and a sentence is made from
/// ``printable(_:)``'s copy of the answer (`--json` prints the answer as is: JSON escapes them
/// itself).
enum ClientText {
    /// `value` with every string (and key) escaped for a terminal (``PrintableText``).
    /// - Complexity: O(size of the value).
    static func printable(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let s): return .string(PrintableText.escaped(s))
        case .array(let a): return .array(a.map(printable))
        case .object(let m): return .object(m.map { (key: PrintableText.escaped($0.key), value: printable($0.value)) })
        default: return value
        }
    }

    /// Rows as a table: columns padded to their widest cell (counted in characters), two
    /// spaces apart, the last column not padded. Cells are escaped (``PrintableText``): a cell
    /// is one line, whatever it holds.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = ([header] + rows).map { $0.map(PrintableText.escaped) }
        var widths = [Int](repeating: 0, count: header.count)
        for row in all { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
        var out = ""
        for row in all {
            var line = ""
            for (i, cell) in row.enumerated() {
                line += cell
                if i < row.count - 1 { line += String(repeating: " ", count: widths[i] - cell.count + 2) }
            }
            while line.last == " " { line.removeLast() }
            out += line + "\n"
        }
        return out
    }

    /// An RFC 3339 time from the agent and how far it is from now: `2026-09-21T22:33:20Z`,
    /// `in 3h 12min` / `5 min ago`.
    static func time(_ text: String?, now: WallInstant) -> (utc: String, relative: String) {
        guard let text else { return ("-", "-") }
        guard case .success(let t) = RFC3339.parse(text.utf8, lenient: true) else { return (text, "") }
        return (t.instant.description, relative(t.instant.secondsSinceEpoch - now.secondsSinceEpoch))
    }

    /// `in 3h 12min`, `5 min ago`, `now`.
    static func relative(_ seconds: Int64) -> String {
        if seconds == 0 { return "now" }
        let d = approximate(abs(seconds))
        return seconds > 0 ? "in \(d)" : "\(d) ago"
    }

    /// A duration in its two largest units: `45 s`, `12 min`, `3h 12min`, `2d 4h`.
    static func approximate(_ s: Int64) -> String { ControlService.approximate(s) }

    /// A list of ids for a sentence: `water, depot` or `none`.
    static func ids(_ value: JSONValue?) -> [String] { value?.array?.compactMap(\.string) ?? [] }
}
