import Foundation
import SeededRandom
import Testing
import FencepostTestSupport


/// What a zone-set build holds per zone at its peak, as `fencepost-agent zones build`
/// reports its own peak (VmHWM: a parent's `wait4` rusage would count the test process too, which
/// a `vfork`-style spawn hands on at `exec`). The
/// difference between a 200k and a 10k build is the part that grows with the zones: ~150 B per
/// circle. The bound (300 B) catches a build that holds the GeoJSON hashed in a second pass with
/// all its pages resident, a dictionary of ids, the rows copied, `RegionIndex`'s bulk load and the
/// written file read back whole: ~610 B per circle, 592 MB at 1M.
@Suite(.processes) struct ZoneSetBuildMemoryTests {
    /// `count` circles of 50–300 m in 0.5° × 0.5°, as measure.sh makes them.
    static func geojson(_ count: Int, seed: UInt64) -> String {
        var rng = SplitMix64(seed: seed)
        var out = #"{"type":"FeatureCollection","features":["#
        out.reserveCapacity(count * 130)
        for i in 0 ..< count {
            let lat = 51 + rng.uniform(0, 0.5), lon = 6.5 + rng.uniform(0, 0.5), radius = 50 + rng.uniform(0, 250)
            if i > 0 { out += "," }
            out += #"{"type":"Feature","id":"z\#(i)","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":\#(radius)}}"#
        }
        return out + "]}"
    }

    @Test func buildHoldsUnder300BytesPerCircle() async throws {
        let seed: UInt64 = 0x11_0002
        let agent = try #require(ChildProcess.agentBinary, "fencepost-agent is not built")
        // Off the runner's cooperative threads (see ZoneSetReplayAgreementTests.onOwnThread).
        let runs = try await ZoneSetReplayAgreementTests.onOwnThread { try Self.peaks(seed: seed, agent: agent) }
        for (count, status, stdout, stderr) in runs {
            #expect(status == 0, "seed \(seed): zones build of \(count) circles: \(stderr)")
            #expect(stdout.contains("peak"), "seed \(seed): no peak in \(stdout)")
        }
        // "OUT: N zones, B bytes, peak K kB resident"
        let peaks = try runs.map { run in
            try #require(run.stdout.split(separator: " ").reversed().dropFirst(2).first.flatMap { Int($0) }, "seed \(seed): \(run.stdout)")
        }
        let perZone = Double(peaks[1] - peaks[0]) * 1024 / 190_000
        #expect(perZone < 300, "seed \(seed): the build holds \(Int(perZone)) B per circle at its peak (\(peaks[0]) kB at 10k, \(peaks[1]) kB at 200k)")
        print("ZoneSetBuildMemoryTests: seed \(seed): \(peaks[0]) kB at 10k, \(peaks[1]) kB at 200k: \(Int(perZone)) B per circle")
    }

    /// Builds 10k and 200k circles with `agent`: (count, exit status, stdout, stderr) of each.
    static func peaks(seed: UInt64, agent: URL) throws -> [(count: Int, status: Int32, stdout: String, stderr: String)] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-zoneset-memory-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var runs: [(count: Int, status: Int32, stdout: String, stderr: String)] = []
        for count in [10_000, 200_000] {
            let input = dir.appendingPathComponent("zones-\(count).geojson").path
            try Self.geojson(count, seed: seed).write(toFile: input, atomically: false, encoding: .utf8)
            let out = try ChildProcess.run(["zones", "build", input, "-o", dir.appendingPathComponent("zones-\(count).zones").path],
                                           executable: agent)
            runs.append((count, out.status, out.stdout, out.stderr))
        }
        return runs
    }
}
