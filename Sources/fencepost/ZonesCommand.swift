// `fencepost zones build|info|near`: zone sets ahead of time, on a bigger machine, and a look at one.
import FencepostJSON
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

    /// `zones build`: ``ZoneSetBuildCommand`` (FencepostAgent), the one implementation, which
    /// `fencepost-agent zones build` and a SIGHUP's rebuild run too. The arguments go to it as
    /// given; this type only puts its help into `fencepost zones build --help`.
    struct Build: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Build a zone set from a GeoJSON FeatureCollection.",
            usage: "fencepost " + ZoneSetBuildCommand.synopsis,
            discussion: ZoneSetBuildCommand.details)

        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("IN.geojson -o OUT and the options above.", valueName: "arguments"))
        var arguments: [String] = []

        func run() throws {
            let status = ZoneSetBuildCommand.run(arguments, program: "fencepost")
            if status != 0 { throw ExitCode(status) }
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
            print("source hash \(s.sourceHash.hexDigits)")
            print("checksum    \(s.checksum.hexDigits)")
            print("bytes       \(s.bytes.count)")
        }
    }

    struct Near: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The zones around a point, nearest first.")

        /// LAT LON, read here rather than as two `Double` arguments: ArgumentParser takes `-29.3`
        /// (the southern and western hemispheres) for an option.
        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Latitude and longitude, degrees (negative south and west).", valueName: "lat lon"))
        var coordinates: [String] = []

        var latitude: Double { Double(coordinates[0])! }
        var longitude: Double { Double(coordinates[1])! }

        @Option(help: ArgumentHelp("The zone set (default: the agent's, next to its state file).", valueName: "file"))
        var set: String = ZoneSetFiles.setPath(forState: "/var/lib/fencepost/state.sqlite")

        @Option(help: ArgumentHelp("Search radius, metres.", valueName: "metres"))
        var radius: Double = 1000

        @Option(help: "Most zones listed (at least 1).")
        var limit: Int = 20

        func validate() throws {
            guard limit >= 1 else { throw ValidationError("--limit is at least 1") }
            guard coordinates.count == 2 else {
                throw ValidationError("give the point as LAT LON (two numbers), got \(coordinates.isEmpty ? "none" : coordinates.joined(separator: " "))")
            }
            for (name, text) in zip(["latitude", "longitude"], coordinates) where Double(text) == nil {
                throw ValidationError("\(name) \"\(text)\" is not a number")
            }
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
                case .polygon(let g): shape = ZonesCommand.describe(g.parts)
                }
                let where_ = d <= 0 ? "inside, \((-d).formatted1) m from the edge" : "\(d.formatted1) m away"
                print("  \(z.identifier)  \(where_)  (\(shape))")
            }
        }
    }

    /// `polygon 5 vertices`, `polygon 40 vertices, 3 parts, 1 hole`.
    static func describe(_ parts: [[[Coordinate]]]) -> String {
        let vertices = parts.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } }
        let holes = parts.reduce(0) { $0 + max(0, $1.count - 1) }
        var s = "polygon \(vertices) vertices"
        if parts.count > 1 { s += ", \(parts.count) parts" }
        if holes > 0 { s += ", \(holes) hole\(holes == 1 ? "" : "s")" }
        return s
    }

    static func open(_ path: String) throws -> LoadedZoneSet {
        do { return try LoadedZoneSet(path: path) } catch {
            writeErrorLine("fencepost zones: \(path): \(error)")
            throw ExitCode(error.needsRebuild ? 66 : 65)
        }
    }
}

extension Double {
    /// One decimal.
    var formatted1: String { "\((self * 10).rounded() / 10)" }
}

extension RegionShape {
    var isCircle: Bool { if case .circle = self { true } else { false } }
}
