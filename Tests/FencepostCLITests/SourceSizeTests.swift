import FencepostTestSupport
import Foundation
import Testing

/// `.ci/size-check` over Sources/: no type with more than 15 stored properties and no file over
/// 400 lines unless it says why. Run here so that the rule stays true with every `swift test`;
/// and fed a file and a type that break it, so that a check which let everything pass would fail.
@Suite(.processes) struct SourceSizeTests {
    static let script = AgentProcess.root.appendingPathComponent(".ci/size-check").path

    static func check(_ folder: String) throws -> ChildProcess.Output {
        try ChildProcess.run(["python3", script, folder], environment: [:], executable: URL(fileURLWithPath: "/usr/bin/env"), timeLimit: 120)
    }

    @Test func everyLargeFileAndTypeInSourcesSaysWhy() throws {
        let out = try Self.check(AgentProcess.root.appendingPathComponent("Sources").path)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.contains("every large file and type says why"), "\(out.stdout)")
    }

    @Test func aLongFileAndABigTypeWithoutAReasonFail() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-size-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let long = (1...401).map { "let v\($0) = \($0)" }.joined(separator: "\n") + "\n"
        try long.write(to: dir.appendingPathComponent("Long.swift"), atomically: true, encoding: .utf8)
        let big = "struct Big {\n" + (1...16).map { "    var p\($0) = 0" }.joined(separator: "\n") + "\n    var computed: Int { p1 }\n}\n"
        try big.write(to: dir.appendingPathComponent("Big.swift"), atomically: true, encoding: .utf8)
        var out = try Self.check(dir.path)
        #expect(out.status == 1, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.contains("401 lines") && out.stdout.contains("16 stored properties"), "\(out.stdout)")

        // With the reasons written, both pass.
        try ("// Size: a generated table.\n" + long).write(to: dir.appendingPathComponent("Long.swift"), atomically: true, encoding: .utf8)
        try ("/// Stored properties: one per field of a wire record.\n" + big).write(to: dir.appendingPathComponent("Big.swift"), atomically: true, encoding: .utf8)
        out = try Self.check(dir.path)
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
    }
}
