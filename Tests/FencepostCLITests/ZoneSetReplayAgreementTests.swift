@testable import fencepost
import FencepostAgent
import FencepostLinux
import Foundation
import Geofencing
import LocalNotifications
import Position
import SeededRandom
import Testing
import TrackFormats
import CivilTime

/// A million circle zones and ten thousand polygons, seeded, as a zone set built with
/// the agent's rules (`ZoneSetCompiler.entry`, the builder, written atomically and mapped as the
/// agent maps it) give the same events as `fencepost replay` (`ReplayMonitor`, every zone a
/// region in memory) on the same drive: a route through the densest part, with noise and
/// dropouts, that enters and leaves thousands of zones.
@Suite struct ZoneSetReplayAgreementTests {
    static let seed: UInt64 = 0x11_0001

    /// Zones over 0.1° × 0.15° around Düsseldorf: circles of 5–40 m, polygons (3–6 vertices) of
    /// 15–120 m; some notify on exit, some dwell, some have a cooldown.
    static func zones(seed: UInt64, circles: Int, polygons: Int) -> [ZoneDefinition] {
        var rng = SplitMix64(seed: seed)
        // Uniform in lo ..< hi from 53 bits (Double.random(in:using:) is slow in a debug build,
        // and this runs millions of times).
        func uniform(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * Double(rng.next() >> 11) * 0x1p-53 }
        var out: [ZoneDefinition] = []
        out.reserveCapacity(circles + polygons)
        func options(_ z: inout ZoneDefinition) {
            z.notifyOnExit = uniform(0, 1) < 0.3
            if uniform(0, 1) < 0.05 { z.dwell = uniform(5, 60) }
            if uniform(0, 1) < 0.1 { z.cooldown = uniform(10, 600) }
        }
        for i in 0 ..< circles {
            let c = Coordinate(latitude: 51 + uniform(0, 0.1), longitude: 6.5 + uniform(0, 0.15))
            var z = ZoneDefinition(id: "c\(i)", shape: .circle(center: c, radius: uniform(5, 40)))
            options(&z)
            out.append(z)
        }
        for i in 0 ..< polygons {
            let lat = 51 + rng.uniform(0, 0.1), lon = 6.5 + rng.uniform(0, 0.15)
            let n = rng.int(3 ... 6), size = rng.uniform(15, 120)
            let vertices = (0 ..< n).map { k in
                let a = Double(k) * 2 * .pi / Double(n) + rng.uniform(0, 0.3)
                let r = size * rng.uniform(0.6, 1)
                return Coordinate(latitude: lat + r * cos(a) / 111_195, longitude: lon + r * sin(a) / (111_195 * cos(lat * .pi / 180)))
            }
            var z = ZoneDefinition(id: "p\(i)", shape: .polygon([[vertices]]))
            options(&z)
            out.append(z)
        }
        return out
    }

    /// A drive at 1 Hz through the zones' area: ~14 m/s, turning, σ 4 m of noise, a few dropouts
    /// (fixes without a position) and gaps of several seconds.
    static func drive(seed: UInt64, fixes: Int) -> [Fix] {
        var rng = SplitMix64(seed: seed ^ 0xD21E)
        var lat = 51.02, lon = 6.52, heading = 45.0
        var out: [Fix] = []
        var t: Int64 = 1_780_315_200
        for _ in 0 ..< fixes {
            t += rng.chance(0.03) ? Int64(rng.int(2 ... 8)) : 1
            heading += rng.uniform(-20, 20)
            if lat > 51.09 || lat < 51.01 || lon > 6.64 || lon < 6.51 { heading = atan2(6.575 - lon, 51.05 - lat) * 180 / .pi }
            let step = rng.uniform(10, 18)
            lat += step * cos(heading * .pi / 180) / 111_195
            lon += step * sin(heading * .pi / 180) / (111_195 * cos(lat * .pi / 180))
            if rng.chance(0.02) {
                out.append(Fix(time: WallInstant(secondsSinceEpoch: t), mode: .none, isValid: false))
                continue
            }
            let noisy = Coordinate(latitude: lat + rng.gaussian() * 4 / 111_195,
                                   longitude: lon + rng.gaussian() * 4 / (111_195 * cos(lat * .pi / 180)))
            out.append(Fix(time: WallInstant(secondsSinceEpoch: t), coordinate: noisy, mode: .threeD, isValid: true,
                           speed: step, course: heading, hdop: 0.9, satellitesUsed: 9, horizontalError: 4))
        }
        return out
    }

    /// Runs `body` on a thread of its own and waits for it without holding one of the test
    /// runner's few cooperative threads for a minute or more (on 2 cores the pool has 2: a long
    /// synchronous test there starves the suites that await, into their time limits).
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.stackSize = 16 << 20
            thread.start()
        }
    }

    @Test func millionCirclesAndTenThousandPolygonsAgreeWithReplay() async throws {
        let seed = Self.seed
        let (a, b, entered, zones, fixes, built, seconds) = try await Self.onOwnThread { try Self.run(seed: seed) }
        // The drive must really go through the zones, circles and polygons both.
        #expect(built == zones, "seed \(seed): \(built) zones in the set of \(zones)")
        #expect(entered.count > 1_000, "seed \(seed): the drive entered only \(entered.count) zones")
        #expect(entered.contains { $0.hasPrefix("p") }, "seed \(seed): no polygon entered")
        #expect(a.count == b.count, "seed \(seed): \(a.count) events from the zone set, \(b.count) from replay")
        if let k = (0 ..< min(a.count, b.count)).first(where: { a[$0] != b[$0] }) {
            Issue.record("seed \(seed): event \(k) differs: zone set \(a[k]), replay \(b[k])")
        }
        print("ZoneSetReplayAgreementTests: seed \(seed), \(zones) zones, \(fixes) fixes, \(b.count) events, \(entered.count) zones entered, \(seconds) s")
    }

    /// Both event lists ("time zone kind" lines), the zones replay saw entered, the counts and
    /// the seconds it took.
    static func run(seed: UInt64) throws -> (setEvents: [String], replayEvents: [String], entered: Set<String>,
                                              zones: Int, fixes: Int, built: Int, seconds: Int) {
        let started = Date()
        let definitions = Self.zones(seed: seed, circles: 1_000_000, polygons: 10_000)
        let fixes = Self.drive(seed: seed, fixes: 800)

        // The zone set, as the agent builds and maps it.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-zoneset-agree-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("state.sqlite.zones").path
        var builder = ZoneSetBuilder()
        for z in definitions {
            let (region, content) = try ZoneSetCompiler.entry(for: z, limits: RequestLimits())
            builder.add(region, content: content)
        }
        let built = try ZoneSetFiles.write(builder.finish(sourceHash: seed), to: path)
        let loaded = try LoadedZoneSet(path: path)
        var zoneMonitor = RegionMonitor()
        zoneMonitor.replaceZoneSet(loaded.set)
        let fromSet = ReplayMonitor.events(monitor: &zoneMonitor, fixes: fixes)

        // `fencepost replay`: every zone a region in memory.
        let fromReplay = try ReplayMonitor.events(zones: definitions, fixes: fixes)

        func line(_ e: ReplayEvent) -> String { "\(e.time.secondsSinceEpoch).\(e.nanoseconds) \(e.region) \(e.kind.rawValue)" }
        let entered = Set(fromReplay.filter { $0.kind == .enter }.map { $0.region })
        return (fromSet.map(line), fromReplay.map(line), entered, definitions.count, fixes.count, built.zones,
                Int(Date().timeIntervalSince(started)))
    }
}
