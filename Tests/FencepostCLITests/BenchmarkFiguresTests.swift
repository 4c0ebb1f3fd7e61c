import FencepostTestSupport
import Foundation
import Testing

/// Benchmarks/agent/figure.sh, the functions the agent scripts hand their figures to
/// Benchmarks/run with, run by /bin/sh on a real figures file.
@Suite(.processes) struct BenchmarkFiguresTests {
    static let script = AgentProcess.root.appendingPathComponent("Benchmarks/agent/figure.sh").path

    /// The figures `bench_figure LABEL LINE` writes, as JSON objects.
    static func benchFigures(_ label: String, _ line: String) throws -> [[String: Any]] {
        let figures = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-figures-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: figures) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", ". \"$1\"; bench_figure \"$2\" \"$3\"", "sh", script, label, line]
        p.environment = ["FIGURES": figures.path, "PATH": "/usr/bin:/bin"]
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let text = (try? String(contentsOf: figures, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// A case name with a colon of its own (a time of day) keeps it, and its value is read.
    @Test(arguments: [
        ("next-fire daily 07:00, Europe/Berlin: 57.9 ns/op (checksum 009204494ee1c6b0)", "next-fire daily 07:00, Europe/Berlin", 57.9),
        ("geofence index, uniform 100k: 132 ns/op (checksum 00000000001f5a2b)", "geofence index, uniform 100k", 132.0),
    ])
    func aBenchLineIsOneFigure(_ line: String, _ name: String, _ value: Double) throws {
        let figures = try Self.benchFigures("normal (round 1)", line)
        #expect(figures.count == 1)
        let f = try #require(figures.first)
        #expect(f["name"] as? String == name, "\(f)")
        #expect(f["metric"] as? String == "normal (round 1)")
        #expect((f["value"] as? NSNumber)?.doubleValue == value, "\(f)")
        #expect(f["unit"] as? String == "ns/op")
    }
}
