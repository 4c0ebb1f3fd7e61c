import FencepostJSON
import FencepostLinux
import FencepostTestSupport
import Foundation
import Testing

/// The control socket's `apply` is carried out in parts, one per loop turn, by the driver of a
/// SIGHUP's and a fleet list's applies; its connection gets the answer after the last part, and
/// other connections are served meanwhile. Real child process, real socket.
@Suite(.serialized, .processes) struct SocketApplyInPartsTests {
    /// `count` location requests `z0`… as DaemonReloadTests.regions makes them, as the JSON of
    /// `apply`'s `requests`.
    static func regionsJSON(_ count: Int, radius: Int) -> String {
        "[" + (0 ..< count).map { i in
            let lat = 50.0 + Double(i / 100) * 0.01, lon = 6.0 + Double(i % 100) * 0.01
            return #"{"id":"z\#(i)","content":{"title":"Zone \#(i)"},"trigger":{"location":{"region":{"circle":{"lat":\#(lat),"lon":\#(lon),"radius":\#(radius)}},"notifyOnEntry":true}}}"#
        }.joined(separator: ",") + "]"
    }

    static func applyLine(id: Int, requests: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"apply","params":{"requests":\#(requests)}}"#
    }

    /// An agent running `count` regions of radius 300 from its configuration, with room for an
    /// `apply` of all of them in one message.
    static func running(_ count: Int) throws -> AgentProcess {
        let d = try AgentProcess()
        try d.writeConfig(DaemonReloadTests.regions(count, radius: 300), socketExtra: "max_message_bytes = 4194304\n")
        try d.start(agent: true)
        #expect(d.waitForLog("\(count) added", timeout: 120), "log:\n\(d.stderr.suffix(2000))")
        return d
    }

    /// The N of the first log line `control connection …: apply: applied in N loop turns`.
    static func socketApplyTurns(_ log: String) -> Int? {
        guard let line = log.split(separator: "\n").first(where: { $0.contains("control connection ") && $0.contains(": apply: applied in ") }),
              let r = line.range(of: ": apply: applied in ") else { return nil }
        return Int(line[r.upperBound...].prefix { $0.isNumber })
    }

    static var count: Int { Int(ProcessInfo.processInfo.environment["FENCEPOST_RELOAD_REGIONS"] ?? "") ?? 4000 }

    /// The socket's `apply` of 4,000 changed location requests: answered with every id replaced,
    /// in more than one loop turn, and no part of it takes over 50 ms of the agent's own work. At
    /// once (before), it was one turn of 340–451 ms in a debug build. The turn that reads and
    /// decodes the message (O(its bytes), bounded by max_message_bytes) is not a part: it is
    /// printed (`decode:`), not asserted (~125–145 ms of CPU for these 600 kB in a debug build).
    @Test func anApplyOfThousandsIsAnsweredAfterItsParts() throws {
        let count = Self.count
        let d = try Self.running(count)
        guard let c = RawClient(d.socketPath) else { Issue.record("cannot connect"); return }
        #expect(c.sendLine(Self.applyLine(id: 1, requests: Self.regionsJSON(count, radius: 400)), timeout: 30))
        let answer = try #require(c.readLine(timeout: 60), "no answer: log:\n\(d.stderr.suffix(2000))")
        let reply = try JSONValue.parse(answer)
        #expect(reply["id"]?.int == 1, "\(answer.prefix(300))")
        let result = try #require(reply["result"], "\(answer.prefix(300))")
        #expect(result["replaced"]?.array?.count == count && result["added"]?.array?.isEmpty == true
                && result["removed"]?.array?.isEmpty == true && result["unchanged"]?.array?.isEmpty == true, "\(answer.prefix(300))")
        // Applied again: every request unchanged, nothing written.
        #expect(c.sendLine(Self.applyLine(id: 2, requests: Self.regionsJSON(count, radius: 400)), timeout: 30))
        let again = try JSONValue.parse(try #require(c.readLine(timeout: 60), "no answer: log:\n\(d.stderr.suffix(2000))"))
        #expect(again["result"]?["unchanged"]?.array?.count == count, "\(again)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 20)?.status == 0, "log:\n\(d.stderr.suffix(2000))")
        for line in d.stderr.split(separator: "\n") where line.contains("in parts") || line.contains("loop turns") {
            print("socket apply of \(count) regions: \(line)")
        }
        let turns = Self.socketApplyTurns(d.stderr)
        #expect((turns ?? 0) > 1, "the socket's apply was not in parts: log:\n\(d.stderr.suffix(2000))")
        let own = d.ownSlowTurns(printing: "socket apply of \(count) regions")
        for line in own where line.contains(": apply ") { print("socket apply of \(count) regions: decode: \(line)") }
        let slow = own.filter { $0.contains("apply in parts") }
        #expect(slow.isEmpty, "parts over 50 ms of the agent's own work for the socket's apply: \(slow)")
        if let summary = LoopTurnSummary(log: d.stderr) { print("socket apply of \(count) regions: \(summary.line)") }
    }

    /// While the apply runs, its connection answers nothing else (a line pipelined after it is
    /// answered after the apply's answer) and another connection is served (its `status` is
    /// answered before the apply's answer). A second apply while the first runs replaces it: the
    /// first is answered with an error, the second applied alone. An apply whose connection
    /// closes meanwhile goes on to its end.
    @Test func theConnectionWaitsAndOthersAreServed() throws {
        let count = Self.count
        let d = try Self.running(count)
        guard let a = RawClient(d.socketPath), let b = RawClient(d.socketPath) else { Issue.record("cannot connect"); return }
        let status = { (id: Int) in #"{"jsonrpc":"2.0","id":\#(id),"method":"status"}"# }
        #expect(a.sendLine(Self.applyLine(id: 1, requests: Self.regionsJSON(count, radius: 400)) + "\n" + status(2), timeout: 30))
        #expect(d.waitForLog("apply: applying \(count) requests in parts", timeout: 60), "log:\n\(d.stderr.suffix(2000))")
        #expect(b.sendLine(status(7)))
        let other = try #require(b.readLine(timeout: 10), "the other connection's status was not answered")
        #expect(try JSONValue.parse(other)["id"]?.int == 7, "\(other.prefix(300))")
        #expect(a.readAvailable(maximum: 1) == [], "the apply was answered before the other connection's status")
        let first = try JSONValue.parse(try #require(a.readLine(timeout: 60), "no answer: log:\n\(d.stderr.suffix(2000))"))
        let second = try JSONValue.parse(try #require(a.readLine(timeout: 10), "the pipelined line was not answered"))
        #expect(first["id"]?.int == 1 && first["result"]?["replaced"]?.array?.count == count, "\(first)")
        #expect(second["id"]?.int == 2 && second["result"] != nil, "\(second)")

        // A newer apply (connection b) while a's runs: a's is answered with an error.
        #expect(a.sendLine(Self.applyLine(id: 3, requests: Self.regionsJSON(count, radius: 500)), timeout: 30))
        #expect(d.wait(timeout: 60) { d.stderr.components(separatedBy: "apply: applying \(count) requests in parts").count == 3 },
                "log:\n\(d.stderr.suffix(2000))")
        let last = #"[{"id":"last","content":{"title":"Last"},"trigger":{"interval":{"seconds":600,"repeats":true}}}]"#
        #expect(b.sendLine(Self.applyLine(id: 8, requests: last)))
        let replaced = try JSONValue.parse(try #require(a.readLine(timeout: 60), "the replaced apply was not answered"))
        #expect(replaced["id"]?.int == 3 && replaced["error"]?["message"]?.string?.hasPrefix("replaced by a newer apply") == true, "\(replaced)")
        let newer = try JSONValue.parse(try #require(b.readLine(timeout: 60), "the newer apply was not answered"))
        #expect(newer["id"]?.int == 8 && newer["result"]?["added"]?.array?.count == 1 && newer["result"]?["removed"]?.array?.count == count,
                "\(newer)")
        #expect(d.stderr.contains("requests: the socket's apply replaced it"), "log:\n\(d.stderr.suffix(2000))")

        // A connection closed while its apply runs: the apply goes on to its end.
        func applied() -> Int { d.stderr.components(separatedBy: ": apply: applied in ").count - 1 }
        let before = applied()
        do {
            guard let c = RawClient(d.socketPath) else { Issue.record("cannot connect"); return }
            #expect(c.sendLine(Self.applyLine(id: 9, requests: Self.regionsJSON(count, radius: 600)), timeout: 30))
            #expect(d.wait(timeout: 60) { d.stderr.components(separatedBy: "apply: applying \(count) requests in parts").count == 4 },
                    "log:\n\(d.stderr.suffix(2000))")
        }
        #expect(d.wait(timeout: 60) { applied() == before + 1 }, "log:\n\(d.stderr.suffix(2000))")
        let pending = try d.call("status")
        #expect(pending["result"]?["pendingTotal"]?.int == count, "\(String(describing: pending["result"]?["pendingTotal"]))")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 20)?.status == 0, "log:\n\(d.stderr.suffix(2000))")
    }

    /// A list refused in parts (a request names a category that does not exist) gets the very
    /// answer the apply at once gives (the in-process service's), and nothing of it is applied.
    @Test func aRefusedListGetsTheSameErrorAndNothingIsApplied() throws {
        let d = try AgentProcess()
        try d.writeConfig(DaemonTests.gpio + "[[request]]\nid = \"keep\"\ntrigger = { interval = { seconds = 600, repeats = true } }\n")
        try d.start(agent: true)
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr.suffix(2000))")
        let requests = "[" + (0 ..< 600).map { i in
            let extra = i == 450 ? #","categoryIdentifier":"NOPE""# : ""
            return #"{"id":"r\#(i)","content":{"title":"R\#(i)"\#(extra)},"trigger":{"interval":{"seconds":600,"repeats":true}}}"#
        }.joined(separator: ",") + "]"
        let line = Self.applyLine(id: 5, requests: requests)
        let answer = try #require(try d.send(line, timeout: 30), "no answer: log:\n\(d.stderr.suffix(2000))")
        let local = try TestAgent()
        defer { local.stop() }
        // Its connection closed once answered: the in-process service serves one at a time.
        let atOnce = try #require({ () -> String? in
            guard let c = RawClient(local.socket), c.sendLine(line, timeout: 30) else { return nil }
            return c.readLine(timeout: 30)
        }(), "the in-process service did not answer")
        #expect(answer == atOnce, "in parts: \(answer)\nat once: \(atOnce)")
        #expect(answer.contains("requests[450]") && answer.contains("NOPE"), "\(answer)")
        let pending = try JSONValue.parse(try #require(try d.send(#"{"jsonrpc":"2.0","id":6,"method":"pending"}"#)))
        #expect(pending["result"]?.array?.compactMap { $0["request"]?["id"]?.string } == ["keep"], "\(pending)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 20)?.status == 0, "log:\n\(d.stderr.suffix(2000))")
    }
}
