import FencepostTestSupport
import Foundation
import Testing

/// The documents a newcomer reads: every relative link of README.md, docs/ and Benchmarks/README.md
/// leads to a file (and a heading) that exists; the README stays a front page (short, no commit
/// hashes or run windows: those belong to Benchmarks/README.md's tables); and the path README →
/// `fencepost --help` → docs answers "how do I add a reminder from a script", "which keys does
/// SIGHUP apply" and "what does the agent send on the socket".
@Suite(.processes) struct DocumentsTests {
    static let root = AgentProcess.root

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The documents checked: the READMEs and every page of docs/.
    static func documents() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return ["README.md", "Benchmarks/README.md"] + docs
    }

    /// GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`.
    static func anchor(_ heading: String) -> String {
        var out = ""
        for c in heading.lowercased() {
            if c == " " { out.append("-") } else if c.isLetter || c.isNumber || c == "-" || c == "_" { out.append(c) }
        }
        return out
    }

    static func anchors(_ text: String) -> Set<String> {
        var inCode = false
        var set = Set<String>()
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle(); continue }
            guard !inCode, line.hasPrefix("#") else { continue }
            set.insert(anchor(String(line.drop { $0 == "#" }).trimmingCharacters(in: .whitespaces)))
        }
        return set
    }

    /// The relative link targets of a markdown text (`](target)`), outside code blocks.
    static func links(_ text: String) -> [String] {
        var inCode = false
        var targets: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle(); continue }
            guard !inCode else { continue }
            var rest = line[...]
            while let open = rest.range(of: "](") {
                guard let close = rest[open.upperBound...].firstIndex(of: ")") else { break }
                let target = String(rest[open.upperBound..<close])
                if !target.contains("://") && !target.hasPrefix("mailto:") { targets.append(target) }
                rest = rest[close...]
            }
        }
        return targets
    }

    @Test func everyRelativeLinkLeadsToAFileAndHeadingThatExist() throws {
        for document in try Self.documents() {
            let text = try Self.read(document)
            let folder = Self.root.appendingPathComponent(document).deletingLastPathComponent()
            for target in Self.links(text) {
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let file = parts[0].isEmpty ? Self.root.appendingPathComponent(document) : folder.appendingPathComponent(parts[0]).standardized
                #expect(FileManager.default.fileExists(atPath: file.path), "\(document): the link \(target) leads nowhere")
                if parts.count == 2, file.pathExtension == "md", let linked = try? String(contentsOf: file, encoding: .utf8) {
                    #expect(Self.anchors(linked).contains(parts[1]), "\(document): no heading #\(parts[1]) in \(parts[0].isEmpty ? document : parts[0])")
                }
            }
        }
    }

    @Test func theReadmeIsAFrontPage() throws {
        let readme = try Self.read("README.md")
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 200, "README.md has \(lines.count) lines")
        // No commit ids (7+ hex digits with a digit and a letter) and no run windows in UTC.
        let hash = try Regex(#"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"#)
        let window = try Regex(#"\d\d:\d\d\s*[–-]\s*\d\d:\d\d\s*UTC"#)
        for (i, line) in lines.enumerated() {
            #expect(line.firstMatch(of: hash) == nil, "README.md:\(i + 1): a commit id: \(line)")
            #expect(line.firstMatch(of: window) == nil, "README.md:\(i + 1): a run window: \(line)")
        }
    }

    /// README → `fencepost --help` → docs: each question has an answer a newcomer can reach
    /// without the source.
    @Test func theNewcomersQuestionsAreAnsweredFromTheReadmeAndTheHelp() throws {
        let readme = try Self.read("README.md")
        for page in ["docs/protocol.md", "docs/configuration.md", "docs/zones.md", "docs/board.md", "Benchmarks/README.md"] {
            #expect(readme.contains("](\(page))"), "README.md does not link \(page)")
        }
        let help = try ChildProcess.run(["--help"]).stdout.replacingOccurrences(of: "\n", with: " ")
        for text in ["docs/protocol.md", "configuration.md", "fencepost add -", "SIGHUP"] {
            #expect(help.contains(text), "`fencepost --help` does not say \(text)")
        }
        #expect(try ChildProcess.run(["add", "--help"]).stdout.contains("docs/protocol.md"))

        // "How do I add a reminder from a script": the add method, with an example to copy.
        let protocolPage = try Self.read("docs/protocol.md")
        #expect(protocolPage.contains("### add") && protocolPage.contains(#""method":"add""#))
        // "What does the agent send on the socket": answered in a section of its own.
        #expect(Self.anchors(protocolPage).contains("what-the-agent-sends-by-itself"))
        // "Which keys does SIGHUP apply": the configuration's reload section and its table.
        let configuration = try Self.read("docs/configuration.md")
        #expect(Self.anchors(configuration).contains("reloading-what-sighup-applies"))
    }

    /// Benchmarks/README.md and the README's headline figures are what `Benchmarks/report` writes
    /// from Benchmarks/results/: no figure edited by hand, none stated twice with two values.
    @Test func theBenchmarkTablesAreWrittenFromTheResults() throws {
        guard let python = RequiredTool.find("python3", package: "python3") else { return }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [Self.root.appendingPathComponent("Benchmarks/report").path, "--check"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(text)")
    }
}
