// `zones build IN -o OUT [--max-radius M] [--id-property NAME] [--if-changed] [--retain-replaced] [--gunzip GZ]`:
// the one implementation of the command, its arguments included. `fencepost-agent zones build`
// runs it directly; `fencepost zones build` hands it its arguments untouched (the argument parser
// there only shows `help`). The command a SIGHUP spawns (`/proc/self/exe zones build …`) therefore
// means the same whichever of the two executables the daemon runs as.
import FencepostJSON
import CivilTime
import FencepostLinux
import LocalNotifications
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// `zones build`, shared by `fencepost` and `fencepost-agent`.
public enum ZoneSetBuildCommand {
    /// What the command line asks for.
    public struct Options: Equatable, Sendable {
        public var input: String
        public var output: String
        public var limits = RequestLimits()
        public var idProperty: String?
        public var ifChanged = false
        public var retainReplaced = false
        /// A gzip file decompressed into `input` before the build (a zone set from the fleet).
        public var gunzip: String?
    }

    /// The synopsis after the program name.
    public static let synopsis = "zones build IN.geojson -o OUT [--max-radius METRES] [--id-property NAME] [--if-changed] [--retain-replaced] [--gunzip GZ]"

    /// What the command does, its options and exit statuses (both executables' help; lines
    /// under 80 columns, so that the argument parser of `fencepost` keeps them as they are).
    public static let details = """
        Builds a zone set (the compiled, memory-mapped form of a GeoJSON zones file)
        as the agent does. Every feature is checked as the agent checks it; every
        bad one is reported with its index, id and reason (the first 20, then a
        count), and then nothing is written. OUT is written atomically (a temporary
        file, fsync, rename). Progress is shown on a terminal.

        Zones: a Point with properties.radius (metres) is a circle; a Polygon is a
        polygon with its holes; a MultiPolygon is one zone of several parts; a
        GeometryCollection of Polygons and MultiPolygons is one zone of all their
        parts. LineString, MultiPoint and the like are refused by type. Positions
        are [longitude, latitude].

        Edges are straight lines in longitude/latitude (RFC 7946), as geojson.io,
        QGIS and GEOS draw them, at any size; inside is the even-odd rule over
        all rings (a hole is outside); an edge longer than 180 degrees of
        longitude goes the short way across +-180. Each polygon is validated
        once here (crossing or overlapping edges, spikes, zero area are refused,
        naming the ring and edges) and stored with an edge index, so a fix
        costs the same at 10 or 1,000,000 vertices. See docs/zones.md.

        OPTIONS:
          -o, --output OUT     The zone set to write.
          --max-radius METRES  Largest circle radius accepted (the agent's
                               [engine] max_radius; default \(Int(RequestLimits().maximumRadius))).
          --id-property NAME   The property that names each zone (the agent's
                               zones_id_property), e.g. ADM0_A3 in Natural
                               Earth, fid in a QGIS export. A zone's id is
                               properties.NAME when the feature has it, else
                               the feature's "id", else properties.id.
                               Without it: "id", else properties.id.
          --if-changed         Do nothing (exit status 3) when OUT was built
                               from this GeoJSON with these options already.
          --retain-replaced    Keep the set being replaced as OUT.replaced
                               until the next such build (a running agent's
                               SIGHUP uses it: its mapping of the old set is
                               then let go without freeing blocks in its loop).
          --gunzip GZ          First decompress the gzip file GZ into IN
                               (written atomically), then build from IN (a
                               zone set from the fleet's broker).

        Exit status: 0 built, 3 unchanged (--if-changed), 64 usage, 65 a bad
        feature, 66 the GeoJSON cannot be read, 74 the set cannot be written.

        """

