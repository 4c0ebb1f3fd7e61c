import FencepostTestSupport
import Foundation
import Geofencing
import Position
import Testing

/// Polygon zones from real files against shapely (GEOS), the oracle of RFC 7946 semantics: an edge
/// is a straight line in longitude/latitude, holes are holes, parts count even-odd.
///
/// For each file of ``ZoneTestData`` and each seed, `Tests/Oracles/shapely_zones.py` draws points
/// near the borders (three in ten within 500 m of an edge, half 0–20 km, the rest up to 500 km away;
/// none within 1 m of an edge) and prints shapely's `contains` and the distance to the nearest edge
/// in a local plane. Each answer must agree with ours:
/// - inside: `RegionShape.isWithin(p, margin: 0)` equals shapely's `contains`. The one documented
///   difference is the antimeridian rule (an edge whose longitudes differ by more than 180° is
///   taken the short way across ±180, where shapely reads it literally): for a feature with such an
///   edge ours must equal the oracle's answers with the rings unwrapped, and the points where those
///   differ from shapely's literal ones are counted as classified under the rule.
/// - distance: `|signedDistance|` within a tolerance of the oracle's local-plane distance (see
///   ``distanceTolerance(_:latitude:)``), and its sign agrees with `isWithin`.
///
/// Skipped with a message when the files (python3 and pip write them) or python3 with shapely are
/// missing; a failure under `FENCEPOST_REQUIRE_SHARED_TESTDATA` (CI). A failure names the file and
/// the seed; rerun one seed by hand with `python3 Tests/Oracles/shapely_zones.py FILE SEED`.
@Suite(.enabled(if: ShapelyOracle.runnable || ZoneTestData.required, ShapelyOracle.skipMessage), .processes)
struct ShapelyOracleTests {
    static let seeds: [UInt64] = [1, 2, 3]

