import FencepostJSON
import FencepostTestSupport
import Foundation
import Testing

/// `fencepost add` of more requests than one control message holds: sent in batches, each all
/// or nothing; a request that breaks a rule is named by its rule and line, not by the socket's
/// message limit.
@Suite(.serialized, .processes) struct AddBatchTests {
    static func request(_ i: Int, title: String = "Drink", extra: String = "") -> String {
        #"{"id":"r\#(i)","content":{"title":"\#(title)"\#(extra)},"trigger":{"interval":{"seconds":3600}}}"#
    }

    /// The agent at its default limit (64 KiB) and at a lower one (8 KiB, learned from its refusal).
    @Test(arguments: [nil, 8192] as [Int?])
    func manyRequestsGoInBatches(limit: Int?) throws {
        let d = try AgentProcess()
        try d.writeConfig("[engine]\npending_cap = 5000\n", socketExtra: limit.map { "max_message_bytes = \($0)\n" } ?? "")
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")

        // 1000 short requests: about 90 kB of JSON, more than a message takes.
        let many = (0 ..< 1000).map { Self.request($0) }.joined(separator: "\n") + "\n"
        var out = try d.cli(["add", "-"], input: many)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.hasPrefix("added r0, r1, "), "\(out.stdout.prefix(200))")
        out = try d.cli(["pending", "--json"])
        #expect(try JSONValue.parse(out.stdout).array?.count == 1000, "\(out.stderr)")
        out = try d.cli(["add", "--json", "-"], input: many)
        #expect(try JSONValue.parse(out.stdout)["added"]?.array?.count == 1000, "\(out.stderr)")

        // A 100,000-character title: the title's rule, with its line; nothing sent.
        let long = Self.request(5000, title: String(repeating: "x", count: 100_000))
        out = try d.cli(["add", "-"], input: "\(Self.request(4000))\n\(long)\n")
        #expect(out.status == 65)
        #expect(out.stderr.contains("<stdin>:2: content.title is 100000 bytes; the limit is 256 [rule: content]"), "\(out.stderr)")
        #expect(!out.stderr.contains("longer than"), "\(out.stderr)")
        out = try d.cli(["pending", "--json"])
        #expect(try JSONValue.parse(out.stdout).array?.count == 1000, "r4000 was added: \(out.stderr)")

        // A request that keeps every rule but alone is longer than a message: the message rule.
        let vertices = (0 ..< 3000).map { k in
            let a = Double(k) / 3000 * 2 * Double.pi
            return "[\(52.5 + 0.01 * sin(a)),\(13.4 + 0.01 * cos(a))]"
        }.joined(separator: ",")
        let polygon = #"{"id":"big","content":{"title":"Big"},"trigger":{"location":{"region":{"polygon":[\#(vertices)]}}}}"#
        out = try d.cli(["add", "-"], input: polygon + "\n")
        #expect(out.status == 65)
        #expect(out.stderr.contains("<stdin>:1: the request alone makes a message of "), "\(out.stderr)")
        #expect(out.stderr.contains("at most \(limit ?? 65536) bytes (its [socket] max_message_bytes)"), "\(out.stderr)")

        // The agent refuses a request of a later message (an unknown category): the messages
        // before it stay added, and the error says so with the file's line.
        let mixed = (0 ..< 250).map { i in
            i == 179 ? Self.request(10_000 + i, extra: #","categoryIdentifier":"NOPE""#) : Self.request(10_000 + i)
        }.joined(separator: "\n") + "\n"
        out = try d.cli(["add", "-"], input: mixed)
        #expect(out.status == 65)
        #expect(out.stderr.contains("<stdin>:180: content.categoryIdentifier \"NOPE\" is not a registered category"), "\(out.stderr)")
        let said = try #require(out.stderr.firstMatch(of: /the (\d+) requests before line (\d+) were added/), "\(out.stderr)")
        let before = try #require(Int(said.1))
        #expect(before > 0 && before <= 179 && Int(said.2) == before + 1, "\(out.stderr)")
        out = try d.cli(["pending", "--json"])
        #expect(try JSONValue.parse(out.stdout).array?.count == 1000 + before, "\(out.stderr)")

        // `remove` of 2,000 ids of 60 bytes (120 kB): batched too; each id stands alone.
        let ids = (0 ..< 1000).map { "r\($0)" } + (0 ..< 1000).map { "no-such-request-" + String(repeating: "z", count: 40) + "\($0)" }
        out = try d.cli(["remove", "--json"] + ids)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try JSONValue.parse(out.stdout)["removed"]?.array?.count == 1000, "\(out.stdout.prefix(300))")

        d.signal(SIGTERM)
        _ = try #require(d.waitForExit(timeout: 30), "no exit after SIGTERM; log:\n\(d.stderr)")
    }
}
