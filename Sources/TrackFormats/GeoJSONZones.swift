// Zones from a GeoJSON FeatureCollection (RFC 7946) → `ZoneDefinition`, a neutral description
// that does not depend on the geofencing engine's types. The user's reference is docs/zones.md.
//
//   { "type": "FeatureCollection", "features": [
//       { "type": "Feature", "id": "depot",
//         "geometry": { "type": "Point", "coordinates": [6.7735, 51.2277] },
//         "properties": { "radius": 150, "dwell": 60 } },
//       { "type": "Feature",
//         "geometry": { "type": "Polygon", "coordinates": [[[6.77,51.22],[6.78,51.22],[6.78,51.23],[6.77,51.22]]] },
//         "properties": { "id": "yard", "notifyOnExit": false, "cooldown": 300 } } ] }
//
// Geometry → shape:
//   Point + properties.radius   a circle (radius in metres, > 0); a Point without one is refused
//   Polygon                     one part: its outer ring and its holes
//   MultiPolygon                one zone of several parts, each with its holes
//   GeometryCollection          one zone of the parts of its members when every member is a
//                               Polygon or MultiPolygon; any other member is refused by its type
//   LineString, MultiLineString, MultiPoint and anything else: refused, naming the type (a zone
//   that silently does nothing is worse than a refusal).
// - Positions are [longitude, latitude] (GeoJSON order); an altitude is allowed and ignored. A
//   value up to `clampTolerance` past ±180/±90 (float noise such as 180.00000000000017) is
//   clamped; anything further is refused.
// - A ring's closing position may be given (as GeoJSON requires) or left out; each ring needs at
//   least 3 distinct vertices. Orientation is not used (the inside is decided by the even-odd rule).
// - id: properties[idProperty] when the caller names one and the feature has it; else the
//   feature's `id`; else `properties.id` (each a non-empty string or an integer). One is required.
// - Optional properties: `notifyOnEntry`, `notifyOnExit` (booleans, default true), `dwell` and
//   `cooldown` (seconds, ≥ 0), `report` (boolean, default false: its entries and exits are also
//   sent to the fleet as transition events). Other properties (name, colour, …) are ignored.
// - The same id again replaces the earlier zone (as registering a region with the same identifier
//   does on iOS); the zone keeps the later definition and the later position in the list.
// - A top-level `crs` (GeoJSON 2008) must name longitude/latitude on WGS 84 (CRS84 or
//   EPSG:4326); a projected system is refused by name rather than read as degrees.
// - Every bad feature is reported (the first `ZoneFileError.reportLimit`, then a count), each
//   with its index, id and reason; a syntax error or a bad top level ends the reading.
// - A UTF-8 byte-order mark at the start is skipped.
import CivilTime
import FencepostJSON
import Position

/// A zone as read from a file, before any engine sees it.
public struct ZoneDefinition: Hashable, Sendable {
    public enum Shape: Hashable, Sendable {
        /// Centre and radius in metres.
        case circle(center: Coordinate, radius: Double)
        /// Parts, each its rings (the outer ring first, then its holes), each ring its vertices
        /// without the closing vertex (the last vertex differs from the first).
        case polygon([[[Coordinate]]])
    }

    public var id: String
    public var shape: Shape
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool
    /// Seconds inside before a dwell event; nil for no dwell events.
    public var dwell: Double?
    /// Seconds after a notification during which the zone stays quiet; nil for none.
    public var cooldown: Double?
    /// Whether its entries and exits are reported beyond the board (the fleet's transitions).
    public var report: Bool

    public init(
        id: String, shape: Shape, notifyOnEntry: Bool = true, notifyOnExit: Bool = true,
        dwell: Double? = nil, cooldown: Double? = nil, report: Bool = false
    ) {
        self.id = id; self.shape = shape; self.notifyOnEntry = notifyOnEntry; self.notifyOnExit = notifyOnExit
        self.dwell = dwell; self.cooldown = cooldown; self.report = report
    }
}

