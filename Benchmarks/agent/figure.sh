# Sourced by the agent scripts (measure.sh, embedded.sh): how a script hands a figure to Benchmarks/run.
# Tests/FencepostCLITests/BenchmarkFiguresTests.swift runs these functions.
# figure NAME METRIC VALUE UNIT: one figure as a JSON line on $FIGURES, which Benchmarks/run sets
# (it adds machine, commit, date and load, and writes Benchmarks/results/); unset, nothing is
# written. A VALUE that is not a plain number is written as null.
figure() {
    [ -n "${FIGURES:-}" ] || return 0
    case "$3" in ''|*[!0-9.]*) v=null ;; *) v=$3 ;; esac
    printf '{"name":"%s","metric":"%s","value":%s,"unit":"%s"}\n' "$1" "$2" "$v" "$4" >> "$FIGURES"
}

# bench_figure LABEL LINE: one line of `fencepost-agent --bench` ("NAME: X ns/op (checksum …)") as
# the figure NAME / LABEL / X ns/op. NAME may hold colons itself ("daily 07:00"): it ends at the
# first ": " followed by a digit, and X is the number before " ns/op".
bench_figure() {
    figure "${2%%: [0-9]*}" "$1" "$(echo "$2" | sed -n 's/.*: \([0-9.]*\) ns\/op.*/\1/p')" "ns/op"
}
