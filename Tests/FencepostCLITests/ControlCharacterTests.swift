import FencepostJSON
import FencepostTestSupport
import Foundation
import Testing

/// Text from whoever may add a request (any member of the socket's group) reaches the journal and
/// terminals: a title with a newline and a priority prefix must stay one entry of the agent's own
/// priority, and ESC, NUL and newlines must show as escapes in the human tables, never act.
@Suite(.serialized, .processes) struct ControlCharacterTests {
    /// A title that forges a journal entry, clears the screen and ends in a NUL.
    static let evil = "ok\n<0>fencepost: forged emergency\u{1B}[2J\u{0}\r\t\u{9B}31m"
    static let shown = #"ok\n<0>fencepost: forged emergency\u{1B}[2J\u{00}\r\t\u{9B}31m"#

    /// Bytes that a terminal or journald acts on (other than the line's own newline).
    static func controls(_ text: String) -> [UInt32] {
        text.unicodeScalars.map(\.value).filter { ($0 < 0x20 && $0 != 0x0A) || (0x7F ... 0x9F).contains($0) }
    }

    @Test func titlesCannotForgeJournalEntriesNorDriveTheTerminal() throws {
        let d = try AgentProcess()
        try d.writeConfig("")
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let title = JSONValue.string(Self.evil).serialized()
        let requests = """
            {"id":"soon","content":{"title":\(title)},"trigger":{"interval":{"seconds":1}}}
            {"id":"later","content":{"title":\(title)},"trigger":{"interval":{"seconds":3600}}}

            """
        let add = try d.cli(["add", "-"], input: requests)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(d.waitForLog("delivered soon"), "log:\n\(d.stderr)")

        // The tables: one line per row, the title's controls shown as escapes.
        for (command, rows) in [("pending", 1), ("delivered", 1)] {
            let out = try d.cli([command])
            #expect(out.status == 0, "\(command): \(out.stderr)")
            #expect(Self.controls(out.stdout).isEmpty, "\(command) wrote control characters: \(Self.controls(out.stdout)) in \(out.stdout.debugDescription)")
            #expect(out.stdoutLines.count == 1 + rows, "\(command):\n\(out.stdout)")
            #expect(out.stdout.contains(Self.shown), "\(command):\n\(out.stdout)")
        }
        // `status` lists the pending request's id; its text has no controls either.
        let status = try d.cli(["status"])
        #expect(Self.controls(status.stdout).isEmpty, "status: \(status.stdout.debugDescription)")
        // JSON keeps the title exactly.
        let json = try d.cli(["delivered", "--json"])
        #expect(try JSONValue.parse(json.stdout)[0]?["content"]?["title"] == .string(Self.evil))

        d.signal(SIGTERM)
        _ = try #require(d.waitForExit(timeout: 30), "no exit after SIGTERM; log:\n\(d.stderr)")
        // The journal: every line has the agent's own priority; the forged one is inside the
        // delivery's line, escaped.
        let lines = d.stderr.split(separator: "\n").map(String.init)
        for line in lines {
            #expect(DaemonLogTests.prefixes.contains { line.hasPrefix($0) }, "a line without the agent's priority: \(line.debugDescription)")
        }
        #expect(Self.controls(d.stderr).isEmpty, "control characters in the log: \(d.stderr.debugDescription)")
        #expect(lines.contains { $0.hasPrefix("<6>") && $0.contains("delivered soon") && $0.contains(Self.shown) }, "log:\n\(d.stderr)")
    }

    /// An error message quoting what a client sent (here an unknown category's name) is escaped
    /// on the client's standard error too.
    @Test func errorMessagesAreEscaped() throws {
        let d = try AgentProcess()
        try d.writeConfig("")
        try d.start()
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let add = try d.cli(["add", "-"], input: #"{"id":"x","content":{"title":"t","categoryIdentifier":"A\u001b[2JB"},"trigger":{"interval":{"seconds":60}}}"# + "\n")
        #expect(add.status == 65, "\(add.stderr)")
        #expect(Self.controls(add.stderr).isEmpty, "\(add.stderr.debugDescription)")
        #expect(add.stderr.contains(#"A\u{1B}[2JB"#), "\(add.stderr)")
    }
}
