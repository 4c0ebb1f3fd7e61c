#!/bin/sh
# Recurrence-rule next fire: Fencepost (swiftc -O -wmo, with Sources/CivilTime) and python-dateutil,
# one after the other in the same run. Output: JSON lines, also written to ../results/: first the
# run (machine and commit as Benchmarks/runinfo.py describes them for every suite, start and end,
# the load at both), then one line per implementation, workload, rule and zone.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../results/rrule-next-fire-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
swiftc -O -wmo -parse-as-library -module-name RRuleBench -o "$tmp/bench" \
    $(find "$here/../../Sources/CivilTime" -name '*.swift') "$here/main.swift" 2>/dev/null ||
    swiftc -O -wmo -module-name RRuleBench -o "$tmp/bench" $(find "$here/../../Sources/CivilTime" -name '*.swift') "$here/main.swift"
start=$(date -u +%FT%TZ)
load=$(cut -d' ' -f1-3 /proc/loadavg)
{ "$tmp/bench" UTC Europe/Berlin
  python3 "$here/dateutil_next.py" UTC Europe/Berlin; } | tee "$tmp/rows"
HERE="$here" python3 - "$start" "$load" "$(date -u +%FT%TZ)" "$(cut -d' ' -f1-3 /proc/loadavg)" > "$tmp/head" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["HERE"], ".."))
import runinfo
start, load, end, load_end = sys.argv[1:5]
print(json.dumps({"machine": runinfo.machine(), "commit": runinfo.commit(["Sources/CivilTime", "Benchmarks/rrule"]),
                  "date": start, "end": end, "load": load, "loadEnd": load_end}))
PY
cat "$tmp/head" "$tmp/rows" > "$out"
cat "$tmp/head"
