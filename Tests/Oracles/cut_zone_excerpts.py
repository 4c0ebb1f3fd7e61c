#!/usr/bin/env python3
"""Cuts the zone test files (see zones-README.md) from Natural Earth GeoJSON.

    cut_zone_excerpts.py NE_DIR OUT_DIR

NE_DIR holds Natural Earth layers as GeoJSON written by ogr2ogr, one feature per line:
ne_50m_admin_0_countries.json, ne_110m_admin_0_countries.json, ne_50m_land.json,
ne_10m_lakes.json, ne_10m_land.json. Each excerpt keeps the chosen features' lines byte for byte
(coordinates and properties exactly as in the source); only the collection around them is new.
The QGIS-style file is the one conversion: see qgis_style().
"""
import gzip
import json
import os
import shutil
import sys


def feature_lines(path):
    """(index, raw line without its trailing comma, parsed feature) for each feature line."""
    index = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.startswith('{ "type": "Feature"'):
                continue
            raw = line[:-1] if line.endswith(",") else line
            yield index, raw, json.loads(raw)
            index += 1


def write_collection(path, raws, header='{\n"type": "FeatureCollection",\n'):
    with open(path, "w", encoding="utf-8") as f:
        f.write(header + '"features": [\n' + ",\n".join(raws) + "\n]\n}\n")
    print(f"{path}: {len(raws)} features, {os.path.getsize(path)} bytes")


def by_property(path, key, values):
    chosen = {v: None for v in values}
    for _, raw, feature in feature_lines(path):
        v = feature["properties"].get(key)
        if v in chosen and chosen[v] is None:
            chosen[v] = raw
    missing = [v for v, raw in chosen.items() if raw is None]
    if missing:
        sys.exit(f"{path}: no feature with {key} in {missing}")
    return list(chosen.values())


def by_index(path, indices):
    wanted = set(indices)
    found = {i: raw for i, raw, _ in feature_lines(path) if i in wanted}
    return [found[i] for i in indices]


def qgis_style(raws, names):
    """A FeatureCollection as QGIS 3 writes it (Export > Save Features As > GeoJSON from a layer of
    type MultiPolygon): a "name", a "crs" of CRS84, no feature id, properties `fid` (1, 2, …) then
    the attributes kept, every geometry a MultiPolygon. The geometry text is the source's, a Polygon
    wrapped in one more bracket; the attributes kept are NAME and ADM0_A3."""
    out = []
    for fid, raw in enumerate(raws, start=1):
        feature = json.loads(raw)
        geometry = raw[raw.index('"geometry": ') + len('"geometry": '):-2].strip()
        if feature["geometry"]["type"] == "Polygon":
            coordinates = geometry[geometry.index('"coordinates": ') + len('"coordinates": '):-1].strip()
            geometry = '{ "type": "MultiPolygon", "coordinates": [ ' + coordinates + " ] }"
        p = feature["properties"]
        properties = json.dumps({"fid": fid, "NAME": p["NAME"], "ADM0_A3": p["ADM0_A3"]}, ensure_ascii=False)
        out.append('{ "type": "Feature", "properties": ' + properties.replace('{"', '{ "').replace('"}', '" }')
                   + ', "geometry": ' + geometry + " }")
    header = ('{\n"type": "FeatureCollection",\n"name": "' + names + '",\n'
              '"crs": { "type": "name", "properties": { "name": "urn:ogc:def:crs:OGC:1.3:CRS84" } },\n')
    return out, header


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ne, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    c50 = os.path.join(ne, "ne_50m_admin_0_countries.json")
    c110 = os.path.join(ne, "ne_110m_admin_0_countries.json")
    write_collection(os.path.join(out, "ne_50m_south_africa_lesotho.geojson"), by_property(c50, "ADM0_A3", ["ZAF", "LSO"]))
    write_collection(os.path.join(out, "ne_50m_multipolygon_countries.geojson"),
                     by_property(c50, "ADM0_A3", ["ITA", "SMR", "VAT", "JPN", "FJI", "NZL"]))
    write_collection(os.path.join(out, "ne_110m_russia_canada.geojson"), by_property(c110, "ADM0_A3", ["RUS", "CAN"]))
    # ne_50m_land: feature 1380 is Africa and Eurasia (10,297 vertices and one hole), 1378 Antarctica
    # (2,805 vertices, from -180 to 180, closed along the South Pole).
    write_collection(os.path.join(out, "ne_50m_land_continents.geojson"), by_index(os.path.join(ne, "ne_50m_land.json"), [1380, 1378]))
    write_collection(os.path.join(out, "ne_10m_lakes_islands.geojson"),
                     by_property(os.path.join(ne, "ne_10m_lakes.json"), "name",
                                 ["Lake Huron", "Réservoir Manicouagan", "Lake Ladoga", "Vänern"]))
    raws, header = qgis_style(by_property(c50, "ADM0_A3", ["DEU", "CHE", "LIE", "AUT"]), "countries")
    write_collection(os.path.join(out, "qgis_export_alpine_countries.geojson"), raws, header)
    # The whole 10m land layer, for the `zones build` benchmark: as in the source, gzipped.
    land = os.path.join(out, "ne_10m_land.geojson.gz")
    with open(os.path.join(ne, "ne_10m_land.json"), "rb") as src, gzip.GzipFile(land, "wb", compresslevel=9, mtime=0) as dst:
        shutil.copyfileobj(src, dst)
    print(f"{land}: {os.path.getsize(land)} bytes")


if __name__ == "__main__":
    main()
