#!/usr/bin/env python3
"""The shapely (GEOS) oracle for polygon zones.

    shapely_zones.py FILE.geojson[.gz] SEED [POINTS_PER_FEATURE]

For each Polygon or MultiPolygon feature of FILE, draws POINTS_PER_FEATURE (default 200) random points
near its edges, seeded by SEED (Python's `random.Random`, stable across Python versions): from a random
point of a random edge, across it (either side), three in ten at 0-500 m (where straight edges in
longitude/latitude and great-circle edges part), half at 0-20 km; the rest at 20-500 km in a random
direction. Prints one JSON line per point:

    {"feature": 3, "lat": ..., "lon": ..., "inside": true, "distance": 1234.5, "unwrapped_inside": null}

- "inside": shapely's `contains` for the geometry read literally, as GEOS reads GeoJSON: an edge is a
  straight line in longitude/latitude, a part's holes are holes, parts are counted even-odd.
- "distance": metres from the point to the nearest edge (any ring of any part), in a local plane at
  the point: longitude differences scaled by cos(latitude), 1° = pi/180 * 6,371,008.8 m. The Earth
  has no seam at ±180, so the point is also tried at lon ± 360: near ±180 the nearest edge may be
  on the other side (Fiji's parts at 179.x and -179.x).
- "unwrapped_inside", "unwrapped_distance": only for a feature with an edge whose longitudes differ
  by more than 180° (an edge not on a pole): the answers with such edges taken the short way across
  ±180 (each ring's longitudes unwrapped, the point tried at lon and lon ± 360). Null otherwise. For
  such a feature the points are drawn near the unwrapped edges.

Points less than 1 m from an edge are dropped (and counted on stderr), as are points past a pole.
Needs shapely (PyPI): exits 3 with a message on stderr when it is missing.
"""
import gzip
import json
import math
import random
import sys

try:
    import numpy as np
    import shapely
    from shapely.geometry import Polygon
except ImportError as error:  # the Swift test skips (or fails under CI) on exit status 3
    print(f"shapely_zones.py: {error} (pip install shapely)", file=sys.stderr)
    sys.exit(3)

EARTH_RADIUS = 6_371_008.8
METRES_PER_DEGREE = math.pi / 180 * EARTH_RADIUS


def parts_of(geometry):
    if geometry is None:
        return None
    if geometry["type"] == "Polygon":
        return [geometry["coordinates"]]
    if geometry["type"] == "MultiPolygon":
        return geometry["coordinates"]
    return None


def crosses_antimeridian(ring):
    for (x0, y0), (x1, y1) in zip(ring, ring[1:] + ring[:1]):
        if abs(x1 - x0) > 180 and not (abs(y0) == 90 and abs(y1) == 90):
            return True
    return False


def unwrap(ring):
    out = [list(ring[0][:2])]
    for (x0, y0), (x1, y1) in zip(ring, ring[1:]):
        step = x1 - x0
        if abs(step) > 180 and not (abs(y0) == 90 and abs(y1) == 90):
            step -= math.copysign(360, step)
        out.append([out[-1][0] + step, y1])
    return out


def even_odd(polygons, x, y):
    """Whether (x, y) lies in an odd number of the parts (each part: shell minus holes)."""
    return sum(1 for p in polygons if p.contains(shapely.Point(x, y))) % 2 == 1


def edge_arrays(parts):
    """Every edge of every ring, as arrays x0, y0, x1, y1 (degrees)."""
    x0, y0, x1, y1 = [], [], [], []
    for part in parts:
        for ring in part:
            pts = [c[:2] for c in ring]
            if pts[0] != pts[-1]:
                pts.append(pts[0])
            for (a, b), (c, d) in zip(pts, pts[1:]):
                x0.append(a); y0.append(b); x1.append(c); y1.append(d)
    return tuple(np.array(v, dtype=float) for v in (x0, y0, x1, y1))


