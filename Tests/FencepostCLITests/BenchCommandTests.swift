import FencepostJSON
import Foundation
import Testing
import FencepostTestSupport

/// `fencepost bench` end to end through the built binary, with a tiny budget. Behaviour only:
/// which rows and fields appear, exit codes; never the figures themselves.
@Suite(.processes) struct BenchCommandTests {
    /// A few cheap cases: one next-fire shape, the 20-region geofence pair, the engine.
    static let small = ["--seconds", "0.02", "--filter", "daily", "--filter", "uniform 20", "--filter", "engine"]

    @Test func tableHasOneRowPerSelectedCase() throws {
        let r = try ChildProcess.run(["bench"] + Self.small)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdoutLines
        let header = try #require(lines.firstIndex { $0.hasPrefix("case ") })
        for column in ["size", "p50", "p90", "p99", "ops/s", "vs baseline"] { #expect(lines[header].contains(column)) }
        #expect(lines[header + 1].allSatisfy { $0 == "-" || $0 == " " })
        let rows = Array(lines[(header + 2)...].prefix { !$0.isEmpty })
        #expect(rows.map { String($0.split(separator: "  ").first ?? "") } == [
            "next-fire daily 07:00, Europe/Berlin", "geofence haversine scan, uniform", "geofence brute force, uniform",
            "geofence index, uniform", "engine add+remove",
        ], "\(rows)")
        // The index is compared with the brute-force scan (its own exact test) of the same run;
        // the haversine scan is labelled as the naive baseline.
        #expect(rows[1].hasSuffix("(naive baseline)"))
        #expect(rows[2].hasSuffix("(baseline)"))
        #expect(rows[3].contains("× vs brute force"), "\(rows[3])")
        #expect(rows[3].contains(" 20 "))
        #expect(rows[4].contains("10k pending"))
        // Every row has three durations.
        for row in rows { #expect(row.split(separator: " ").filter { ["ns", "µs", "ms", "s"].contains($0) }.count == 3, "\(row)") }
        #expect(lines.last?.hasPrefix("checksum 0x") == true)
        // The header says what was measured where; a debug build says its figures are meaningless.
        #expect(lines.contains { $0.hasPrefix("fencepost ") && $0.contains("cores") })
        if lines.contains(where: { $0.contains("(debug)") }) {
            #expect(lines.first?.contains("WARNING") == true)
            #expect(r.stderr.contains("WARNING"))
        }
    }

