#!/bin/sh
# Recurrence-rule next fire: Fencepost (swiftc -O -wmo, with Sources/CivilTime) and python-dateutil,
# sample by sample: dateutil_next.py drives the Fencepost binary and alternates its samples with
# dateutil's for each workload, rule and zone, and does it all ROUNDS times (default 3): on a
# shared machine both sides' speed swings between seconds, and a ratio is only fair between
# figures taken moments apart.
# Output: JSON lines, also written to ../results/: first the run (machine and commit as
# Benchmarks/runinfo.py describes them for every suite, start and end, the load at both, the
# rounds), then one line per round, implementation, workload, rule and zone (field "round").
# Benchmarks/report takes per row the median of the rounds, and for a ratio the median of the
# rounds' own ratios with the lowest and highest beside it.
#
# Usage: run.sh [OUT]   (ROUNDS=N sets the rounds, CPU=K the CPU both run on: the last one by default)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../results/rrule-next-fire-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
rounds=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
swiftc -O -wmo -module-name RRuleBench -o "$tmp/bench" $(find "$here/../../Sources/CivilTime" -name '*.swift') "$here/main.swift"
start=$(date -u +%FT%TZ)
load=$(cut -d' ' -f1-3 /proc/loadavg)
# Both on one CPU (the driver's affinity is inherited by the binary): a pair is fair only when both
# of its samples ran where the same neighbours ran.
cpu=${CPU:-$(($(nproc) - 1))}
taskset -c "$cpu" python3 "$here/dateutil_next.py" --fencepost "$tmp/bench" --rounds "$rounds" UTC Europe/Berlin > "$tmp/rows"
HERE="$here" CPU="$cpu" python3 - "$start" "$load" "$(date -u +%FT%TZ)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$rounds" > "$tmp/head" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["HERE"], ".."))
import runinfo
start, load, end, load_end, rounds = sys.argv[1:6]
print(json.dumps({"machine": runinfo.machine(), "commit": runinfo.commit(["Sources/CivilTime", "Benchmarks/rrule"]),
                  "date": start, "end": end, "load": load, "loadEnd": load_end, "rounds": int(rounds), "cpu": int(os.environ["CPU"])}))
PY
cat "$tmp/head" "$tmp/rows" > "$out"
cat "$tmp/head"
