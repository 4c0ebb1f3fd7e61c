# Sourced by the agent scripts (measure.sh, embedded.sh): how a script hands a figure to Benchmarks/run.
# figure NAME METRIC VALUE UNIT: one figure as a JSON line on $FIGURES, which Benchmarks/run sets
# (it adds machine, commit, date and load, and writes Benchmarks/results/); unset, nothing is
# written. A VALUE that is not a plain number is written as null.
figure() {
    [ -n "${FIGURES:-}" ] || return 0
    case "$3" in ''|*[!0-9.]*) v=null ;; *) v=$3 ;; esac
    printf '{"name":"%s","metric":"%s","value":%s,"unit":"%s"}\n' "$1" "$2" "$v" "$4" >> "$FIGURES"
}