    @Test func jsonIsOneDocumentWithMachineAndCases() throws {
        let r = try ChildProcess.run(["bench", "--json", "--nmea-size", "50000", "--filter", "framer+decoders"] + Self.small)
        #expect(r.status == 0, "\(r.stderr)")
        let doc = try JSONValue.parse(r.stdout)
        #expect(doc["fencepost"]?.string?.isEmpty == false)
        let configuration = try #require(doc["configuration"]?.string)
        #expect(["debug", "release"].contains(configuration))
        #expect((doc["warning"] != nil) == (configuration == "debug"))
        let machine = try #require(doc["machine"])
        #expect(machine["cpu"]?.string?.isEmpty == false)
        #expect((machine["cores"]?.int64 ?? 0) >= 1)
        #expect(machine["kernel"]?.string?.hasPrefix("Linux ") == true)
        #expect(machine["architecture"]?.string?.isEmpty == false)
        #expect(doc["checksum"]?.string?.hasPrefix("0x") == true)

        guard case .array(let cases)? = doc["cases"] else { Issue.record("no cases: \(r.stdout)"); return }
        #expect(cases.compactMap { $0["case"]?.string } == [
            "next-fire daily 07:00, Europe/Berlin", "geofence haversine scan, uniform 20", "geofence brute force, uniform 20",
            "geofence index, uniform 20", "nmea framer+decoders 50 kB", "engine add+remove 10k pending",
        ])
        for c in cases {
            let ns = try #require(c["nsPerOperation"])
            let p50 = try #require(ns["p50"]?.double), p90 = try #require(ns["p90"]?.double)
            let p99 = try #require(ns["p99"]?.double), min = try #require(ns["min"]?.double)
            #expect(min > 0 && min <= p50 && p50 <= p90 && p90 <= p99, "\(c)")
            #expect((c["batches"]?.int64 ?? 0) >= 3)
            #expect((c["operations"]?.int64 ?? 0) >= 3)
            #expect((c["operationsPerSecond"]?.double ?? 0) > 0)
            #expect(c["checksum"]?.string?.hasPrefix("0x") == true)
        }
        #expect(cases[3]["baseline"]?.string == "geofence brute force, uniform 20")
        #expect(cases[3]["speedupOverBaseline"]?.double.map { $0 > 0 } == true)
        // The synthetic log frames without a single rejected sentence.
        #expect(cases[4]["operation"]?.string == "sentence")
        #expect((cases[4]["megabytesPerSecond"]?.double ?? 0) > 0)
        #expect((cases[4]["bytesPerPass"]?.int64 ?? 0) >= 50_000)
        #expect((cases[4]["sentencesPerPass"]?.int64 ?? 0) > 500)
        #expect(cases[4]["rejectedPerPass"]?.int64 == 0)
    }

    @Test func recordedLogIsRepeatedAndItsRejectsCounted() throws {
        let folder = try ReplayTests.Folder()
        // Good sentences of the replay tests' drive, then one with a wrong checksum.
        let good = ReplayTests.drive().split(whereSeparator: \.isNewline).filter { $0.hasPrefix("$") }.prefix(30)
        let text = good.joined(separator: "\r\n") + "\r\n$GPGGA,bad*00\r\n"
        let log = try folder.write("drive.nmea", text)
        let r = try ChildProcess.run(["bench", "--json", "--seconds", "0.02", "--filter", "nmea framer 20 kB",
                                      "--nmea-log", log, "--nmea-size", "20000"])
        #expect(r.status == 0, "\(r.stderr)")
        let doc = try JSONValue.parse(r.stdout)
        guard case .array(let cases)? = doc["cases"], let c = cases.first else { Issue.record("no cases: \(r.stdout)"); return }
        #expect(cases.count == 1)
        let bytes = try #require(c["bytesPerPass"]?.int64)
        let rejected = try #require(c["rejectedPerPass"]?.int64)
        #expect(bytes >= 20_000)
        // One bad line per copy of the file in the log.
        #expect(rejected >= 1)
        #expect(rejected == bytes / Int64(text.utf8.count))
        #expect(c["sentencesPerPass"]?.int64 == 30 * rejected)

        let missing = try ChildProcess.run(["bench", "--filter", "nmea framer 20 kB", "--nmea-size", "20000",
                                          "--nmea-log", folder.path("none.nmea")])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("none.nmea"))
        let empty = try ChildProcess.run(["bench", "--filter", "nmea framer 20 kB", "--nmea-size", "20000",
                                          "--nmea-log", try folder.write("empty.nmea", "")])
        #expect(empty.status == 65)
        #expect(empty.stderr.contains("empty"), "\(empty.stderr)")
    }

    @Test func unknownFilterIsAUsageErrorNamingTheFilter() throws {
        let r = try ChildProcess.run(["bench", "--seconds", "0.02", "--filter", "daily", "--filter", "no-such-case"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("no case matches --filter \"no-such-case\""), "\(r.stderr)")
        #expect(r.stdout.isEmpty)

        // A case that exists behind a flag says which flag.
        let large = try ChildProcess.run(["bench", "--filter", "uniform 1M"])
        #expect(large.status == 64)
        #expect(large.stderr.contains("--large"), "\(large.stderr)")
        let zone = try ChildProcess.run(["bench", "--filter", "Lord_Howe"])
        #expect(zone.status == 64)
        #expect(zone.stderr.contains("--all"), "\(zone.stderr)")

        let badBudget = try ChildProcess.run(["bench", "--seconds", "0"])
        #expect(badBudget.status == 64)
    }

    @Test func listNamesEveryCaseWithoutRunningThem() throws {
        let plain = try ChildProcess.run(["bench", "--list"])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdoutLines.count == 5 + 18 + 2 + 1, "\(plain.stdout)")
        #expect(!plain.stdout.contains("1M"))
        let every = try ChildProcess.run(["bench", "--list", "--all", "--large"])
        #expect(every.stdoutLines.filter { $0.hasPrefix("next-fire ") }.count == 20)
        #expect(every.stdoutLines.contains("geofence index, uniform 1M"))
        #expect(every.stdoutLines.contains("geofence brute force, uniform 1M"))
        #expect(every.stdoutLines.contains("geofence haversine scan, uniform 1M"))
        let picked = try ChildProcess.run(["bench", "--list", "--filter", "CLUSTERED 1K"])
        #expect(picked.stdoutLines == ["geofence haversine scan, clustered 1k", "geofence brute force, clustered 1k", "geofence index, clustered 1k"])
    }
}
