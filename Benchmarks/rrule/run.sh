#!/bin/sh
# Recurrence-rule next fire: Fencepost (swiftc -O -wmo, with Sources/CivilTime) and python-dateutil,
# row by row: dateutil_next.py asks the Fencepost binary for each workload, rule and zone just
# before it measures dateutil's, and does it all ROUNDS times (default 5): on a shared machine
# both sides' speed swings between seconds, and a ratio is only fair between figures taken
# moments apart.
# Output: JSON lines, also written to ../results/: first the run (machine and commit as
# Benchmarks/runinfo.py describes them for every suite, start and end, the load at both, the
# rounds), then one line per round, implementation, workload, rule and zone (field "round").
# Benchmarks/report takes per row the median of the rounds, and for a ratio the median of the
# rounds' own ratios with the lowest and highest beside it.
#
# Usage: run.sh [OUT]   (ROUNDS=N in the environment sets the rounds)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../results/rrule-next-fire-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
rounds=${ROUNDS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
swiftc -O -wmo -module-name RRuleBench -o "$tmp/bench" $(find "$here/../../Sources/CivilTime" -name '*.swift') "$here/main.swift"
start=$(date -u +%FT%TZ)
load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 "$here/dateutil_next.py" --fencepost "$tmp/bench" --rounds "$rounds" UTC Europe/Berlin > "$tmp/rows"
HERE="$here" python3 - "$start" "$load" "$(date -u +%FT%TZ)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$rounds" > "$tmp/head" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["HERE"], ".."))
import runinfo
start, load, end, load_end, rounds = sys.argv[1:6]
print(json.dumps({"machine": runinfo.machine(), "commit": runinfo.commit(["Sources/CivilTime", "Benchmarks/rrule"]),
                  "date": start, "end": end, "load": load, "loadEnd": load_end, "rounds": int(rounds)}))
PY
cat "$tmp/head" "$tmp/rows" > "$out"
cat "$tmp/head"
