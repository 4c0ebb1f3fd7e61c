// Point in polygon on a real border of 100k and 1M vertices: ours (RegionShape.isWithin, margin 0,
// the monitor's predicate) against GEOS's prepared geometry (GEOSPrepare_r, then
// GEOSPreparedContains_r; GEOS 3.11 in Debian 12 has no GEOSPreparedContainsXY_r, so the query
// points are made into GEOS points before the clock runs and only the containment is timed).
//
// The border: the Americas' coastline from Natural Earth 1:10m land (`ne_10m_land`, its ring of
// 66,483 vertices, from -168° to -35°, -54° to 72°), resampled to exactly N vertices by points
// spaced evenly along its length (each original vertex kept when N is larger), read from the file
// FENCEPOST_LAND_GEOJSON names (plain or .gz; Tests/Oracles/README.md says where to get it: no
// PyPI package ships the 1:10m layer).
//
// Queries: 4,096 seeded points, half uniform in the polygon's bounding box, half within 20 km of a
// random vertex; each iteration is 1,000 queries (`scalingFactor: .kilo`), so figures are ns per
// query. The two answers are compared on every query point before the clock runs.

import Benchmark
import CGEOS
import FencepostJSON
import Geofencing
import Position
import SeededRandom

#if canImport(Glibc)
import Glibc
#endif

/// The Americas' ring of `ne_10m_land` (66,483 vertices, closing vertex included).
let americas: [Coordinate] = {
    let path = PolygonWorkload.landPath()
    let text = PolygonWorkload.read(path)
    let land: JSONValue
    do { land = try JSONValue.parse(text) } catch { fatalError("\(path): \(error)") }
    for feature in land["features"]?.array ?? [] {
        for polygon in feature["geometry"]?["coordinates"]?.array ?? [] {
            guard let ring = polygon[0]?.array, ring.count == 66_483 else { continue }
            return ring.map { Coordinate(latitude: $0[1]!.double!, longitude: $0[0]!.double!) }
        }
    }
    fatalError("\(path): no ring of 66,483 vertices (the Americas in Natural Earth 1:10m land)")
}()

enum PolygonWorkload {
    static func landPath() -> String {
        guard let named = getenv("FENCEPOST_LAND_GEOJSON"), named.pointee != 0 else {
            fatalError("set FENCEPOST_LAND_GEOJSON to Natural Earth 1:10m land (ne_10m_land.geojson, or .gz): see Tests/Oracles/README.md")
        }
        return String(cString: named)
    }

    /// The whole file as text, through `gzip -dc` when its name ends in .gz.
    static func read(_ path: String) -> String {
        guard access(path, R_OK) == 0 else {
            fatalError("\(path) is missing: the benchmark needs Natural Earth 1:10m land (see Tests/Oracles/README.md)")
        }
        let command = path.hasSuffix(".gz") ? "gzip -dc '\(path)'" : "cat '\(path)'"
        guard let pipe = popen(command, "r") else { fatalError("popen \(command) failed") }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&buffer, 1, buffer.count, pipe)
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0 ..< n])
        }
        guard pclose(pipe) == 0 else { fatalError("\(command) failed") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `ring` (closed) resampled to `count` distinct vertices spaced evenly along its length in
    /// longitude/latitude, the original vertices kept: each edge gets a share of the new vertices
    /// proportional to its length.
    static func resample(_ ring: [Coordinate], to count: Int) -> [Coordinate] {
        let edges = ring.count - 1
        precondition(count >= edges)
        var lengths: [Double] = []
        for i in 0 ..< edges {
            let a = ring[i], b = ring[i + 1]
            lengths.append(((b.latitude - a.latitude) * (b.latitude - a.latitude)
                + (b.longitude - a.longitude) * (b.longitude - a.longitude)).squareRoot())
        }
        let total = lengths.reduce(0, +)
        let extra = count - edges
        var out: [Coordinate] = []
        out.reserveCapacity(count)
        var given = 0
        var carried = 0.0
        for i in 0 ..< edges {
            carried += Double(extra) * lengths[i] / total
            var n = Int(carried.rounded(.down))
            if i == edges - 1 { n = extra - given }
            carried -= Double(n)
            given += n
            let a = ring[i], b = ring[i + 1]
            out.append(a)
            for k in 0 ..< n {
                let t = Double(k + 1) / Double(n + 1)
                out.append(Coordinate(latitude: a.latitude + t * (b.latitude - a.latitude),
                                      longitude: a.longitude + t * (b.longitude - a.longitude)))
            }
        }
        precondition(out.count == count)
        return out
    }

    static func queries(_ ring: [Coordinate], seed: UInt64) -> [Coordinate] {
        var random = SplitMix64(seed: seed)
        let lats = ring.map(\.latitude), lons = ring.map(\.longitude)
        let (south, north, west, east) = (lats.min()!, lats.max()!, lons.min()!, lons.max()!)
        return (0 ..< 4096).map { k in
            if k % 2 == 0 {
                return Coordinate(latitude: random.uniform(south, north), longitude: random.uniform(west, east))
            }
            let v = ring[Int(random.below(UInt64(ring.count)))]
            let d = random.uniform(0, 20_000) / 111_195
            let angle = random.uniform(0, 2 * Double.pi)
            return Coordinate(latitude: v.latitude + d * sin(angle),
                              longitude: v.longitude + d * cos(angle) / cos(v.latitude * Double.pi / 180))
        }
    }
}

