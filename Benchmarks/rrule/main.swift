// Next fire of the four recurrence rules, Fencepost's RecurrenceSchedule, measured beside
// python-dateutil by run.sh in the same run (dateutil_next.py drives it sample by sample: `--serve`). Built by run.sh with `swiftc -O -wmo` together with
// Sources/CivilTime (one module, as the release build inlines across it).
//
// Four workloads, each 4,096 query instants (SplitMix64, the seed of NextFireWorkload); per sample
// one call per instant, ns per call.
//   now     DTSTART 2026-01-05 00:00 local; instants in the 30 days from 2026-11-26T00:00Z: a
//           device asking "what next?" of a rule set this year (dateutil_next.py measures the same)
//   refire  as now, but each instant replaced by the rule's next fire after it: the agent
//           re-arming a trigger after it fired (`nextDate(after: previousFire)`); dateutil_next.py
//           measures the same
//   aged    as now, but DTSTART 2021-01-04 00:00 local: the same questions of a rule set five
//           years earlier (dateutil_next.py measures the same; its cost grows with the instances
//           since DTSTART, Fencepost's does not)
//   spread  DTSTART 2000-01-03 00:00 local; instants in 2000…2100 (Fencepost only: its cost does
//           not depend on the distance from DTSTART)
import Glibc

func now() -> UInt64 { var t = timespec(); clock_gettime(CLOCK_MONOTONIC, &t); return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec) }

func tzif(_ name: String) -> ZoneRules {
    let f = fopen("/usr/share/zoneinfo/" + name, "rb")!
    var bytes: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true { let n = fread(&buf, 1, buf.count, f); if n <= 0 { break }; bytes += buf[0..<n] }
    fclose(f)
    return try! ZoneRules(tzif: bytes, identifier: name)
}

var state: UInt64 = 0x5EED_F1E7
func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
}
let nowInstant: Int64 = 1_795_651_200   // 2026-11-26T00:00:00Z
let nowInstants = (0..<4096).map { _ in WallInstant(secondsSinceEpoch: nowInstant + Int64(next() % (30 * 86_400))) }
let workloads: [(name: String, dtstart: CivilDateTime, instants: [WallInstant])] = [
    ("now", CivilDateTime(year: 2026, month: 1, day: 5), nowInstants),
    ("refire", CivilDateTime(year: 2026, month: 1, day: 5), nowInstants),
    ("aged", CivilDateTime(year: 2021, month: 1, day: 4), nowInstants),
    ("spread", CivilDateTime(year: 2000, month: 1, day: 3),
     (0..<4096).map { _ in WallInstant(secondsSinceEpoch: 946_684_800 + Int64(next() % 3_155_760_000)) }),
]
let rules = ["FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7", "FREQ=MONTHLY;BYDAY=-1FR", "FREQ=DAILY;BYHOUR=8,10,12,14,16,18", "FREQ=MONTHLY;BYMONTHDAY=-1"]
var zones: [String: ZoneRules] = [:]

/// A workload's rule in a zone, ready to be measured.
struct Case {
    let workload: String, rule: String, zoneName: String
    let schedule: RecurrenceSchedule
    let zone: ZoneRules
    let instants: [WallInstant]
    var sink: Int64 = 0
}

func prepare(workload name: String, rule text: String, zone zoneName: String) -> Case? {
    guard let w = workloads.first(where: { $0.name == name }) else { return nil }
    let zone = zones[zoneName] ?? tzif(zoneName)
    zones[zoneName] = zone
    let s = try! RecurrenceSchedule(try! RecurrenceRule(parsing: text), start: w.dtstart)
    let instants = w.name == "refire" ? w.instants.map { s.nextDate(after: $0, in: zone)! } : w.instants
    return Case(workload: name, rule: text, zoneName: zoneName, schedule: s, zone: zone, instants: instants)
}

/// One sample: ns per call over the workload's 4,096 calls.
func sample(_ c: inout Case) -> Double {
    let t0 = now()
    for a in c.instants { c.sink &+= c.schedule.nextDate(after: a, in: c.zone)?.secondsSinceEpoch ?? 0 }
    return Double(now() - t0) / Double(c.instants.count)
}

/// One row: p50 and p90 of 200 samples, as a JSON line.
func row(_ c: inout Case) -> String {
    var samples = (0..<200).map { _ in sample(&c) }
    samples.sort()
    return "{\"impl\":\"fencepost\",\"workload\":\"\(c.workload)\",\"rule\":\"\(c.rule)\",\"zone\":\"\(c.zoneName)\",\"p50_ns\":\(Int(samples[100].rounded())),\"p90_ns\":\(Int(samples[180].rounded())),\"sink\":\(c.sink % 7)}"
}

// `bench --serve` (how dateutil_next.py drives it, so that its samples and dateutil's alternate):
// a line `workload<TAB>rule<TAB>zone` prepares that case and answers `ready`; a line `sample`
// answers one sample of the case (ns per call) after an untimed pass. `bench [ZONE…]`: every row, 200 samples each.
if CommandLine.arguments.dropFirst().first == "--serve" {
    var current: Case? = nil
    while let line = readLine() {
        if line == "sample", var c = current {
            // One pass untimed first: the switch from the driver's process leaves caches and
            // branch predictors cold, which the loop of `row` does not see after its first sample.
            _ = sample(&c)
            print(sample(&c))
            current = c
        } else {
            let f = line.split(separator: "\t").map(String.init)
            current = f.count == 3 ? prepare(workload: f[0], rule: f[1], zone: f[2]) : nil
            print(current == nil ? "error: expected workload<TAB>rule<TAB>zone, got \(line)" : "ready")
        }
        fflush(stdout)
    }
} else {
    for w in workloads {
        for zoneName in CommandLine.arguments.count > 1 ? Array(CommandLine.arguments.dropFirst()) : ["UTC", "Europe/Berlin"] {
            for text in rules {
                var c = prepare(workload: w.name, rule: text, zone: zoneName)!
                print(row(&c))
            }
        }
    }
}
