// `fencepost zones build|info|near`: zone sets ahead of time, on a bigger machine, and a look at one.
import ArgumentParser
import FencepostAgent
import FencepostLinux
import Geofencing
import LocalNotifications
import Position
#if canImport(Glibc)
import Glibc
#endif

struct ZonesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zones",
        abstract: "Build and inspect zone sets (the compiled, memory-mapped form of a GeoJSON zones file).",
        discussion: """
            The agent builds the set of its `zones` file itself (next to its state file, when the \
            GeoJSON changes); `zones build` does the same ahead of time. Copy the result to \
            STATE.zones (e.g. /var/lib/fencepost/state.sqlite.zones) and the agent uses it \
            when it was built from the same GeoJSON.
            """,
        subcommands: [Build.self, Info.self, Near.self])

    struct Build: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Build a zone set from a GeoJSON FeatureCollection.",
            discussion: """
                Checks every feature as the agent does (a bad one is refused with its index, id \
                and reason; nothing is written). Writes OUT atomically: a temporary file, fsync, \
                rename. Shows progress on a terminal. Exit status: 0 built, 66 the GeoJSON cannot be \
                read, 65 a bad feature, 74 the set cannot be written.
                """)

        @Argument(help: ArgumentHelp("The GeoJSON file.", valueName: "in.geojson"))
        var input: String

        @Option(name: .shortAndLong, help: ArgumentHelp("The zone set to write.", valueName: "out"))
        var output: String

        @Option(help: ArgumentHelp("Largest circle radius accepted, metres (the agent's [engine] max_radius).", valueName: "metres"))
        var maxRadius: Double = RequestLimits().maximumRadius

        @Flag(help: "Do nothing (exit status 3) when OUT was built from this GeoJSON already.")
        var ifChanged = false

        func run() throws {
            var limits = RequestLimits()
            limits.maximumRadius = maxRadius
            if ifChanged, ZoneSetFiles.isCurrent(output, geojsonPath: input, limits: limits) {
                throw ExitCode(ZoneSetFiles.unchangedStatus)
            }
            let terminal = isatty(2) == 1
            let start = SystemClocks.boottimeNow().nanosecondsSinceBoot
            let built: ZoneSetFiles.Built
            do {
                built = try ZoneSetFiles.build(geojsonPath: input, output: output, limits: limits) { features, offset, total in
                    guard terminal else { return }
                    let percent = total > 0 ? offset * 100 / total : 100
                    writeStandardError("\r\(features) zones read, \(percent) %")
                }
            } catch {
                if terminal { writeStandardError("\n") }
                writeErrorLine("fencepost zones build: \(error)")
                switch error.kind {
                case .input: throw ExitCode(66)
                case .content: throw ExitCode(65)
                case .output: throw ExitCode(74)
                }
            }
            if terminal { writeStandardError("\n") }
            let seconds = Double(SystemClocks.boottimeNow().nanosecondsSinceBoot - start) / 1e9
            let peak = Memory.peakResidentKilobytes().map { ", peak \($0) kB resident" } ?? ""
            print("\(output): \(built.zones) zones, \(built.bytes) bytes, source hash \(hex(built.sourceHash)), built in \(seconds.formatted1) s\(peak)")
        }
    }

    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Counts, bounds, hash and version of a zone set.")

        @Argument(help: ArgumentHelp("The zone set.", valueName: "file"))
        var file: String

        func run() throws {
            let loaded = try open(file)
            let s = loaded.set
            var circles = 0
            for z in 0 ..< s.count where s.zone(z).region.shape.isCircle { circles += 1 }
            print("file        \(file)")
            print("version     \(s.version)")
            print("zones       \(s.count) (\(circles) circles, \(s.count - circles) polygons)")
            print("entries     \(s.entryCount) in the index")
            if let b = s.bounds {
                print("bounds      lat \(b.minLatitude) … \(b.maxLatitude), lon \(b.minLongitude) … \(b.maxLongitude)")
            } else {
                print("bounds      (empty)")
            }
            print("source hash \(hex(s.sourceHash))")
            print("checksum    \(hex(s.checksum))")
            print("bytes       \(s.bytes.count)")
        }
    }

    struct Near: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The zones around a point, nearest first.")

        @Argument(help: "Latitude, degrees.") var latitude: Double
        @Argument(help: "Longitude, degrees.") var longitude: Double

        @Option(help: ArgumentHelp("The zone set (default: the agent's, next to its state file).", valueName: "file"))
        var set: String = ZoneSetFiles.setPath(forState: "/var/lib/fencepost/state.sqlite")

        @Option(help: ArgumentHelp("Search radius, metres.", valueName: "metres"))
        var radius: Double = 1000

        @Option(help: "Most zones listed (at least 1).")
        var limit: Int = 20

        func validate() throws {
            guard limit >= 1 else { throw ValidationError("--limit is at least 1") }
        }

        func run() throws {
            guard abs(latitude) <= 90, abs(longitude) <= 180, radius >= 0, radius.isFinite else {
                throw ValidationError("a point is LAT (−90…90) LON (−180…180) and the radius ≥ 0 metres")
            }
            let loaded = try open(set)
            let p = Coordinate(latitude: latitude, longitude: longitude)
            var found: [Int32] = []
            loaded.set.query(p, margin: radius, into: &found)
            let zones = found.map { loaded.set.zone(Int($0)) }
                .map { (zone: $0, distance: $0.region.shape.signedDistance(to: p)) }
                .sorted { $0.distance < $1.distance }
            print("\(zones.count) zone\(zones.count == 1 ? "" : "s") within \(Int(radius)) m of \(latitude), \(longitude)\(zones.count > limit ? " (nearest \(limit) shown)" : "")")
            for (z, d) in zones.prefix(limit) {
                let shape: String
                switch z.region.shape {
                case .circle(let c): shape = "circle r \(c.radius.formatted1) m"
                case .polygon(let g): shape = "polygon \(g.rings.first?.count ?? 0) vertices"
                }
                let where_ = d <= 0 ? "inside, \((-d).formatted1) m from the edge" : "\(d.formatted1) m away"
                print("  \(z.identifier)  \(where_)  (\(shape))")
            }
        }
    }

    static func open(_ path: String) throws -> LoadedZoneSet {
        do { return try LoadedZoneSet(path: path) } catch {
            writeErrorLine("fencepost zones: \(path): \(error)")
            throw ExitCode(error.needsRebuild ? 66 : 65)
        }
    }
}

private func hex(_ v: UInt64) -> String {
    let s = String(v, radix: 16)
    return String(repeating: "0", count: 16 - s.count) + s
}

extension Double {
    /// One decimal.
    var formatted1: String { "\((self * 10).rounded() / 10)" }
}

extension RegionShape {
    var isCircle: Bool { if case .circle = self { true } else { false } }
}
