#!/usr/bin/env python3
"""Writes the zone test files from Natural Earth 1:110m countries, as PyPI serves them.

    make_zone_testdata.py [OUT_DIR]

OUT_DIR: the folder FENCEPOST_ZONE_TESTDATA names, else .build/testdata/zones in the repository
(git-ignored). Does nothing when every file is there and was written from the same source by the
same version of this script (the stamp file says so); otherwise writes them all again, each through
a temporary file renamed into place, so runs at the same time (two test processes) do not see half a
file.

Source: the wheel geopandas-0.14.4-py3-none-any.whl from PyPI (SHA256 below, checked), fetched with
`python3 -m pip download geopandas==0.14.4 --no-deps` and never installed. Its
geopandas/datasets/naturalearth_lowres is Natural Earth's 1:110m admin-0 countries (public domain)
as one shapefile with the attributes pop_est, continent, name, iso_a3, gdp_md_est. The shapefile is
read here (a reader of its own, below: Polygon records and dBASE III rows, nothing else), so
nothing but python3 and pip is needed.

Each feature keeps the source's coordinates exactly (each number printed as Python's shortest
repr of the double, which reads back to the same double) and ring order (the shapefile's: an outer
ring clockwise, a hole counter-clockwise); a record of one outer ring is a Polygon, of several a
MultiPolygon, a hole goes to the outer ring that contains it. Properties: name, iso_a3, continent.
No feature `id`: readers take `--id-property name` (`iso_a3` is "-99" for France, Norway, Kosovo,
Somaliland and Northern Cyprus).

Exit status: 0 done; 3 python3 has no pip (stderr says so); 4 the download failed (no network, no
index); 1 anything else (a wheel that is not the pinned one, a feature missing).
"""
import hashlib
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import zipfile

WHEEL = "geopandas-0.14.4-py3-none-any.whl"
WHEEL_SHA256 = "3bb6473cb59d51e1a7fe2dbc24a1a063fb0ebdeddf3ce08ddbf8c7ddc99689aa"
LAYER = "geopandas/datasets/naturalearth_lowres/naturalearth_lowres"
# Bump when the files written change, so that caches written by an older version are rewritten.
VERSION = 1
STAMP = "zones.stamp"

# file name -> the countries (by `name`) it holds, in order.
FILES = {
    # South Africa: one outer ring with Lesotho as its hole; Lesotho.
    "ne_110m_south_africa_lesotho.geojson": ["South Africa", "Lesotho"],
    # MultiPolygon countries: Fiji's parts on both sides of ±180, islands, an exclave (Angola's
    # Cabinda), Indonesia's many parts.
    "ne_110m_multipolygon_countries.geojson": ["Fiji", "New Zealand", "Japan", "Indonesia", "Italy",
                                               "United Kingdom", "Angola", "Greece"],
    # Continent-sized: Russia (split at ±180), Canada, Antarctica (closed along the South Pole, from
    # 180 to -180 at latitude -90).
    "ne_110m_continent_sized.geojson": ["Russia", "Canada", "Antarctica"],
}
QGIS_FILE = "qgis_export_countries.geojson"
QGIS_COUNTRIES = ["Germany", "Switzerland", "Austria", "Italy", "France"]


def default_out_dir():
    named = os.environ.get("FENCEPOST_ZONE_TESTDATA")
    if named:
        return named
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, ".build", "testdata", "zones")


def all_files():
    return list(FILES) + [QGIS_FILE]


def stamp_text():
    return f"{WHEEL} sha256 {WHEEL_SHA256} {LAYER} version {VERSION}\n"


def up_to_date(out):
    try:
        with open(os.path.join(out, STAMP), encoding="utf-8") as f:
            if f.read() != stamp_text():
                return False
    except OSError:
        return False
    return all(os.path.exists(os.path.join(out, name)) for name in all_files())


def fail(status, message):
    print(f"make_zone_testdata.py: {message}", file=sys.stderr)
    sys.exit(status)


def download_wheel(directory):
    """The pinned wheel's bytes, fetched by pip into `directory` and checked against its SHA256."""
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
        fail(3, f"{sys.executable} has no pip (board/install-deps installs python3-pip)")
    run = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--retries", "2", "--timeout", "20", "--no-deps", "--only-binary=:all:",
                          "-d", directory, "geopandas==0.14.4"], capture_output=True, text=True)
    path = os.path.join(directory, WHEEL)
    if run.returncode != 0 or not os.path.exists(path):
        last = " / ".join(run.stderr.strip().splitlines()[-2:])[-600:]
        fail(4, f"pip download geopandas==0.14.4 failed (exit {run.returncode}; no network or no index?): {last}")
    with open(path, "rb") as f:
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != WHEEL_SHA256:
        fail(1, f"{WHEEL} has SHA256 {digest}, expected {WHEEL_SHA256}")
    return data


def read_dbf(data, encoding):
    """The rows of a dBASE III table (`data`), as dicts of stripped strings and numbers."""
    count, header_length, record_length = struct.unpack_from("<IHH", data, 4)
    fields = []
    offset = 32
    while data[offset] != 0x0D:
        name = data[offset:offset + 11].split(b"\0", 1)[0].decode("ascii")
        kind = chr(data[offset + 11])
        length = data[offset + 16]
        fields.append((name, kind, length))
        offset += 32
    rows = []
    for i in range(count):
        at = header_length + i * record_length
        if data[at:at + 1] == b"*":
            continue  # deleted
        at += 1
        row = {}
        for name, kind, length in fields:
            text = data[at:at + length].decode(encoding).strip()
            at += length
            if kind in "NF":
                number = float(text) if text else None
                row[name] = int(number) if number is not None and number.is_integer() and "." not in text else number
            else:
                row[name] = text
        rows.append(row)
    return rows


