// `fencepost replay`: the position pipeline over a recorded log, offline and as fast as it can go.
// Time comes from the fixes, never from the clock, so a replay gives the same output every run.
//
//   file bytes ─▶ NMEA stream (TrackFormats/GPSLog.swift) ─┐
//              └▶ GPX reader (TrackFormats)  ─────┴▶ [Fix] ─▶ region monitor (ReplayMonitor.swift)
//                                                                 ─▶ [ReplayEvent] ─▶ text | jsonl | svg
import ArgumentParser
import CivilTime
import FencepostJSON
import FencepostLinux
import Position
import TrackFormats

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a recorded GPS log against geofences and show the enter/exit/dwell events.",
        discussion: """
            Reads a recorded drive, runs every fix through the region monitor exactly as the \
            daemon would, and reports the events. Time comes from the fixes (UTC), so the run \
            is offline, as fast as the machine goes, and gives the same answer every time.

            LOG is NMEA 0183 (a raw receiver capture, or a gpsd .log whose '#' lines are \
            comments) or a GPX 1.0/1.1 track; the format is detected from the content.

            ZONES is a GeoJSON FeatureCollection. A Point with properties.radius (metres) is a \
            circle; a Polygon is a polygon with its holes (a point in a hole is outside); a \
            MultiPolygon is one zone of several parts; a GeometryCollection of Polygons and \
            MultiPolygons is one zone of all their parts. LineString, MultiPoint and a Point \
            without a radius are refused, by type and feature. The id is properties.NAME when \
            --id-property NAME is given and the feature has it, else the feature's "id", else \
            properties.id. Optional properties: notifyOnEntry, notifyOnExit (default true), \
            dwell and cooldown (seconds). Coordinates are [longitude, latitude] (an altitude is \
            ignored). Edges are straight lines in longitude/latitude (RFC 7946, as geojson.io, \
            QGIS and GEOS draw them), at any size; an edge longer than 180° of longitude goes the \
            short way across ±180°. Every bad feature is reported (the first 20, then a count). \
            The format, with its limits, is in docs/zones.md:

              {"type":"FeatureCollection","features":[
                {"type":"Feature","id":"depot",
                 "geometry":{"type":"Point","coordinates":[6.7735,51.2277]},
                 "properties":{"radius":150,"dwell":60}}]}

            Examples:

              fencepost replay drive.nmea --zones zones.geojson
              fencepost replay drive.gpx --zones zones.geojson --jsonl
              {"t":"2011-09-15T05:52:03Z","region":"depot","event":"enter","lat":37.25,"lon":127.05}
              fencepost replay drive.nmea --zones zones.geojson --fixes --jsonl
              {"t":"2011-09-15T05:46:43Z","lat":37.255105,"lon":127.054975,
               "mode":3,"eph":5.0,"speed":5.916}        (one line in the output)
              fencepost replay drive.gpx --zones zones.geojson --svg map.svg
              fencepost replay drive.nmea --config /etc/fencepost/fencepost.toml --geojson out.geojson
              fencepost replay drive.nmea --fixes --jsonl          (a fixes dump needs no zones)

            --config takes the zones the agent would monitor from its configuration: the \
            location requests ([[request]] with trigger.location, circles and polygons) and the \
            zones file it names. --geojson writes the track (broken at gaps), the zones (circles \
            as Points with properties.radius, which --zones reads back) and the events (Points \
            with properties.event, region, t) for geojson.io or QGIS, which draw a basemap. The \
            SVG map has a scale bar, a north arrow, start and end markers, arrows in the \
            direction of travel, each event's time beside it, gaps in the fixes as dashed lines, \
            and a legend of what occurs on it.

            Events: enter, exit, dwell (a zone with a dwell time reports dwell instead of enter, \
            once the track has been inside for that long), unknown (no usable \
            position for too long; the zone's state is no longer known). An event's time is \
            where the track crossed the boundary, interpolated between two fixes, so it may \
            carry milliseconds (05:52:03.250Z). In --fixes --jsonl, mode is 1 (no fix), 2 or 3 \
            (2D/3D), eph the estimated horizontal error in metres, speed in m/s; a value the \
            source did not give is null. The readable report and the SVG show the same events.

            Exit status: 0 success, 64 usage error, 65 data error (a log that is neither NMEA \
            nor GPX, bad GPX, bad GeoJSON — the message says where), 66 a file cannot be \
            opened, 73 the SVG or GeoJSON file cannot be created, 74 I/O error, 78 the --config file is \
            not a valid configuration.
            """
    )

    @Argument(help: "The recorded drive: NMEA 0183 (raw or gpsd .log) or GPX 1.0/1.1.")
    var log: String

    @Option(help: ArgumentHelp("The geofences: a GeoJSON FeatureCollection.", valueName: "zones.geojson"))
    var zones: String?

    @Option(help: ArgumentHelp("The GeoJSON property that names each zone (e.g. ADM0_A3, fid): properties.NAME when a feature has it, else its \"id\", else properties.id. With --config, its zones_id_property is used unless this is given.", valueName: "name"))
    var idProperty: String?

    @Option(help: ArgumentHelp("Take the zones of an agent configuration: its location requests (TOML circles and polygons) and the zones file it names.", valueName: "fencepost.toml"))
    var config: String?

    @Option(help: ArgumentHelp("Also write the track, the zones and the events as GeoJSON (for geojson.io or QGIS, over a basemap).", valueName: "file"))
    var geojson: String?

    @Flag(help: "Machine-readable output: one JSON object per line, in time order.")
    var jsonl = false

    @Flag(help: "With --jsonl: one line per fix instead of one per event.")
    var fixes = false

    @Option(help: ArgumentHelp("Also draw the track, the zones and the events as an SVG map.", valueName: "file"))
    var svg: String?

    @Option(help: "User equivalent range error in metres: the error estimate is HDOP × UERE when the source has no better one.")
    var uere = GPXReader.defaultUERE

    func validate() throws {
        if fixes && !jsonl { throw ValidationError("--fixes needs --jsonl: fixes are listed as JSON lines.") }
        if zones == nil && config == nil && !(fixes && svg == nil && geojson == nil) {
            throw ValidationError("Give the zones: --zones FILE.geojson or --config FILE.toml (a fixes dump, --fixes --jsonl, needs none).")
        }
        guard uere > 0 && uere.isFinite else { throw ValidationError("--uere must be a positive number of metres.") }
        if idProperty?.isEmpty == true { throw ValidationError("--id-property needs a property name.") }
    }

    func run() throws {
        do {
            try replay()
        } catch let failure as ReplayFailure {
            for line in failure.message.split(separator: "\n", omittingEmptySubsequences: false) {
                writeErrorLine("fencepost replay: \(line)")
            }
            throw ExitCode(failure.code)
        }
    }

    func replay() throws(ReplayFailure) {
        var definitions: [ZoneDefinition] = []
        if let zones {
            let zoneBytes = try readWholeFile(zones, what: "zones file")
            do throws(ZoneFileError) { definitions = try GeoJSONZones.parse(zoneBytes, idProperty: idProperty) } catch {
                throw ReplayFailure(65, error.lines.map { "\(zones): \($0)" }.joined(separator: "\n"))
            }
        }
        if let config { definitions += try ReplayZones.fromConfiguration(config, idProperty: idProperty) }
        let input = try ReplayInput.read(path: log, uere: uere)

        var out = BufferedWriter(fd: .standardOutput)
        let events: [ReplayEvent]
        if jsonl && fixes {
            events = []
            for fix in input.fixes {
                ReplayOutput.appendFixLine(fix, to: &out.buffer)
                try flushing(&out, full: true)
            }
        } else {
            events = try ReplayMonitor.events(zones: definitions, fixes: input.fixes)
            if jsonl {
                for e in events {
                    ReplayOutput.appendEventLine(e, to: &out.buffer)
                    try flushing(&out, full: true)
                }
            } else {
                ReplayOutput.appendReport(input: input, logPath: log, zones: definitions, events: events, to: &out.buffer)
            }
        }
        try flushing(&out, full: false)
        if svg != nil || geojson != nil {
            let drawnEvents = (jsonl && fixes) ? try ReplayMonitor.events(zones: definitions, fixes: input.fixes) : events
            if let svg {
                let text = ReplaySVG.render(fixes: input.fixes, zones: definitions, events: drawnEvents, title: log)
                try writeWholeFile(svg, Array(text.utf8), what: "SVG file")
            }
            if let geojson {
                let text = ReplayGeoJSON.render(fixes: input.fixes, zones: definitions, events: drawnEvents, title: log)
                try writeWholeFile(geojson, Array(text.utf8), what: "GeoJSON file")
            }
        }
    }

    private func flushing(_ out: inout BufferedWriter, full: Bool) throws(ReplayFailure) {
        do throws(Errno) {
            if full { try out.flushIfFull() } else { try out.flush() }
        } catch {
            throw ReplayFailure(74, "cannot write standard output: \(error)")
        }
    }
}

/// A refusal: what to say on standard error and the exit status (sysexits.h values).
struct ReplayFailure: Error {
    var code: Int32
    var message: String
    init(_ code: Int32, _ message: String) { self.code = code; self.message = message }
}

/// One event of the monitor, at the time of the fix that caused it.
struct ReplayEvent: Equatable {
    enum Kind: String { case enter, exit, dwell, unknown }
    var time: WallInstant
    var nanoseconds: Int32
    var region: String
    var kind: Kind
    /// Where the vehicle was (the fix that decided the event), nil for `unknown`.
    var coordinate: Coordinate?
}

/// Reads a recorded log (NMEA or GPX) for `replay` and `simulate`.
enum ReplayInput {
    static func read(path: String, uere: Double) throws(ReplayFailure) -> GPSLog {
        let bytes = try readWholeFile(path, what: "log")
        do throws(GPSLog.ParseError) { return try GPSLog.parse(bytes, uere: uere) } catch {
            throw ReplayFailure(65, "\(path): \(error)")
        }
    }
}
