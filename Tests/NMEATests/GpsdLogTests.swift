import Foundation
import NMEA
import Position
import Testing

/// Our fixes against gpsd 3.27's expected output for its own regression logs.
///
/// The oracle (the README in the test-data folder): the TPV reports that have `lat` and `time`;
/// gpsd reports an epoch incrementally, so for each time we take its last TPV (the epoch's final
/// state). Ours: the fixes with a time, a coordinate and mode 2D/3D. Both sets of times must be
/// equal, and at each time the position must agree within 1e-6° and the mode exactly.
@Suite("gpsd regression logs")
struct GpsdLogTests {
    /// Logs where we knowingly differ from gpsd, with the reason. The test fails on a mismatch in a
    /// log not listed here, and on a listed log that no longer differs (stale entry).
    static let exceptions: [String: Exception] = {
        let firstEpoch = "the log's first fix epoch: gpsd reports it without a time (it has no date yet, or is "
            + "still learning which sentence ends the receiver's cycle); we date it from the epoch's own RMC/ZDA"
        let lastEpoch = "the log ends inside an epoch: gpsd reports at its cycle end, which never comes; "
            + "our finish() emits the epoch"
        let noCycleEnd = "gpsd reports a cycle when the sentence that usually ends it arrives (GLL here); this "
            + "cycle lacks it in the log (a lost line or a sparse excerpt), so gpsd never reports it; we report "
            + "every epoch"
        var t: [String: Exception] = [:]
        for name in ["beidou-bd.log", "beidou-gb.log", "blumax-gps009.log", "bn-9015.log", "geos-1m.log",
                     "motorola-t805.log", "mtk-3301.log", "haicom-305N.log", "myguide-3100.log", "rgm3800.log", "tr737A+.log"] {
            t[name] = Exception(leading: 1, firstEpoch)
        }
        for name in ["ch-4701.log", "gps-360.log", "isync.log", "pharos-360.log", "quectel-l76k-nmea.log",
                     "st-teseo-liv3f.log", "ublox-lea-4h.log", "foretrex-201.log", "ublox-lea-4s.log", "venus634lp.log"] {
            t[name] = Exception(trailing: 1, lastEpoch)
        }
        t["bt451.log"] = Exception(extra: 1, datedByUs: 1, trailing: 1,
            "sparse excerpt: the 14:33:08.5 epoch has only RMC+VTG and no GLL (gpsd's cycle end); the first fix "
            + "gpsd reports untimed and we date from its RMC; and " + lastEpoch)
        t["gp-320fw-2019-03-28.log"] = Exception(extra: 1, noCycleEnd)
        t["gp-320fw-2019-04-06-overflow.log"] = Exception(extra: 1, noCycleEnd)
        t["ublox-lea-5h.log"] = Exception(extra: 1,
            "08:37:36 RMC+VTG, then the excerpt jumps to 08:55:15: gpsd never closes that cycle; we report it")
        t["tn204.log"] = Exception(extra: 1,
            "this Garmin sends RMC on even seconds and GGA+GLL on odd ones; gpsd does not report the first "
            + "GGA+GLL epoch (23:01:49) while it learns that cycle; we report it")
        t["neo-m8n.log"] = Exception(leading: 1, shifted1024Weeks: 22,
            "gpsd 3.27 dates this 2015 log 1024 weeks later (2034; its week-rollover guess), positions and modes "
            + "agree; and " + firstEpoch)
        t["garmin48.log"] = Exception(extra: 6,
            "this Garmin stamps GLL 1 s after the RMC/GGA of the same cycle; gpsd reports each cycle once, at "
            + "the GLL's time; we report the RMC/GGA epoch and the GLL epoch")
        t["hemi.log"] = Exception(extra: 14, leading: 1,
            "Hemisphere GGA with quality 1 but 0 satellites used: gpsd calls it no fix; we follow the quality "
            + "field (Furuno sends quality 2 with 0 satellites for real fixes, and gpsd accepts those)")
        t["garmin25lp.log"] = Exception(differing: 1,
            "first fix epoch: GSA says 2D while GGA has an altitude; gpsd reports 2D there and 3D for every later "
            + "epoch with the same sentences; we report 3D throughout")
        t["sl869.log"] = Exception(differing: 1,
            "first fix epoch: GSA says 2D while GGA has an altitude; gpsd reports 2D there and 3D for every later "
            + "epoch with the same sentences; we report 3D throughout")
        return t
    }()

    /// A known difference: the exact number of mismatches of each kind, and why.
    struct Exception {
        var counts: Counts
        var reason: String
        init(missing: Int = 0, extra: Int = 0, differing: Int = 0, datedByUs: Int = 0, trailing: Int = 0,
             leading: Int = 0, shifted1024Weeks: Int = 0, _ reason: String) {
            counts = Counts(missing: missing, extra: extra, differing: differing, datedByUs: datedByUs,
                            trailing: trailing, leading: leading, shifted1024Weeks: shifted1024Weeks)
            self.reason = reason
        }
    }

    struct Counts: Hashable, CustomStringConvertible {
        var missing = 0, extra = 0, differing = 0, datedByUs = 0, trailing = 0, leading = 0, shifted1024Weeks = 0
        var description: String {
            "missing \(missing), extra \(extra), differing \(differing), dated by us \(datedByUs), "
                + "trailing \(trailing), leading \(leading), shifted 1024 weeks \(shifted1024Weeks)"
        }
    }

