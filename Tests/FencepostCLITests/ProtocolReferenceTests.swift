import FencepostAgent
import FencepostTestSupport
import Foundation
import LocalNotifications
import Testing

/// docs/protocol.md is the control protocol's reference for people who write scripts. Checked
/// against a real `fencepost-agent` on a socket of its own:
/// - every method the page describes (a `### name` under "## Methods") is answered, never with
///   "method not found", and every method the agent lists in its "method not found" answer is
///   described (the way ConfigurationReferenceTests holds docs/configuration.md to the parser);
/// - every example request of the page (`→ {…}`) is answered with a result, and where the page
///   shows the answer (`← {…}`) the real one has the same shape (type, and the keys of objects);
/// - the error codes and request rules of its tables are the agent's own;
/// - its Python example runs as printed, against the agent (when python3 is installed).
@Suite(.serialized, .processes) struct ProtocolReferenceTests {
    static let reference = AgentProcess.root.appendingPathComponent("docs/protocol.md")

    static func text() throws -> String { try String(contentsOf: reference, encoding: .utf8) }

    /// The lines of section `## title` (up to the next `## `).
    static func section(_ title: String, in text: String) -> [Substring] {
        var lines: [Substring] = []
        var inside = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { inside = line == "## \(title)"; continue }
            if inside { lines.append(line) }
        }
        return lines
    }

    /// The methods the page describes: the `### ` headings of "## Methods".
    static func documentedMethods(_ text: String) -> [String] {
        section("Methods", in: text).filter { $0.hasPrefix("### ") }.map { String($0.dropFirst(4)).trimmingCharacters(in: .whitespaces) }
    }

    /// The first cell of each row of the table under `### heading` or `## heading` whose first
    /// column is headed `column`.
    static func firstCells(_ text: String, column: String) -> [String] {
        var cells: [String] = []
        var inTable = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("|") else { inTable = false; continue }
            let row = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard row.count > 2 else { continue }
            if !inTable {
                if row[1] == column { inTable = true }
                continue
            }
            if !row[1].isEmpty && row[1].allSatisfy({ $0 == "-" || $0 == ":" }) { continue }
            cells.append(row[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")))
        }
        return cells
    }

    static func json(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed])) as? [String: Any]
    }

    /// A running agent with no GPS and the console GPIO.
    static func agent() throws -> AgentProcess {
        let d = try AgentProcess()
        try d.writeConfig("[gpio]\nbackend = \"console\"\n")
        try d.start(agent: true)
        #expect(d.waitForLog("start-up memory released", timeout: 180), "log:\n\(d.stderr)")
        return d
    }

    @Test func everyMethodOfThePageIsAnsweredAndEveryAnsweredMethodIsOnThePage() throws {
        let text = try Self.text()
        let documented = Self.documentedMethods(text)
        #expect(documented.count >= 9, "methods found on the page: \(documented)")
        #expect(Set(documented).count == documented.count, "a method twice on the page: \(documented)")
        let d = try Self.agent()
        defer { d.signal(SIGTERM); _ = d.waitForExit(timeout: 10) }

        for method in documented {
            let answer = try #require(try d.send(#"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":{}}"#),
                                      "\(method): no answer; log:\n\(d.stderr)")
            let object = try #require(Self.json(answer), "\(method): not JSON: \(answer)")
            let code = (object["error"] as? [String: Any])?["code"] as? Int
            #expect(code != -32601, "\(method) is on the page but the agent does not know it: \(answer)")
            #expect(object["result"] != nil || code == -32602, "\(method): \(answer)")
        }

        // The agent lists its methods when it does not know one.
        let answer = try #require(try d.send(#"{"jsonrpc":"2.0","id":2,"method":"no-such-method"}"#))
        let message = try #require((Self.json(answer)?["error"] as? [String: Any])?["message"] as? String, "\(answer)")
        let list = try #require(message.range(of: "(methods: ").map { message[$0.upperBound...].dropLast() }, "\(message)")
        let answered = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(Set(answered) == Set(ControlService.methods), "the agent's list: \(answered)")
        #expect(Set(answered).subtracting(documented).sorted() == [], "answered by the agent, not on the page")
        #expect(Set(documented).subtracting(answered).sorted() == [], "on the page, not answered by the agent")
    }

    @Test func theExamplesOfThePageGetAnswersOfTheShapeShown() throws {
        let lines = try Self.text().split(separator: "\n").map(String.init)
        let examples = lines.enumerated().filter { $0.element.hasPrefix("→ ") }
        #expect(examples.count >= 2, "examples on the page: \(examples.count)")
        let d = try Self.agent()
        defer { d.signal(SIGTERM); _ = d.waitForExit(timeout: 10) }
        for (index, line) in examples {
            let request = String(line.dropFirst(2))
            #expect(Self.json(request) != nil, "the example is not JSON: \(request)")
            let answer = try #require(try d.send(request), "no answer to \(request); log:\n\(d.stderr)")
            let real = try #require(Self.json(answer), "\(answer)")
            #expect(real["error"] == nil, "\(request)\n→ \(answer)")
            guard index + 1 < lines.count, lines[index + 1].hasPrefix("← ") else { continue }
            let shown = try #require(Self.json(String(lines[index + 1].dropFirst(2))), "the page's answer is not JSON: \(lines[index + 1])")
            #expect(Self.shape(real["result"]) == Self.shape(shown["result"]), "\(request)\nthe page: \(lines[index + 1])\nthe agent: \(answer)")
        }
    }

    /// A value's shape: its type, and for objects their keys with the shapes of their values
    /// (arrays by their first element; null matches nothing but null).
    static func shape(_ value: Any?) -> String {
        switch value {
        case let o as [String: Any]: return "{" + o.keys.sorted().map { "\($0):\(shape(o[$0]))" }.joined(separator: ",") + "}"
        case let a as [Any]: return "[" + (a.first.map { shape($0) } ?? "") + "]"
        case is String: return "s"
        case is NSNumber: return "n"
        case is NSNull, nil: return "null"
        default: return "?"
        }
    }

    /// The error codes the page lists are the agent's, and the agent gives the four of JSON-RPC
    /// itself for the inputs the page says; the rules the page lists are exactly the rules a
    /// request can break (`data.rule`).
    @Test func theErrorTablesAreTheAgentsOwn() throws {
        let text = try Self.text()
        let codes = Self.firstCells(text, column: "code").compactMap { Int64($0) }
        #expect(codes.count >= 5, "codes on the page: \(codes)")
        for code in codes { #expect(RPCErrorCode(rawValue: code) != nil, "\(code) is not a code of the agent") }
        let rules = Self.firstCells(text, column: "rule")
        let known = RequestError.Rule.allCases.map(\.rawValue)
        #expect(Set(rules) == Set(known), "on the page only: \(Set(rules).subtracting(known).sorted()); in the code only: \(Set(known).subtracting(rules).sorted())")

        let d = try Self.agent()
        defer { d.signal(SIGTERM); _ = d.waitForExit(timeout: 10) }
        let cases: [(String, Int)] = [
            ("{not json", -32700),
            (#"[{"jsonrpc":"2.0","id":1,"method":"status"}]"#, -32600),
            (#"{"jsonrpc":"2.0","id":1,"method":"list"}"#, -32601),
            (#"{"jsonrpc":"2.0","id":1,"method":"add","params":{"request":{"id":"r","trigger":{"interval":{"seconds":30,"repeats":true}}}}}"#, -32602),
        ]
        for (line, code) in cases {
            let answer = try #require(try d.send(line), "no answer to \(line)")
            let error = Self.json(answer)?["error"] as? [String: Any]
            #expect(error?["code"] as? Int == code, "\(line) → \(answer)")
            #expect(codes.contains(Int64(code)), "\(code) is not on the page")
        }
        // The page's claim about ids: sent as written, echoed as written.
        let big = try #require(try d.send(#"{"jsonrpc":"2.0","id":12345678901234567890,"method":"categories"}"#))
        #expect(big.hasPrefix(#"{"jsonrpc":"2.0","id":12345678901234567890,"#), "\(big)")
    }

    /// The Python example, as printed, adds a request and lists it.
    @Test func thePythonExampleRuns() throws {
        guard let python = RequiredTool.find("python3", package: "python3") else { return }
        let text = try Self.text()
        let start = try #require(text.range(of: "```python\n"), "no Python example on the page")
        let end = try #require(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        let d = try Self.agent()
        defer { d.signal(SIGTERM); _ = d.waitForExit(timeout: 10) }
        let script = String(text[start.upperBound..<end.lowerBound]).replacingOccurrences(of: "/run/fencepost/control.sock", with: d.socketPath)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = ["-c", script]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(errors)")
        #expect(output.hasPrefix("depot "), "output: \(output)\nerrors: \(errors)")
    }
}