/// One thing wrong in a zones file, and where.
public struct ZoneFileProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// Index of the feature in `features` (from 0), nil for a problem with the whole file.
    public var featureIndex: Int?
    /// The feature's id when it has one.
    public var featureID: String?
    /// Line and column of a JSON syntax error.
    public var line: Int?
    public var column: Int?
    public var message: String

    public init(featureIndex: Int? = nil, featureID: String? = nil, line: Int? = nil, column: Int? = nil, message: String) {
        self.featureIndex = featureIndex; self.featureID = featureID
        self.line = line; self.column = column; self.message = message
    }

    /// `feature 3 ("depot"): a Point needs properties.radius in metres`
    public var description: String {
        var prefix = ""
        if let l = line, let c = column { prefix = "line \(l), column \(c): " }
        if let k = featureIndex {
            prefix += "feature \(k)"
            if let id = featureID { prefix += " (\(JSONValue.string(id).serialized()))" }
            prefix += ": "
        }
        return prefix + message
    }
}

/// Why a zones file was refused: every problem found (the first ``reportLimit`` kept), so that a
/// user fixes a file in one run, not one feature per run.
public struct ZoneFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Problems kept with their messages; the rest are counted.
    public static let reportLimit = 20

    /// The first ``reportLimit`` problems, in file order.
    public private(set) var problems: [ZoneFileProblem] = []
    /// All problems found, kept or not.
    public private(set) var count = 0

    /// No problem yet (an accumulator).
    public init() {}

    public init(_ problem: ZoneFileProblem) { append(problem) }

    /// One problem.
    public init(featureIndex: Int? = nil, featureID: String? = nil, line: Int? = nil, column: Int? = nil, message: String) {
        self.init(ZoneFileProblem(featureIndex: featureIndex, featureID: featureID, line: line, column: column, message: message))
    }

    public var isEmpty: Bool { count == 0 }

    public mutating func append(_ problem: ZoneFileProblem) {
        count += 1
        if problems.count < Self.reportLimit { problems.append(problem) }
    }

    /// One line per kept problem, then `and N more bad features` when some were not kept.
    public var lines: [String] {
        var out = problems.map { $0.description }
        if count > problems.count { out.append("and \(count - problems.count) more bad features (\(count) in all)") }
        return out
    }

    /// The lines, one per line.
    public var description: String { lines.joined(separator: "\n") }
}

/// Reads zones from GeoJSON. See the file comment for the format.
public enum GeoJSONZones {
    /// How far past ±180° / ±90° a coordinate is taken as float noise and clamped, degrees.
    public static let clampTolerance = 1e-9

    /// Parses a FeatureCollection.
    ///
    /// - Parameter idProperty: the property that names a zone (e.g. "ADM0_A3"); see the file comment.
    /// - Throws: `ZoneFileError` with every bad feature (index, id, reason), or the line and
    ///   column of a JSON syntax error, or what is wrong with the top level.
    /// - Complexity: O(n) in the size of the file (duplicate ids: expected O(1) each).
    public static func parse(_ bytes: [UInt8], idProperty: String? = nil) throws(ZoneFileError) -> [ZoneDefinition] {
        let skip = byteOrderMarkLength(bytes)
        let root: JSONValue
        do {
            root = try bytes.withUnsafeBufferPointer { b throws(JSONError) in
                try JSONValue.parse(UnsafeBufferPointer(rebasing: b[skip...]))
            }
        } catch {
            let (l, c) = lineColumn(bytes, skip + error.offset)
            throw ZoneFileError(line: l, column: c, message: "not JSON: \(error.message)")
        }
        guard root["type"]?.string == "FeatureCollection" else {
            let found = root["type"].map { $0.string.map { "\"\($0)\"" } ?? $0.kindDescription } ?? "none"
            throw ZoneFileError(message: "expected a GeoJSON FeatureCollection (\"type\": \"FeatureCollection\"), found type \(found)")
        }
        if let crs = root["crs"] {
            do { try checkCRS(crs) } catch { throw ZoneFileError(error) }
        }
        guard let features = root["features"]?.array else {
            throw ZoneFileError(message: "\"features\" must be an array of Feature objects")
        }
        // A replaced zone leaves a hole that is dropped at the end: one pass, whatever the number
        // of repeated ids (removing it at once would shift every later zone: O(n²)).
        var slots: [ZoneDefinition?] = []
        slots.reserveCapacity(features.count)
        var position: [String: Int] = [:]
        var replaced = 0
        var problems = ZoneFileError()
        for (k, feature) in features.enumerated() {
            let zone: ZoneDefinition
            do { zone = try parseFeature(feature, index: k, idProperty: idProperty) } catch {
                problems.append(error)
                continue
            }
            if let earlier = position[zone.id] {
                slots[earlier] = nil
                replaced += 1
            }
            position[zone.id] = slots.count
            slots.append(zone)
        }
        guard problems.isEmpty else { throw problems }
        var zones: [ZoneDefinition] = []
        zones.reserveCapacity(slots.count - replaced)
        for case let zone? in slots { zones.append(zone) }
        return zones
    }

