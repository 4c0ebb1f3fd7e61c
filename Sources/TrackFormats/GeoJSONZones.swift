// Zones from a GeoJSON FeatureCollection (RFC 7946) → `ZoneDefinition`, a neutral description
// that does not depend on the geofencing engine's types.
//
//   { "type": "FeatureCollection", "features": [
//       { "type": "Feature", "id": "depot",
//         "geometry": { "type": "Point", "coordinates": [6.7735, 51.2277] },
//         "properties": { "radius": 150, "dwell": 60 } },
//       { "type": "Feature",
//         "geometry": { "type": "Polygon", "coordinates": [[[6.77,51.22],[6.78,51.22],[6.78,51.23],[6.77,51.22]]] },
//         "properties": { "id": "yard", "notifyOnExit": false, "cooldown": 300 } } ] }
//
// - A Point with `properties.radius` (metres, > 0) is a circle; a Point without one is an error.
// - A Polygon is its first (outer) ring; holes (further rings) are ignored. The closing position
//   may be given (as GeoJSON requires) or left out; at least 3 distinct vertices are needed.
// - Positions are [longitude, latitude] (GeoJSON order), an altitude is allowed and ignored.
// - id: the feature's `id` (string or integer), else `properties.id`; one of them is required.
// - Optional properties: `notifyOnEntry`, `notifyOnExit` (booleans, default true), `dwell` and
//   `cooldown` (seconds, ≥ 0). Other properties (name, colour, …) are ignored.
// - The same id again replaces the earlier zone (as registering a region with the same identifier
//   does on iOS); the zone keeps the later definition and the later position in the list.
// - Other geometry types (LineString, MultiPolygon, …) are errors: a zone that silently does
//   nothing is worse than a refusal.
import CivilTime
import FencepostJSON
import Position

/// A zone as read from a file, before any engine sees it.
public struct ZoneDefinition: Hashable, Sendable {
    public enum Shape: Hashable, Sendable {
        /// Centre and radius in metres.
        case circle(center: Coordinate, radius: Double)
        /// Vertices of the outer ring, not closed (the last vertex differs from the first).
        case polygon([Coordinate])
    }

    public var id: String
    public var shape: Shape
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool
    /// Seconds inside before a dwell event; nil for no dwell events.
    public var dwell: Double?
    /// Seconds after a notification during which the zone stays quiet; nil for none.
    public var cooldown: Double?

    public init(
        id: String, shape: Shape, notifyOnEntry: Bool = true, notifyOnExit: Bool = true,
        dwell: Double? = nil, cooldown: Double? = nil
    ) {
        self.id = id; self.shape = shape; self.notifyOnEntry = notifyOnEntry; self.notifyOnExit = notifyOnExit
        self.dwell = dwell; self.cooldown = cooldown
    }
}

/// Why a zones file was refused, and where.
public struct ZoneFileError: Error, Hashable, Sendable, CustomStringConvertible {
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

/// Reads zones from GeoJSON. See the file comment for the format.
public enum GeoJSONZones {
    /// Parses a FeatureCollection.
    ///
    /// - Throws: `ZoneFileError` naming the feature (index and id) and the key at fault, or the
    ///   line and column of a JSON syntax error.
    /// - Complexity: O(n) in the size of the file (duplicate ids: expected O(1) each).
    public static func parse(_ bytes: [UInt8]) throws(ZoneFileError) -> [ZoneDefinition] {
        let root: JSONValue
        do {
            root = try JSONValue.parse(bytes)
        } catch {
            let (l, c) = lineColumn(bytes, error.offset)
            throw ZoneFileError(line: l, column: c, message: "not JSON: \(error.message)")
        }
        guard root["type"]?.string == "FeatureCollection" else {
            let found = root["type"].map { $0.string.map { "\"\($0)\"" } ?? $0.kindDescription } ?? "none"
            throw ZoneFileError(message: "expected a GeoJSON FeatureCollection (\"type\": \"FeatureCollection\"), found type \(found)")
        }
        guard let features = root["features"]?.array else {
            throw ZoneFileError(message: "\"features\" must be an array of Feature objects")
        }
        // A replaced zone leaves a hole that is dropped at the end: one pass, whatever the number
        // of repeated ids (removing it at once shifted every later zone: O(n²), 47 s for 50k
        // features with 25k ids, on SIGHUP inside the agent's loop).
        var slots: [ZoneDefinition?] = []
        slots.reserveCapacity(features.count)
        var position: [String: Int] = [:]
        var replaced = 0
        for (k, feature) in features.enumerated() {
            let zone = try parseFeature(feature, index: k)
            if let earlier = position[zone.id] {
                slots[earlier] = nil
                replaced += 1
            }
            position[zone.id] = slots.count
            slots.append(zone)
        }
        var zones: [ZoneDefinition] = []
        zones.reserveCapacity(slots.count - replaced)
        for case let zone? in slots { zones.append(zone) }
        return zones
    }