def local_distance(edges, lon, lat):
    """Metres from (lon, lat) to the nearest edge, in the local plane at the point."""
    x0, y0, x1, y1 = edges
    k = math.cos(math.radians(lat))
    ax, ay = (x0 - lon) * k, y0 - lat
    bx, by = (x1 - lon) * k, y1 - lat
    dx, dy = bx - ax, by - ay
    length2 = dx * dx + dy * dy
    t = np.where(length2 > 0, np.clip(-(ax * dx + ay * dy) / np.where(length2 > 0, length2, 1), 0, 1), 0)
    px, py = ax + t * dx, ay + t * dy
    return float(np.sqrt(np.min(px * px + py * py))) * METRES_PER_DEGREE


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    path, seed = sys.argv[1], int(sys.argv[2])
    per_feature = int(sys.argv[3]) if len(sys.argv) == 4 else 200
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8-sig") as f:
        collection = json.load(f)
    rng = random.Random(seed)
    dropped = 0
    for index, feature in enumerate(collection["features"]):
        parts = parts_of(feature.get("geometry"))
        if parts is None:
            continue
        polygons = [Polygon([c[:2] for c in part[0]], [[c[:2] for c in hole] for hole in part[1:]]) for part in parts]
        literal = shapely.MultiPolygon(polygons) if len(polygons) > 1 else polygons[0]
        shapely.prepare(literal)
        wraps = any(crosses_antimeridian([c[:2] for c in ring]) for part in parts for ring in part)
        unwrapped = None
        edges = literal_edges = edge_arrays(parts)
        if wraps:
            unwrapped_parts = [[unwrap([c[:2] for c in ring]) for ring in part] for part in parts]
            unwrapped = [Polygon(part[0], part[1:]) for part in unwrapped_parts]
            edges = edge_arrays(unwrapped_parts)
        count = len(edges[0])
        drawn = 0
        while drawn < per_feature:
            drawn += 1
            e = rng.randrange(count)
            t = rng.random()
            ex0, ey0, ex1, ey1 = (float(a[e]) for a in edges)
            lon0, lat0 = ex0 + t * (ex1 - ex0), ey0 + t * (ey1 - ey0)
            k = math.cos(math.radians(lat0))
            kind = rng.random()
            if kind < 0.8:
                # Across the edge: along its normal in the local plane.
                nx, ny = -(ey1 - ey0), (ex1 - ex0) * k
                norm = math.hypot(nx, ny)
                if norm == 0:
                    continue
                reach = 500 if kind < 0.3 else 20_000
                offset = rng.uniform(-reach, reach)
                nx, ny = nx / norm, ny / norm
            else:
                angle = rng.uniform(0, 2 * math.pi)
                nx, ny = math.cos(angle), math.sin(angle)
                offset = rng.uniform(20_000, 500_000)
            lat = lat0 + ny * offset / METRES_PER_DEGREE
            if abs(lat) >= 89.9 or k < 1e-6:
                dropped += 1
                continue
            lon = lon0 + nx * offset / METRES_PER_DEGREE / k
            lon = (lon + 180) % 360 - 180
            distance = min(local_distance(literal_edges, lon + s, lat) for s in (0, 360, -360))
            unwrapped_distance = None
            if unwrapped is not None:
                unwrapped_distance = min(local_distance(edges, lon + s, lat) for s in (0, 360, -360))
            if min(distance, unwrapped_distance or distance) < 1:
                dropped += 1
                continue
            inside = bool(literal.contains(shapely.Point(lon, lat))) if len(polygons) == 1 else even_odd(polygons, lon, lat)
            record = {"feature": index, "lat": lat, "lon": lon, "inside": inside, "distance": distance,
                      "unwrapped_inside": None, "unwrapped_distance": unwrapped_distance}
            if unwrapped is not None:
                record["unwrapped_inside"] = any(even_odd(unwrapped, lon + s, lat) for s in (0, 360, -360))
            print(json.dumps(record))
    print(f"shapely_zones.py: {path} seed {seed}: {dropped} points dropped (within 1 m of an edge, or past a pole)",
          file=sys.stderr)


if __name__ == "__main__":
    main()