    @Test(arguments: ZoneTestData.oracleFiles, seeds)
    func agreesWithShapely(_ file: String, seed: UInt64) throws {
        try #require(ZoneTestData.available, "\(ZoneTestData.problem ?? "")")
        try #require(ShapelyOracle.available, "python3 with shapely is missing (board/install-deps installs it)")
        let result = try Self.compare(ZoneTestData.folder.appendingPathComponent(file).path, seed: seed)
        #expect(result.points >= 100, "\(file) seed \(seed): only \(result.points) points from the oracle")
        #expect(result.unexplained.isEmpty, """
            \(file) seed \(seed): \(result.unexplained.count) of \(result.points) points disagree with shapely:
            \(result.unexplained.prefix(12).joined(separator: "\n"))
            """)
    }

    /// No size limit: the whole Natural Earth 1:10m land layer (10 MultiPolygon features, 411,137
    /// vertices, rings of 81,532 and 66,483), 100 points per feature, one seed. No PyPI package
    /// ships that layer, so this runs only where `FENCEPOST_LAND_GEOJSON` names the file (GeoJSON,
    /// or gzipped with a .gz name), and is skipped otherwise, under CI too.
    @Test(.enabled(if: ZoneTestData.land != nil,
                   "needs Natural Earth 1:10m land: set FENCEPOST_LAND_GEOJSON to ne_10m_land.geojson(.gz) (not on PyPI, so skipped even under CI)"))
    func agreesWithShapelyOnNaturalEarth10mLand() throws {
        let path = try #require(ZoneTestData.land)
        try #require(FileManager.default.fileExists(atPath: path), "FENCEPOST_LAND_GEOJSON names \(path), which is missing")
        try #require(ShapelyOracle.available, "python3 with shapely is missing (board/install-deps installs it)")
        let result = try Self.compare(path, seed: 1, perFeature: 100)
        #expect(result.points >= 900, "only \(result.points) points from the oracle")
        #expect(result.unexplained.isEmpty, """
            \(path) seed 1: \(result.unexplained.count) of \(result.points) points disagree with shapely:
            \(result.unexplained.prefix(12).joined(separator: "\n"))
            """)
    }

    /// Ours against the oracle on every point it draws for `path` and `seed`: the number of points,
    /// the unexplained differences (one line each, naming file, seed, feature and point), and how
    /// many differences the antimeridian rule explains. A feature that is not built is an issue.
    static func compare(_ path: String, seed: UInt64, perFeature: Int = 200) throws -> (points: Int, unexplained: [String], antimeridian: Int) {
        let file = URL(fileURLWithPath: path).lastPathComponent
        let shapes = try ZoneTestData.shapes(path)
        let points = try ShapelyOracle.points(file: path, seed: seed, perFeature: perFeature)
        var unexplained: [String] = []
        var antimeridian = 0
        var worstDistance = (ratio: 0.0, detail: "")
        var unbuilt = Set<Int>()
        for q in points {
            let p = Coordinate(latitude: q.latitude, longitude: q.longitude)
            guard case .success(let shape)? = shapes[q.feature]?.shape else {
                unbuilt.insert(q.feature)
                continue
            }
            let inside = shape.isWithin(p, margin: 0)
            let distance = shape.signedDistance(to: p)
            let at = "\(file) seed \(seed) feature \(q.feature) (\(q.latitude), \(q.longitude))"
            // Across ±180 the documented rule decides; shapely's literal answer differs from it
            // where the long way and the short way part.
            let expectedInside = q.unwrappedInside ?? q.inside
            let expectedDistance = q.unwrappedDistance ?? q.distance
            if q.unwrappedInside != nil, q.unwrappedInside != q.inside, inside == expectedInside { antimeridian += 1 }
            if inside != expectedInside {
                unexplained.append("\(at): ours \(inside ? "inside" : "outside"), shapely \(q.inside ? "inside" : "outside")\(q.unwrappedInside.map { " (\($0 ? "inside" : "outside") with the antimeridian rule)" } ?? ""); ours \(distance) m, shapely \(expectedDistance) m from the edge")
                continue
            }
            if (distance < 0) != inside, abs(distance) > 1e-6 {
                unexplained.append("\(at): isWithin says \(inside ? "inside" : "outside") but signedDistance is \(distance) m")
            }
            let tolerance = distanceTolerance(expectedDistance, latitude: q.latitude)
            let error = abs(abs(distance) - expectedDistance)
            if error / tolerance > worstDistance.ratio {
                worstDistance = (error / tolerance, "\(at): ours \(abs(distance)) m, shapely \(expectedDistance) m (tolerance \(tolerance) m)")
            }
            if error > tolerance {
                unexplained.append("\(at): distance ours \(abs(distance)) m, shapely \(expectedDistance) m (tolerance \(tolerance) m)")
            }
        }
        for index in unbuilt.sorted() {
            if let (name, shape) = shapes[index], case .failure(let error) = shape {
                Issue.record("\(file) feature \(index) (\(name)) is not built: \(error)")
            }
        }
        print("\(file) seed \(seed): \(points.count) points, \(unexplained.count) unexplained, \(antimeridian) by the antimeridian rule; worst distance \(worstDistance.ratio) of tolerance: \(worstDistance.detail)")
        return (points.count, unexplained, antimeridian)
    }

    /// How far our distance may be from the oracle's: 5 m plus 0.5 %, plus the error of the
    /// oracle's own local plane, whose longitude scale is the point's cos(latitude): across a distance
    /// d it misjudges the scale by about d·tan|latitude|/R. Loose enough for any sound measure of the
    /// same edges (the haversine distance to the nearest point of the straight lon/lat edge stays
    /// within 7 % of it on Natural Earth's 1:50m borders), tight enough to tell great-circle edges
    /// apart (they are off by 1.5–4 times it on those borders).
    static func distanceTolerance(_ d: Double, latitude: Double) -> Double {
        let tanLatitude = min(100, abs(tan(latitude * .pi / 180)))
        return 5 + d * (0.005 + 3 * d * tanLatitude / 6_371_008.8)
    }
}

/// The documented difference: an edge whose longitudes differ by more than 180° is ours the short
/// way across ±180, shapely's the long way. Natural Earth splits its polygons at ±180, so this file
/// is written here: boxes across ±180 near the equator, at 64–68° N (Chukotka) and one 0.2° wide,
/// each ring with edges from +178…+180 to −180…−170. Every difference must be classified under the
/// rule (ours equal to the oracle's answer with the rings unwrapped), and some must occur.
@Suite(.enabled(if: ShapelyOracle.available || ZoneTestData.required, ShapelyOracle.skipMessage), .processes)
struct ShapelyAntimeridianTests {
    static let boxes = #"""
        {"type":"FeatureCollection","features":[
        {"type":"Feature","id":"fiji","properties":{},"geometry":{"type":"Polygon","coordinates":[[[178,-18],[-179,-18],[-179,-15],[178,-15],[178,-18]]]}},
        {"type":"Feature","id":"chukotka","properties":{},"geometry":{"type":"Polygon","coordinates":[[[170,64],[-170,64],[-170,68],[170,68],[170,64]]]}},
        {"type":"Feature","id":"sliver","properties":{},"geometry":{"type":"Polygon","coordinates":[[[179.9,10],[-179.9,10],[-179.9,10.2],[179.9,10.2],[179.9,10]]]}}
        ]}
        """#

    @Test(arguments: ShapelyOracleTests.seeds)
    func differencesAcrossTheAntimeridianFollowTheRule(seed: UInt64) throws {
        try #require(ShapelyOracle.available, "python3 with shapely is missing (board/install-deps installs it)")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-antimeridian-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("antimeridian_boxes.geojson").path
        try Data(Self.boxes.utf8).write(to: URL(fileURLWithPath: path))
        let result = try ShapelyOracleTests.compare(path, seed: seed)
        #expect(result.unexplained.isEmpty, """
            seed \(seed): \(result.unexplained.count) of \(result.points) points disagree with shapely:
            \(result.unexplained.prefix(12).joined(separator: "\n"))
            """)
        #expect(result.antimeridian > 0, "seed \(seed): no point was answered differently by the antimeridian rule")
    }
}

/// The generated files are what the tests take them for: South Africa one Polygon whose one hole
/// is Lesotho's ring (shapely agrees: the hole equals Lesotho, both valid, touching only), Antarctica
/// closed along the South Pole, and the QGIS-style file shaped as QGIS writes it.
@Suite(.enabled(if: ZoneTestData.available || ZoneTestData.required, ZoneTestData.skipMessage), .processes)
struct ZoneTestDataTests {
    static func collection(_ file: String) throws -> [String: Any] {
        try #require(ZoneTestData.available, "\(ZoneTestData.problem ?? "")")
        let data = try Data(contentsOf: ZoneTestData.folder.appendingPathComponent(file))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(file): not an object")
    }

    @Test func southAfricaHasLesothoAsItsHole() throws {
        let features = try ZoneTestData.features(ZoneTestData.folder.appendingPathComponent(ZoneTestData.oracleFiles[0]).path)
        try #require(features.map(\.name) == ["South Africa", "Lesotho"], "\(features.map(\.name))")
        let zaf = try #require(features[0].parts), lso = try #require(features[1].parts)
        #expect(zaf.count == 1 && zaf[0].count == 2, "South Africa: \(zaf.count) parts, \(zaf.first?.count ?? 0) rings")
        #expect(lso.count == 1 && lso[0].count == 1)
        let key = { (c: Coordinate) in "\(c.latitude),\(c.longitude)" }
        #expect(Set(zaf[0][1].map(key)) == Set(lso[0][0].map(key)), "South Africa's hole is not Lesotho's ring")
        let shape = RegionShape.polygon(try PolygonRegion(parts: zaf))
        #expect(!shape.isWithin(Coordinate(latitude: -29.5, longitude: 28.2), margin: 0), "Maseru–Thaba-Tseka is in South Africa")
        #expect(shape.isWithin(Coordinate(latitude: -29.2, longitude: 26.2), margin: 0), "Bloemfontein is not in South Africa")
    }

    @Test func antarcticaIsClosedAlongTheSouthPole() throws {
        let features = try ZoneTestData.features(ZoneTestData.folder.appendingPathComponent(ZoneTestData.oracleFiles[2]).path)
        let antarctica = try #require(features.first { $0.name == "Antarctica" }?.parts)
        let pole = antarctica.flatMap { $0 }.flatMap { $0 }.filter { $0.latitude == -90 }
        #expect(pole.count == 2 && pole.contains { $0.longitude == 180 } && pole.contains { $0.longitude < -179.999 }, "\(pole)")
    }

    @Test func qgisExportIsShapedAsQGISWritesIt() throws {
        let collection = try Self.collection(ZoneTestData.oracleFiles[3])
        #expect(collection["name"] as? String == "countries")
        let crs = (collection["crs"] as? [String: Any])?["properties"] as? [String: Any]
        #expect(crs?["name"] as? String == "urn:ogc:def:crs:OGC:1.3:CRS84")
        let features = try #require(collection["features"] as? [[String: Any]])
        #expect(features.count == 5)
        for (index, feature) in features.enumerated() {
            #expect(feature["id"] == nil, "feature \(index) has an id")
            #expect((feature["properties"] as? [String: Any])?["fid"] as? Int == index + 1)
            #expect((feature["geometry"] as? [String: Any])?["type"] as? String == "MultiPolygon")
        }
    }
}

/// The zone files: Natural Earth 1:110m countries from PyPI's geopandas 0.14.4 wheel, written by
/// `Tests/Oracles/make_zone_testdata.py` (see `Tests/Oracles/README.md`) into the folder
/// `FENCEPOST_ZONE_TESTDATA` names, else `.build/testdata/zones` in the repository. The first use
/// runs the script (it does nothing when the files are there); without python3, pip or the network
/// the files are missing and ``problem`` says why.
enum ZoneTestData {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let folder: URL = {
        if let named = ProcessInfo.processInfo.environment["FENCEPOST_ZONE_TESTDATA"], !named.isEmpty {
            return URL(fileURLWithPath: named).standardizedFileURL
        }
        return repository.appendingPathComponent(".build/testdata/zones")
    }()

    static let script = repository.appendingPathComponent("Tests/Oracles/make_zone_testdata.py").path

    /// Every polygon file the oracle checks.
    static let oracleFiles = [
        "ne_110m_south_africa_lesotho.geojson",     // a Polygon with a hole (Lesotho), and Lesotho
        "ne_110m_multipolygon_countries.geojson",   // MultiPolygons: islands, an exclave, Fiji across ±180
        "ne_110m_continent_sized.geojson",          // Russia (split at ±180), Canada, Antarctica (the pole)
        "qgis_export_countries.geojson",            // no `id`, `fid`, `crs`, MultiPolygon of one part
    ]

    /// Why the files are not there (the script's exit status and stderr), or nil when they are.
    static let problem: String? = {
        let result: Binaries.Output
        do {
            result = try ShapelyOracle.run([script, folder.path])
        } catch {
            return "could not run python3 \(script): \(error)"
        }
        let missing = oracleFiles.filter { !FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path) }
        if missing.isEmpty { return nil }
        return "\(missing.joined(separator: ", ")) missing in \(folder.path): python3 \(script) exited \(result.status): \(result.stderr)"
    }()

    static var available: Bool { problem == nil }

    static var skipMessage: Comment {
        "needs the zone files in \(folder.path), written by python3 and pip from PyPI (\(problem ?? "")) (set FENCEPOST_REQUIRE_SHARED_TESTDATA to make this a failure)"
    }

    static var required: Bool { TestInputs.required }

    /// Natural Earth 1:10m land (`ne_10m_land`, plain GeoJSON or .gz), which no PyPI package
    /// ships: only where `FENCEPOST_LAND_GEOJSON` names it.
    static var land: String? {
        guard let path = ProcessInfo.processInfo.environment["FENCEPOST_LAND_GEOJSON"], !path.isEmpty else { return nil }
        return path
    }

    /// How far past ±180° / ±90° a position is taken as float noise and clamped, degrees: the
    /// GeoJSON reader's rule, applied here because `PolygonRegion` itself refuses anything past
    /// ±180 and Natural Earth writes such noise (longitude 180 + 5.7e-14 three times in 1:110m
    /// Russia, 180 + 1.4e-13 in five features of 1:10m land). shapely gets the file as it is; the
    /// difference is 1e-13° (10 nm). Anything further is left for `PolygonRegion` to refuse.
    static let clampTolerance = 1e-9

    /// Each feature's geometry as parts of rings, read with Foundation (not the product's reader:
    /// this checks the geometry alone). Altitudes are dropped; positions within ``clampTolerance``
    /// past ±180/±90 are clamped. A `.gz` file is read through gzip.
    static func features(_ path: String) throws -> [(name: String, parts: [[[Coordinate]]]?)] {
        let data = path.hasSuffix(".gz") ? try gunzip(path) : try Data(contentsOf: URL(fileURLWithPath: path))
        let collection = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(path): not an object")
        let features = try #require(collection["features"] as? [[String: Any]], "\(path): no features")
        return try features.enumerated().map { index, feature in
            let properties = feature["properties"] as? [String: Any] ?? [:]
            let name = (properties["name"] ?? properties["NAME"] ?? properties["featurecla"]).map { "\($0)" } ?? "?"
            guard let geometry = feature["geometry"] as? [String: Any], let type = geometry["type"] as? String,
                  type == "Polygon" || type == "MultiPolygon" else { return (name, nil) }
            let coordinates = try #require(geometry["coordinates"] as? [Any], "\(path) feature \(index): no coordinates")
            let polygons = type == "Polygon" ? [coordinates] : coordinates
            return (name, try polygons.map { polygon in
                try #require(polygon as? [[[Double]]], "\(path) feature \(index): bad coordinates").map { ring in
                    ring.map { Coordinate(latitude: clamp($0[1], 90), longitude: clamp($0[0], 180)) }
                }
            })
        }
    }

    static func clamp(_ value: Double, _ limit: Double) -> Double {
        abs(value) > limit && abs(value) <= limit + clampTolerance ? (value < 0 ? -limit : limit) : value
    }

    static func gunzip(_ path: String) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-dc", path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "gzip -dc \(path) exited \(process.terminationStatus)")
        return data
    }

    /// Each polygon feature's name (its `name`, `NAME` or `featurecla`) and shape, or
    /// why the shape could not be built.
    static func shapes(_ path: String) throws -> [Int: (name: String, shape: Result<RegionShape, RegionError>)] {
        var shapes: [Int: (name: String, shape: Result<RegionShape, RegionError>)] = [:]
        for (index, feature) in try features(path).enumerated() {
            guard let parts = feature.parts else { continue }
            do throws(RegionError) {
                shapes[index] = (feature.name, .success(.polygon(try PolygonRegion(parts: parts))))
            } catch {
                shapes[index] = (feature.name, .failure(error))
            }
        }
        return shapes
    }
}

/// `Tests/Oracles/shapely_zones.py` run by python3 as a child process.
enum ShapelyOracle {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Oracles/shapely_zones.py").path

    struct Point {
        var feature: Int
        var latitude: Double
        var longitude: Double
        var inside: Bool
        var distance: Double
        /// The answers with edges across ±180 taken the short way, for a feature that has such an
        /// edge (the documented rule); nil otherwise.
        var unwrappedInside: Bool?
        var unwrappedDistance: Double?
    }

    /// Whether `python3 -c "import shapely"` succeeds.
    static let available: Bool = {
        guard let run = try? run(["-c", "import shapely"]) else { return false }
        return run.status == 0
    }()

    static var runnable: Bool { available && ZoneTestData.available }

    static var skipMessage: Comment {
        "needs python3 with shapely (board/install-deps) and the zone files in \(ZoneTestData.folder.path)\(ZoneTestData.problem.map { " (\($0))" } ?? "") (set FENCEPOST_REQUIRE_SHARED_TESTDATA to make this a failure)"
    }

    static func points(file: String, seed: UInt64, perFeature: Int = 200) throws -> [Point] {
        let result = try run([script, file, String(seed), String(perFeature)])
        try #require(result.status == 0, "shapely_zones.py \(file) \(seed) exited \(result.status): \(result.stderr)")
        return try result.stdout.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return Point(feature: try #require(object["feature"] as? Int),
                         latitude: try #require(object["lat"] as? Double),
                         longitude: try #require(object["lon"] as? Double),
                         inside: try #require(object["inside"] as? Bool),
                         distance: try #require(object["distance"] as? Double),
                         unwrappedInside: object["unwrapped_inside"] as? Bool,
                         unwrappedDistance: object["unwrapped_distance"] as? Double)
        }
    }

    /// Runs python3 (found on PATH) with `arguments`, to its end.
    static func run(_ arguments: [String]) throws -> Binaries.Output {
        try Binaries.run(["python3"] + arguments, environment: [:], executable: URL(fileURLWithPath: "/usr/bin/env"))
    }
}