    static func parseFeature(_ feature: JSONValue, index k: Int) throws(ZoneFileError) -> ZoneDefinition {
        func fail(_ id: String?, _ message: String) -> ZoneFileError {
            ZoneFileError(featureIndex: k, featureID: id, message: message)
        }
        guard feature.object != nil else { throw fail(nil, "expected a Feature object, found \(feature.kindDescription)") }
        let properties = feature["properties"]
        if let p = properties, !p.isNull, p.object == nil {
            throw fail(nil, "properties must be an object, found \(p.kindDescription)")
        }
        // The id first, so that every later message can name it.
        var id: String? = nil
        for (value, key) in [(feature["id"], "id"), (properties?["id"], "properties.id")] {
            guard let value, !value.isNull, id == nil else { continue }
            if let s = value.string, !s.isEmpty { id = s }
            else if let i = value.int64 { id = String(i) }
            else { throw fail(nil, "\(key) must be a non-empty string or an integer, found \(value.kindDescription)") }
        }
        guard feature["type"]?.string == "Feature" else {
            throw fail(id, "\"type\" must be \"Feature\"")
        }
        guard let id else { throw fail(nil, "a zone needs an id: the feature's \"id\" or properties.id") }
        guard let geometry = feature["geometry"], geometry.object != nil else {
            throw fail(id, "geometry must be a Point or Polygon object")
        }
        guard let type = geometry["type"]?.string else { throw fail(id, "geometry.type is missing") }
        guard let coordinates = geometry["coordinates"] else { throw fail(id, "geometry.coordinates is missing") }

        func position(_ v: JSONValue, _ key: String) throws(ZoneFileError) -> Coordinate {
            guard let a = v.array, a.count >= 2, let lon = a[0].double, let lat = a[1].double else {
                throw fail(id, "\(key) must be a position [longitude, latitude]")
            }
            guard abs(lat) <= 90 else { throw fail(id, "\(key): latitude \(lat) is outside -90...90 (positions are [longitude, latitude])") }
            guard abs(lon) <= 180 else { throw fail(id, "\(key): longitude \(lon) is outside -180...180") }
            return Coordinate(latitude: lat, longitude: lon)
        }

        let shape: ZoneDefinition.Shape
        switch type {
        case "Point":
            let center = try position(coordinates, "geometry.coordinates")
            guard let r = properties?["radius"], !r.isNull else {
                throw fail(id, "a Point needs properties.radius in metres")
            }
            guard let radius = r.double, radius > 0, radius.isFinite else {
                throw fail(id, "properties.radius must be a positive number of metres, found \(r.serialized())")
            }
            do { _ = try InputRanges.radius(radius, "properties.radius", maximum: .infinity) } catch { throw fail(id, error.description) }
            shape = .circle(center: center, radius: radius)
        case "Polygon":
            guard let rings = coordinates.array, let ring = rings.first?.array else {
                throw fail(id, "geometry.coordinates of a Polygon must be an array of rings (arrays of positions)")
            }
            var vertices: [Coordinate] = []
            for (j, p) in ring.enumerated() {
                vertices.append(try position(p, "geometry.coordinates[0][\(j)]"))
            }
            if vertices.count > 1 && vertices.first == vertices.last { vertices.removeLast() }
            guard Set(vertices).count >= 3 else {
                throw fail(id, "a Polygon needs at least 3 distinct vertices in its first ring, found \(Set(vertices).count)")
            }
            shape = .polygon(vertices)
        default:
            throw fail(id, "geometry.type \"\(type)\" is not a zone: use a Point with properties.radius, or a Polygon")
        }

        func flag(_ key: String) throws(ZoneFileError) -> Bool {
            guard let v = properties?[key], !v.isNull else { return true }
            guard let b = v.bool else { throw fail(id, "properties.\(key) must be true or false, found \(v.serialized())") }
            return b
        }
        func seconds(_ key: String) throws(ZoneFileError) -> Double? {
            guard let v = properties?[key], !v.isNull else { return nil }
            guard let d = v.double, d >= 0 else {
                throw fail(id, "properties.\(key) must be a number of seconds ≥ 0, found \(v.serialized())")
            }
            do { return try InputRanges.duration(d, "properties.\(key)") } catch { throw fail(id, error.description) }
        }
        return ZoneDefinition(
            id: id, shape: shape, notifyOnEntry: try flag("notifyOnEntry"), notifyOnExit: try flag("notifyOnExit"),
            dwell: try seconds("dwell"), cooldown: try seconds("cooldown"))
    }

    /// Line and column (1-based, columns in bytes) of a byte offset.
    static func lineColumn(_ bytes: [UInt8], _ offset: Int) -> (Int, Int) {
        var line = 1, lineStart = 0
        for i in 0..<min(offset, bytes.count) where bytes[i] == 0x0A {
            line += 1
            lineStart = i + 1
        }
        return (line, offset - lineStart + 1)
    }
}
