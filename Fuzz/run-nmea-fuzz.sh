#!/bin/sh
# Builds the libFuzzer target for Sources/NMEA (framer + decoders + epoch assembler) and runs it.
#
#   Fuzz/run-nmea-fuzz.sh [seconds]      default 60; extra arguments go to libFuzzer
#
# Not part of `swift build`: the modules are compiled with swiftc directly, instrumented with
# -sanitize=fuzzer,address, into .build-fuzz/. New inputs found go to .build-fuzz/corpus (the
# committed seeds in Fuzz/NMEAFuzz/corpus are read, never written); a crash leaves crash-* in the
# current folder and a non-zero exit.
set -eu
cd "$(dirname "$0")/.."
seconds="${1:-60}"
[ $# -gt 0 ] && shift
out=.build-fuzz
mkdir -p "$out/corpus"
flags="-O -sanitize=fuzzer,address -parse-as-library -wmo -I $out"

build() { # module name, sources...
    name="$1"; shift
    swiftc $flags -module-name "$name" -emit-module -emit-module-path "$out/$name.swiftmodule" \
        -emit-object -o "$out/$name.o" "$@"
}
build CivilTime $(find Sources/CivilTime -name '*.swift' | sort)
build Position Sources/Position/*.swift
build NMEA Sources/NMEA/*.swift
swiftc $flags -module-name NMEAFuzz Fuzz/NMEAFuzz/main.swift "$out/CivilTime.o" "$out/Position.o" "$out/NMEA.o" \
    -o "$out/nmea-fuzz"

exec "$out/nmea-fuzz" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 "$@" \
    "$out/corpus" Fuzz/NMEAFuzz/corpus
