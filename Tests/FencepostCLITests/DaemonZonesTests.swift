import FencepostLinux
import Foundation
import SeededRandom
import Testing

/// The agent with a zones file: applied in process at start, unchanged on SIGHUP and after a
/// restart (nothing rewritten), an edited zone replaced and a dropped one removed.
@Suite struct DaemonZonesTests {
    /// `count` circle zones around Düsseldorf as a GeoJSON FeatureCollection; `moved` gets another
    /// centre, `dropped` is left out.
    static func zones(_ count: Int, seed: UInt64, moved: Int? = nil, dropped: Int? = nil) -> String {
        var rng = SplitMix64(seed: seed)
        var features: [String] = []
        for i in 0..<count {
            var lat = 51 + rng.uniform(0, 0.5), lon = 6.5 + rng.uniform(0, 0.5)
            let radius = 50 + rng.uniform(0, 250)
            if i == moved { lat = 51.9; lon = 7.1 }
            if i == dropped { continue }
            features.append(#"{"type":"Feature","id":"z\#(i)","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":\#(radius)}}"#)
        }
        return #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"
    }

    @Test func zonesAppliedOnceThenUnchangedOnReloadAndRestart() throws {
        let seed: UInt64 = 5
        let d = try DaemonProcess()
        let zonesFile = d.dir.appendingPathComponent("zones.geojson")
        try Data(Self.zones(3000, seed: seed).utf8).write(to: zonesFile)
        try d.writeConfig("zones = \"zones.geojson\"\n[engine]\nlocation_cap = 10000\n[gpio]\nbackend = \"console\"\n")
        try d.start(agent: true)
        #expect(d.waitForLog("configuration applied: 3000 added (z0, z1,"), "seed \(seed), log:\n\(d.stderr)")

        d.signal(SIGHUP)
        #expect(d.waitForLog("configuration applied: 0 added, 0 replaced, 0 removed, 3000 unchanged"), "log:\n\(d.stderr)")

        try Data(Self.zones(3000, seed: seed, moved: 5, dropped: 7).utf8).write(to: zonesFile)
        d.signal(SIGHUP)
        #expect(d.waitForLog("configuration applied: 0 added, 1 replaced (z5), 1 removed (z7), 2998 unchanged"), "log:\n\(d.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0)

        try d.start(agent: true)
        #expect(d.waitForLog("configuration applied: 0 added, 0 replaced, 0 removed, 2999 unchanged"), "log:\n\(d.stderr)")
        #expect(d.stderr.contains("2999 pending"), "log:\n\(d.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0)

        // The memory of what was applied: one row per zone, z7 gone.
        let store = try NotificationStore(path: d.statePath)
        let applied = try store.appliedRequests()
        #expect(applied.count == 2999)
        #expect(!applied.contains { $0.id == "z7" })
    }
}
