#!/bin/sh
# Recurrence-rule next fire: Fencepost (swiftc -O -wmo, with Sources/CivilTime) and python-dateutil,
# one after the other in the same run. Output: JSON lines, also written to ../results/.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../results/rrule-next-fire-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
swiftc -O -wmo -parse-as-library -module-name RRuleBench -o "$tmp/bench" \
    $(find "$here/../../Sources/CivilTime" -name '*.swift') "$here/main.swift" 2>/dev/null ||
    swiftc -O -wmo -module-name RRuleBench -o "$tmp/bench" $(find "$here/../../Sources/CivilTime" -name '*.swift') "$here/main.swift"
{ echo "{\"machine\":\"$(uname -m)\",\"commit\":\"$(git -C "$here" rev-parse --short HEAD)\",\"date\":\"$(date -u +%FT%TZ)\",\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
  "$tmp/bench" UTC Europe/Berlin
  python3 "$here/dateutil_next.py" UTC Europe/Berlin; } | tee "$out"
