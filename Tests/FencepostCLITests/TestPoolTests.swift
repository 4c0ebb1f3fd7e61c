import FencepostTestSupport
import Foundation
import Testing

/// Every suite that starts processes and waits for them carries `.processes` (or `.ownThread`):
/// without it, its waits hold one of the cooperative pool's threads (one per core), and every
/// other test queues behind them (TestThreads.swift). Checked over Tests/, and on a file that
/// breaks the rule, so that a check which let everything pass would fail.
@Suite struct TestPoolTests {
    /// Words that mark a file whose tests start processes.
    static let processMarkers = ["AgentProcess", "Binaries.run", "MosquittoBroker", "SpawnedProcess", "ChildProcess",
                                 "gpsfake", "Gpsfake", "FaultProxy", ".cli(", "Process()", "posix_spawn", "FleetTools"]

    /// The top-level suites of `text` without either trait, as "PATH:LINE: declaration"; none
    /// when the file starts no processes. A suite is an `@Suite` declaration, or a top-level
    /// struct whose body holds `@Test`.
    static func offenders(in text: String, path: String) -> [String] {
        guard processMarkers.contains(where: { text.contains($0) }) else { return [] }
        let lines = text.components(separatedBy: "\n")
        var found: [String] = []
        for (i, line) in lines.enumerated() {
            let onPool = line.contains(".processes") || line.contains(".ownThread")
            if line.hasPrefix("@Suite") {
                if !onPool { found.append("\(path):\(i + 1): \(line)") }
            } else if line.hasPrefix("struct ") || line.hasPrefix("final class ") {
                guard i == 0 || !lines[i - 1].hasPrefix("@Suite") else { continue }
                // The body: up to the next top-level line that closes it.
                let end = lines[(i + 1)...].firstIndex { $0.hasPrefix("}") } ?? lines.count - 1
                if lines[i ... end].contains(where: { $0.contains("@Test") }) { found.append("\(path):\(i + 1): \(line) (a suite without @Suite)") }
            }
        }
        return found
    }

    @Test func everySuiteThatStartsProcessesRunsOnTheProcessPool() throws {
        let tests = AgentProcess.root.appendingPathComponent("Tests")
        var offenders: [String] = []
        var checked = 0
        let files = FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            // TestThreads.swift defines the traits; this file names the markers as text.
            guard url.pathExtension == "swift", !["TestThreads.swift", "TestPoolTests.swift"].contains(url.lastPathComponent) else { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            if Self.processMarkers.contains(where: { text.contains($0) }) { checked += 1 }
            offenders += Self.offenders(in: text, path: url.path.replacingOccurrences(of: AgentProcess.root.path + "/", with: ""))
        }
        #expect(checked > 40, "only \(checked) files start processes: the markers no longer find them")
        #expect(offenders.isEmpty, "suites that start processes without .processes (TestThreads.swift):\n\(offenders.joined(separator: "\n"))")
    }

    @Test func aProcessSuiteWithoutTheTraitIsNamed() {
        let text = """
            import Testing
            @Suite(.serialized) struct A {
                @Test func t() throws { _ = try Binaries.run(["status"]) }
            }
            struct B {
                @Test func u() {}
            }
            @Suite(.serialized, .processes) struct C {}
            struct Helper { var x = 0 }
            """
        #expect(Self.offenders(in: text, path: "X.swift") == [
            "X.swift:2: @Suite(.serialized) struct A {",
            "X.swift:5: struct B { (a suite without @Suite)",
        ])
        #expect(Self.offenders(in: text.replacingOccurrences(of: "Binaries.run", with: "parse"), path: "X.swift").isEmpty)
    }
}