def read_shp_polygons(data):
    """Each record of a Polygon shapefile (`data`): its rings, each a list of [x, y], or None for a
    null shape."""
    if struct.unpack_from(">i", data, 0)[0] != 9994:
        fail(1, "not a shapefile (file code is not 9994)")
    length = struct.unpack_from(">i", data, 24)[0] * 2
    records = []
    at = 100
    while at < length:
        _, content = struct.unpack_from(">ii", data, at)
        at += 8
        shape_type = struct.unpack_from("<i", data, at)[0]
        if shape_type == 0:
            records.append(None)
        elif shape_type == 5:
            parts_count, points_count = struct.unpack_from("<ii", data, at + 36)
            starts = list(struct.unpack_from(f"<{parts_count}i", data, at + 44))
            xy = struct.unpack_from(f"<{2 * points_count}d", data, at + 44 + 4 * parts_count)
            ends = starts[1:] + [points_count]
            records.append([[[xy[2 * k], xy[2 * k + 1]] for k in range(s, e)] for s, e in zip(starts, ends)])
        else:
            fail(1, f"record {len(records)}: shape type {shape_type}, expected Polygon (5)")
        at += content * 2
    return records


def signed_area(ring):
    return sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(ring, ring[1:] + ring[:1])) / 2


def ring_contains(ring, x, y):
    inside = False
    for (x0, y0), (x1, y1) in zip(ring, ring[1:] + ring[:1]):
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            inside = not inside
    return inside


def geometry(rings, where):
    """GeoJSON geometry of one shapefile record: outer rings (clockwise) with their holes."""
    outers = [r for r in rings if signed_area(r) < 0]
    holes = [r for r in rings if signed_area(r) > 0]
    polygons = [[outer] for outer in outers]
    for hole in holes:
        # The outer ring that holds most of the hole's vertices (a hole may touch its shell).
        votes = [sum(ring_contains(outer, x, y) for x, y in hole) for outer in outers]
        if not votes or max(votes) == 0:
            fail(1, f"{where}: a hole of {len(hole)} vertices lies in no outer ring")
        polygons[votes.index(max(votes))].append(hole)
    if len(polygons) == 1:
        return {"type": "Polygon", "coordinates": polygons[0]}
    return {"type": "MultiPolygon", "coordinates": polygons}


def write_atomically(path, text):
    directory = os.path.dirname(path)
    fd, temporary = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)


def collection_text(features, header=None):
    """One feature a line, as ogr2ogr writes; numbers as Python's shortest round-trip repr."""
    head = "{\n" + "".join(f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},\n" for k, v in (header or {}).items())
    lines = ",\n".join(json.dumps(f, ensure_ascii=False) for f in features)
    return '{\n"type": "FeatureCollection",\n' + head[2:] + '"features": [\n' + lines + "\n]\n}\n"


def main():
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1].startswith("-")):
        sys.exit(__doc__)
    out = sys.argv[1] if len(sys.argv) == 2 else default_out_dir()
    if up_to_date(out):
        return
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fencepost-geopandas-") as directory:
        wheel = zipfile.ZipFile(io.BytesIO(download_wheel(directory)))
    encoding = wheel.read(LAYER + ".cpg").decode("ascii").strip() or "ISO-8859-1"
    rows = read_dbf(wheel.read(LAYER + ".dbf"), encoding)
    shapes = read_shp_polygons(wheel.read(LAYER + ".shp"))
    if len(rows) != len(shapes):
        fail(1, f"{LAYER}: {len(rows)} rows in the .dbf, {len(shapes)} shapes in the .shp")
    by_name = {}
    for index, (row, rings) in enumerate(zip(rows, shapes)):
        if rings is None:
            continue
        properties = {"name": row["name"], "iso_a3": row["iso_a3"], "continent": row["continent"]}
        by_name[row["name"]] = {"type": "Feature", "properties": properties,
                                "geometry": geometry(rings, f"{LAYER}.shp record {index} ({row['name']})")}

    def chosen(names):
        missing = [n for n in names if n not in by_name]
        if missing:
            fail(1, f"{LAYER}: no country named {missing}")
        return [by_name[n] for n in names]

    for name, countries in FILES.items():
        write_atomically(os.path.join(out, name), collection_text(chosen(countries)))
    # As QGIS 3 writes a layer of type MultiPolygon (Export > Save Features As > GeoJSON): a "name",
    # a "crs" of CRS84, no feature id, properties `fid` (1, 2, …) then the attributes, every geometry
    # a MultiPolygon (a Polygon wrapped in one more bracket).
    qgis = []
    for fid, feature in enumerate(chosen(QGIS_COUNTRIES), start=1):
        g = feature["geometry"]
        coordinates = [g["coordinates"]] if g["type"] == "Polygon" else g["coordinates"]
        qgis.append({"type": "Feature",
                     "properties": {"fid": fid, "name": feature["properties"]["name"], "iso_a3": feature["properties"]["iso_a3"]},
                     "geometry": {"type": "MultiPolygon", "coordinates": coordinates}})
    header = {"name": "countries", "crs": {"type": "name", "properties": {"name": "urn:ogc:def:crs:OGC:1.3:CRS84"}}}
    write_atomically(os.path.join(out, QGIS_FILE), collection_text(qgis, header))
    write_atomically(os.path.join(out, STAMP), stamp_text())
    print(f"make_zone_testdata.py: wrote {', '.join(all_files())} in {out} from {WHEEL} (Natural Earth 1:110m)")


if __name__ == "__main__":
    main()