/// GEOS's prepared polygon and the query points as GEOS points, in one context.
final class GEOSPolygon: @unchecked Sendable {
    let context: GEOSContextHandle_t
    let geometry: OpaquePointer
    let prepared: OpaquePointer
    let points: [OpaquePointer]

    init(ring: [Coordinate], queries: [Coordinate]) {
        let context = GEOS_init_r()!
        self.context = context
        let sequence = GEOSCoordSeq_create_r(context, UInt32(ring.count + 1), 2)!
        for (i, c) in (ring + [ring[0]]).enumerated() {
            GEOSCoordSeq_setXY_r(context, sequence, UInt32(i), c.longitude, c.latitude)
        }
        let shell = GEOSGeom_createLinearRing_r(context, sequence)!
        geometry = GEOSGeom_createPolygon_r(context, shell, nil, 0)!
        prepared = GEOSPrepare_r(context, geometry)!
        points = queries.map { GEOSGeom_createPointFromXY_r(context, $0.longitude, $0.latitude)! }
    }

    func contains(_ k: Int) -> Bool { GEOSPreparedContains_r(context, prepared, points[k]) == 1 }
}

let benchmarks: @Sendable () -> Void = {
    #if DEBUG
    fatalError("Benchmarks must be built in release.")
    #endif
    for size in [100_000, 1_000_000] {
        let label = size == 100_000 ? "100k" : "1M"
        // Built at the first iteration of the first benchmark of this size, not at registration,
        // so that `--filter` on one size does not build the other.
        final class Lazy: @unchecked Sendable {
            let size: Int
            init(size: Int) { self.size = size }
            lazy var ring = PolygonWorkload.resample(americas, to: size)
            lazy var queries = PolygonWorkload.queries(ring, seed: 23)
            lazy var ours: RegionShape = {
                do { return .polygon(try PolygonRegion(parts: [[ring]])) } catch {
                    fatalError("our polygon of \(size) vertices is not built: \(error)")
                }
            }()
            lazy var geos = GEOSPolygon(ring: ring, queries: queries)
            /// Ours and GEOS on every query point: the same answers, or a message.
            lazy var compared: Void = {
                var differ = 0
                for k in queries.indices where geos.contains(k) != ours.isWithin(queries[k], margin: 0) { differ += 1 }
                if differ > 0 { print("\(size) vertices: \(differ) of \(queries.count) queries answered differently by GEOS and ours") }
            }()
        }
        let lazy = Lazy(size: size)
        nonisolated(unsafe) var cursor = (ours: 0, geos: 0)
        Benchmark(
            "Point in polygon, ours, \(label) vertices",
            configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal],
                                 warmupIterations: 3, scalingFactor: .kilo, maxDuration: .seconds(2), maxIterations: 10_000),
            closure: { benchmark in
                let shape = lazy.ours, queries = lazy.queries
                var i = cursor.ours
                for _ in benchmark.scaledIterations {
                    blackHole(shape.isWithin(queries[i & 4095], margin: 0))
                    i &+= 1
                }
                cursor.ours = i
            },
            setup: { lazy.compared }
        )
        Benchmark(
            "Point in polygon, GEOS prepared, \(label) vertices",
            configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal],
                                 warmupIterations: 3, scalingFactor: .kilo, maxDuration: .seconds(2), maxIterations: 10_000),
            closure: { benchmark in
                let g = lazy.geos
                var i = cursor.geos
                for _ in benchmark.scaledIterations {
                    blackHole(g.contains(i & 4095))
                    i &+= 1
                }
                cursor.geos = i
            },
            setup: { _ = lazy.geos }
        )
    }
}