    struct Mismatch: CustomStringConvertible {
        var missing: [GpsdLogs.Report] = []
        var extra: [(Int64, Fix)] = []
        /// Extra fixes whose position and mode gpsd did report, but without a time (gpsd had no
        /// date yet; we date the epoch from its own RMC or ZDA that comes later in the epoch).
        var datedByUs: [(Int64, Fix)] = []
        /// Extra fixes after gpsd's last report: the log ends inside an epoch, which gpsd never
        /// reports (its cycle end never comes) and our `finish` emits.
        var trailing: [(Int64, Fix)] = []
        /// Extra fixes before gpsd's first report with a time: gpsd stays quiet while it learns
        /// the receiver's cycle (which sentence ends it); we report every epoch from the start.
        var leading: [(Int64, Fix)] = []
        /// Fixes that agree with gpsd except that gpsd's time is 1024 weeks (619,315,200 s) later:
        /// gpsd's week-rollover guess (`gpsd_utc_resolve`) on a log recorded before its build's
        /// expected epoch.
        var shifted1024Weeks = 0
        var differing: [(GpsdLogs.Report, Fix)] = []
        var isEmpty: Bool { missing.isEmpty && extra.isEmpty && differing.isEmpty && datedByUs.isEmpty && trailing.isEmpty
            && leading.isEmpty && shifted1024Weeks == 0 }
        var counts: Counts { Counts(missing: missing.count, extra: extra.count, differing: differing.count, datedByUs: datedByUs.count, trailing: trailing.count,
                            leading: leading.count, shifted1024Weeks: shifted1024Weeks) }
        var description: String {
            var s = "\(counts)"
            for m in missing.prefix(3) { s += "\n  missing \(m)" }
            for (t, f) in extra.prefix(3) { s += "\n  extra \(t) \(f.coordinate.map { "\($0)" } ?? "-") mode \(f.mode.rawValue)" }
            for (r, f) in differing.prefix(3) {
                s += "\n  differs \(r) ours \(f.coordinate.map { "\($0)" } ?? "-") mode \(f.mode.rawValue)"
            }
            return s
        }
    }

    static func compare(_ name: String) throws -> Mismatch {
        let (expected, untimed) = try GpsdLogs.expected(name)
        var ours: [Int64: Fix] = [:]
        for fix in GpsdLogs.fixes(try GpsdLogs.input(name)) {
            guard let t = fix.time, fix.coordinate != nil, fix.mode >= .twoD else { continue }
            ours[t.secondsSinceEpoch * 1000 + Int64(fix.nanoseconds / 1_000_000)] = fix
        }
        var m = Mismatch()
        let week1024: Int64 = 619_315_200_000
        for (t, r) in expected.sorted(by: { $0.key < $1.key }) {
            if ours[t] == nil, expected[t - week1024] == nil, let f = ours[t - week1024],
               abs(f.coordinate!.latitude - r.latitude) <= 1e-6, abs(f.coordinate!.longitude - r.longitude) <= 1e-6,
               f.mode.rawValue == r.mode {
                m.shifted1024Weeks += 1
                ours[t - week1024] = nil
                continue
            }
            guard let f = ours[t] else { m.missing.append(r); continue }
            let c = f.coordinate!
            if abs(c.latitude - r.latitude) > 1e-6 || abs(c.longitude - r.longitude) > 1e-6 || f.mode.rawValue != r.mode {
                m.differing.append((r, f))
            }
        }
        for (t, f) in ours.sorted(by: { $0.key < $1.key }) where expected[t] == nil {
            let c = f.coordinate!
            if let last = expected.keys.max(), t > last, t == ours.keys.max() {
                m.trailing.append((t, f))
            } else if let first = expected.keys.min(), t < first, t == ours.keys.min() {
                m.leading.append((t, f))
            } else if untimed.contains(where: {
                abs(c.latitude - $0.latitude) <= 1e-6 && abs(c.longitude - $0.longitude) <= 1e-6 && f.mode.rawValue == $0.mode
            }) {
                m.datedByUs.append((t, f))
            } else {
                m.extra.append((t, f))
            }
        }
        return m
    }

    @Test("fixes agree with gpsd's .chk TPV reports",
          // Skips (with the folder named in the message) when the shared test data is absent;
          // `missingTestData` fails instead when FENCEPOST_REQUIRE_SHARED_TESTDATA is set.
          .enabled(if: GpsdLogs.available, "gpsd logs not found at \(GpsdLogs.folder.path)"))
    func agreeWithGpsd() throws {
        var agree = 0
        var report = ""
        for name in GpsdLogs.names {
            let m = try Self.compare(name)
            if m.isEmpty { agree += 1 }
            if let exception = Self.exceptions[name] {
                #expect(m.counts == exception.counts,
                        "\(name): listed exception (\(exception.reason)) expects \(exception.counts), got \(m)")
                report += "\(name): exception (\(exception.reason)): \(m)\n"
            } else if !m.isEmpty {
                Issue.record("\(name) disagrees with gpsd: \(m)")
                report += "\(name): \(m)\n"
            }
        }
        print("gpsd logs: \(agree) of \(GpsdLogs.names.count) agree exactly\n" + report)
    }

    @Test("missing shared test data fails when required")
    func missingTestData() {
        if !GpsdLogs.available && GpsdLogs.required {
            Issue.record("FENCEPOST_REQUIRE_SHARED_TESTDATA is set but \(GpsdLogs.folder.path) is missing")
        }
    }
}