    /// 3 when `bytes` start with a UTF-8 byte-order mark (EF BB BF, as Windows editors write), else 0.
    static func byteOrderMarkLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
    }

    static func byteOrderMarkLength(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { byteOrderMarkLength($0) }
    }

    /// The `crs` names longitude/latitude on WGS 84, or is null (RFC 7946 has no `crs`; GeoJSON
    /// 2008 files and some exporters still write it).
    static func checkCRS(_ crs: JSONValue) throws(ZoneFileProblem) {
        if crs.isNull { return }
        // {"type":"name","properties":{"name":"urn:ogc:def:crs:OGC:1.3:CRS84"}}, or the older
        // {"type":"EPSG","properties":{"code":25832}}.
        var name = crs["type"]?.string == "name" ? crs["properties"]?["name"]?.string : nil
        if crs["type"]?.string == "EPSG", let code = crs["properties"]?["code"]?.int64 { name = "EPSG:\(code)" }
        guard let name else {
            throw ZoneFileProblem(message: "crs \(crs.serialized()) is not understood: zones are longitude/latitude on WGS 84 (leave out crs, or name urn:ogc:def:crs:OGC:1.3:CRS84)")
        }
        let accepted = ["urn:ogc:def:crs:OGC:1.3:CRS84", "urn:ogc:def:crs:OGC::CRS84", "urn:ogc:def:crs:OGC:2:CRS84",
                        "urn:ogc:def:crs:EPSG::4326", "urn:ogc:def:crs:EPSG:6.6:4326", "EPSG:4326", "CRS84", "OGC:CRS84",
                        "http://www.opengis.net/def/crs/OGC/1.3/CRS84", "http://www.opengis.net/def/crs/EPSG/0/4326"]
        guard accepted.contains(name) else {
            throw ZoneFileProblem(message: "crs \"\(name)\" is not longitude/latitude on WGS 84: reproject the file to EPSG:4326 (e.g. ogr2ogr -t_srs EPSG:4326 out.geojson in.geojson)")
        }
    }

    /// One feature as a zone.
    /// - Throws: what is wrong with it, naming the key (`geometry.coordinates[0][2]`, `properties.dwell`).
    static func parseFeature(_ feature: JSONValue, index k: Int, idProperty: String? = nil) throws(ZoneFileProblem) -> ZoneDefinition {
        func fail(_ id: String?, _ message: String) -> ZoneFileProblem {
            ZoneFileProblem(featureIndex: k, featureID: id, message: message)
        }
        guard feature.object != nil else { throw fail(nil, "expected a Feature object, found \(feature.kindDescription)") }
        let properties = feature["properties"]
        if let p = properties, !p.isNull, p.object == nil {
            throw fail(nil, "properties must be an object, found \(p.kindDescription)")
        }
        // The id first, so that every later message can name it.
        var candidates: [(JSONValue?, String)] = []
        if let idProperty { candidates.append((properties?[idProperty], "properties.\(idProperty)")) }
        candidates.append((feature["id"], "id"))
        candidates.append((properties?["id"], "properties.id"))
        var id: String? = nil
        for (value, key) in candidates {
            guard let value, !value.isNull, id == nil else { continue }
            if let s = value.string, !s.isEmpty { id = s }
            else if let i = value.int64 { id = String(i) }
            else { throw fail(nil, "\(key) must be a non-empty string or an integer, found \(value.kindDescription)") }
        }
        guard feature["type"]?.string == "Feature" else {
            throw fail(id, "\"type\" must be \"Feature\"")
        }
        guard let id else {
            let named = idProperty.map { "properties.\($0), " } ?? ""
            throw fail(nil, "a zone needs an id: \(named)the feature's \"id\" or properties.id")
        }
        guard let geometry = feature["geometry"], geometry.object != nil else {
            throw fail(id, "geometry must be a Point, Polygon or MultiPolygon object")
        }
        guard let type = geometry["type"]?.string else { throw fail(id, "geometry.type is missing") }

        func position(_ v: JSONValue, _ key: String) throws(ZoneFileProblem) -> Coordinate {
            guard let a = v.array, a.count >= 2, let lon = a[0].double, let lat = a[1].double else {
                throw fail(id, "\(key) must be a position [longitude, latitude]")
            }
            guard abs(lat) <= 90 + clampTolerance else {
                throw fail(id, "\(key): latitude \(lat) is outside -90...90 (positions are [longitude, latitude])")
            }
            guard abs(lon) <= 180 + clampTolerance else { throw fail(id, "\(key): longitude \(lon) is outside -180...180") }
            return Coordinate(latitude: min(90, max(-90, lat)), longitude: min(180, max(-180, lon)))
        }
        /// A ring without its closing vertex.
        func ring(_ v: JSONValue, _ key: String) throws(ZoneFileProblem) -> [Coordinate] {
            guard let positions = v.array else { throw fail(id, "\(key) must be a ring: an array of positions") }
            var vertices: [Coordinate] = []
            vertices.reserveCapacity(positions.count)
            for (j, p) in positions.enumerated() { vertices.append(try position(p, "\(key)[\(j)]")) }
            if vertices.count > 1 && vertices.first == vertices.last { vertices.removeLast() }
            // At least 3 distinct vertices: one pass in constant memory, stopping at the third (a
            // border of a million vertices must not need a million-entry set in the
            // memory-bounded build).
            var distinct: [Coordinate] = []
            for v in vertices where !distinct.contains(v) {
                distinct.append(v)
                if distinct.count == 3 { break }
            }
            guard distinct.count >= 3 else {
                throw fail(id, "\(key): a ring needs at least 3 distinct vertices, found \(distinct.count)")
            }
            return vertices
        }
        /// A Polygon's coordinates: its outer ring and holes.
        func polygon(_ v: JSONValue, _ key: String) throws(ZoneFileProblem) -> [[Coordinate]] {
            guard let rings = v.array, !rings.isEmpty else {
                throw fail(id, "\(key) of a Polygon must be a non-empty array of rings (arrays of positions)")
            }
            var out: [[Coordinate]] = []
            out.reserveCapacity(rings.count)
            for (r, rv) in rings.enumerated() { out.append(try ring(rv, "\(key)[\(r)]")) }
            return out
        }
        /// A MultiPolygon's coordinates: its parts.
        func multiPolygon(_ v: JSONValue, _ key: String) throws(ZoneFileProblem) -> [[[Coordinate]]] {
            guard let polygons = v.array, !polygons.isEmpty else {
                throw fail(id, "\(key) of a MultiPolygon must be a non-empty array of polygons (arrays of rings)")
            }
            var out: [[[Coordinate]]] = []
            out.reserveCapacity(polygons.count)
            for (p, pv) in polygons.enumerated() { out.append(try polygon(pv, "\(key)[\(p)]")) }
            return out
        }
        func coordinates(_ g: JSONValue, _ key: String) throws(ZoneFileProblem) -> JSONValue {
            guard let c = g["coordinates"], !c.isNull else { throw fail(id, "\(key).coordinates is missing") }
            return c
        }
        let notAZone = "is not a zone: use a Point with properties.radius, a Polygon or a MultiPolygon"

        let shape: ZoneDefinition.Shape
        switch type {
        case "Point":
            let center = try position(try coordinates(geometry, "geometry"), "geometry.coordinates")
            guard let r = properties?["radius"], !r.isNull else {
                throw fail(id, "a Point needs properties.radius in metres")
            }
            guard let radius = r.double, radius > 0, radius.isFinite else {
                throw fail(id, "properties.radius must be a positive number of metres, found \(r.serialized())")
            }
            do { _ = try InputRanges.radius(radius, "properties.radius", maximum: .infinity) } catch { throw fail(id, error.description) }
            shape = .circle(center: center, radius: radius)
        case "Polygon":
            shape = .polygon([try polygon(try coordinates(geometry, "geometry"), "geometry.coordinates")])
        case "MultiPolygon":
            shape = .polygon(try multiPolygon(try coordinates(geometry, "geometry"), "geometry.coordinates"))
        case "GeometryCollection":
            guard let members = geometry["geometries"]?.array, !members.isEmpty else {
                throw fail(id, "geometry.geometries of a GeometryCollection must be a non-empty array of geometries")
            }
            var parts: [[[Coordinate]]] = []
            for (m, member) in members.enumerated() {
                let key = "geometry.geometries[\(m)]"
                let memberType = member["type"]?.string
                switch memberType {
                case "Polygon"?: parts.append(try polygon(try coordinates(member, key), key + ".coordinates"))
                case "MultiPolygon"?: parts += try multiPolygon(try coordinates(member, key), key + ".coordinates")
                default:
                    let named = memberType.map { "\"\($0)\"" } ?? "without a type"
                    throw fail(id, "\(key) is a \(named): a GeometryCollection is a zone only when every member is a Polygon or MultiPolygon")
                }
            }
            shape = .polygon(parts)
        default:
            throw fail(id, "geometry.type \"\(type)\" \(notAZone)")
        }

        func flag(_ key: String, default absent: Bool = true) throws(ZoneFileProblem) -> Bool {
            guard let v = properties?[key], !v.isNull else { return absent }
            guard let b = v.bool else { throw fail(id, "properties.\(key) must be true or false, found \(v.serialized())") }
            return b
        }
        func seconds(_ key: String) throws(ZoneFileProblem) -> Double? {
            guard let v = properties?[key], !v.isNull else { return nil }
            guard let d = v.double, d >= 0 else {
                throw fail(id, "properties.\(key) must be a number of seconds ≥ 0, found \(v.serialized())")
            }
            do { return try InputRanges.duration(d, "properties.\(key)") } catch { throw fail(id, error.description) }
        }
        return ZoneDefinition(
            id: id, shape: shape, notifyOnEntry: try flag("notifyOnEntry"), notifyOnExit: try flag("notifyOnExit"),
            dwell: try seconds("dwell"), cooldown: try seconds("cooldown"), report: try flag("report", default: false))
    }

    /// Line and column (1-based, columns in bytes) of a byte offset; a byte-order mark takes no column.
    static func lineColumn(_ bytes: [UInt8], _ offset: Int) -> (Int, Int) {
        var line = 1, lineStart = byteOrderMarkLength(bytes)
        for i in 0..<min(offset, bytes.count) where bytes[i] == 0x0A {
            line += 1
            lineStart = i + 1
        }
        return (line, offset - lineStart + 1)
    }
}
