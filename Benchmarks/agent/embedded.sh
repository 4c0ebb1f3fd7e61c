#!/bin/sh
# The Embedded Swift build beside the normal one, in one run:
# stripped sizes, and `fencepost-agent --bench` (next fire, geofence query at 100k, NMEA MB/s) of
# each build back to back on this machine; the aarch64 build under qemu too when it is given
# (emulated: its times say nothing about a Pi, only that it runs).
#
#   Benchmarks/agent/embedded.sh NORMAL EMBEDDED_X86_64 [EMBEDDED_AARCH64]
#
# Build first:
#   swift build -c release --static-swift-stdlib --product fencepost-agent   # NORMAL = .build/release/fencepost-agent
#   board/cross-build x86_64                                                 # .build-cross/x86_64/fencepost-agent
#   board/cross-build aarch64                                                # .build-cross/aarch64/fencepost-agent
# Memory and latency of a build: Benchmarks/agent/measure.sh BINARY (PARTS="idle latency").
set -eu
[ $# -ge 2 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 64; }
NORMAL=$1 EMBEDDED=$2 ARM=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
SECONDS_PER_CASE=${SECONDS_PER_CASE:-2}
DIR=$(mktemp -d /tmp/fp-embedded.XXXXXX)
trap 'rm -rf "$DIR"' EXIT

echo "run: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo unknown), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
. "$HERE/figure.sh"
size() { strip -o "$DIR/s" "$1" 2>/dev/null || aarch64-linux-gnu-strip -o "$DIR/s" "$1"; stat -c %s "$DIR/s"; }
echo "stripped size: normal $(size "$NORMAL") bytes, embedded x86_64 $(size "$EMBEDDED") bytes${ARM:+, embedded aarch64 $(size "$ARM") bytes}"
figure "binary, stripped" "normal" "$(size "$NORMAL")" bytes
figure "binary, stripped" "embedded x86_64" "$(size "$EMBEDDED")" bytes
[ -z "$ARM" ] || figure "binary, stripped" "embedded aarch64" "$(size "$ARM")" bytes

# bench LABEL COMMAND…: `--bench`'s lines ("NAME: X ns/op, …"), prefixed with LABEL, and as figures.
bench() {
    label=$1; shift
    "$@" --bench --seconds "$SECONDS_PER_CASE" | while IFS= read -r line; do
        echo "$label $line"
        bench_figure "$label" "$line"
    done
}
# Alternating runs, so that a change in the machine's load falls on both builds.
for round in 1 2; do
    bench "normal (round $round)" "$NORMAL"
    bench "embedded (round $round)" "$EMBEDDED"
done
if [ -n "$ARM" ]; then
    bench "aarch64 under qemu" "$HERE/../../board/run-aarch64" "$ARM"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