    /// Reads the arguments after "zones build" (an option's value follows it, or `--name=value`).
    /// - Returns: the options, nil for `--help`.
    /// - Throws: what is wrong with them, for a usage message.
    public static func parse(_ given: [String]) throws(UsageError) -> Options? {
        var reader = ArgumentReader(given)
        var input: String?, output: String?
        var options = Options(input: "", output: "")
        while let a = reader.next() {
            switch a {
            case "-h", "--help": return nil
            case "-o", "--output": output = try reader.value(of: a, example: "a file: -o zones.set")
            case "--max-radius":
                let text = try reader.value(of: a, example: "metres: --max-radius 50000")
                guard let r = Double(text), r > 0, r.isFinite else { throw UsageError("--max-radius must be a positive number of metres, got \(text)") }
                options.limits.maximumRadius = r
            case "--id-property": options.idProperty = try reader.value(of: a, example: "a property name: --id-property ADM0_A3")
            case "--if-changed": try reader.flag(a); options.ifChanged = true
            case "--retain-replaced": try reader.flag(a); options.retainReplaced = true
            case "--gunzip": options.gunzip = try reader.value(of: a, example: "a gzip file: --gunzip zones.geojson.gz")
            default:
                guard input == nil, !a.hasPrefix("-") else { throw ArgumentReader.unexpected(a, command: "zones build") }
                input = a
            }
        }
        guard let input else { throw UsageError("the GeoJSON file (IN.geojson) is missing") }
        guard let output else { throw UsageError("the zone set to write (-o OUT) is missing") }
        options.input = input
        options.output = output
        return options
    }

    /// Runs `zones build` with `arguments` (after "zones build"); returns the exit status (see
    /// ``details``). `program` names the executable in messages.
    public static func run(_ arguments: [String], program: String) -> Int32 {
        let options: Options
        do {
            guard let parsed = try parse(arguments) else {
                try? FileDescriptor.standardOutput.writeAll("usage: \(program) \(synopsis)\n\n\(details)")
                return 0
            }
            options = parsed
        } catch {
            try? FileDescriptor.standardError.writeAll("\(program) zones build: \(PrintableText.escaped("\(error)"))\nusage: \(program) \(synopsis)\n")
            return 64
        }
        return run(options, program: program)
    }

    /// Builds the set `options` ask for; returns the exit status.
    public static func run(_ options: Options, program: String) -> Int32 {
        if let gz = options.gunzip {
            do { try Gzip.decompress(gz, to: options.input) } catch {
                try? FileDescriptor.standardError.writeAll("\(program) zones build: --gunzip: \(PrintableText.escaped(error.message))\n")
                return 66
            }
        }
        if options.ifChanged, ZoneSetFiles.isCurrent(options.output, geojsonPath: options.input, limits: options.limits, idProperty: options.idProperty) {
            return ZoneSetFiles.unchangedStatus
        }
        let terminal = isatty(2) == 1
        let start = SystemClocks.boottimeNow().nanosecondsSinceBoot
        let built: ZoneSetFiles.Built
        do {
            built = try ZoneSetFiles.build(geojsonPath: options.input, output: options.output, limits: options.limits,
                                           idProperty: options.idProperty, retainReplaced: options.retainReplaced) { features, offset, total in
                guard terminal else { return }
                let percent = total > 0 ? offset * 100 / total : 100
                try? FileDescriptor.standardError.writeAll("\r\(features) zones read, \(percent) %")
            }
        } catch {
            if terminal { try? FileDescriptor.standardError.writeAll("\n") }
            for line in error.lines { try? FileDescriptor.standardError.writeAll("\(program) zones build: \(PrintableText.escaped(line))\n") }
            switch error.kind {
            case .input: return 66
            case .content: return 65
            case .output: return 74
            }
        }
        if terminal { try? FileDescriptor.standardError.writeAll("\n") }
        let seconds = Double((SystemClocks.boottimeNow().nanosecondsSinceBoot - start) / 100_000_000) / 10
        let peak = Memory.peakResidentKilobytes().map { ", peak \($0) kB resident" } ?? ""
        // Repeated ids: the later feature replaced the earlier zone (said, not an error).
        let replaced = (built.features ?? built.zones) - built.zones
        let repeats = replaced > 0 ? " (\(replaced) feature\(replaced == 1 ? "" : "s") replaced an earlier zone of the same id)" : ""
        try? FileDescriptor.standardOutput.writeAll(
            "\(options.output): \(built.zones) zones\(repeats), \(built.bytes) bytes, source hash \(built.sourceHash.hexDigits), built in \(seconds) s\(peak)\n")
        return 0
    }
}
