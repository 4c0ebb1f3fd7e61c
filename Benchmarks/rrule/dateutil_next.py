#!/usr/bin/env python3
"""python-dateutil's next fire for the same four rules as main.swift, on the same query instants:
the 30 days from 2026-11-26T00:00Z (the same SplitMix64 seed and draws), with DTSTART 00:00 local
(tz-aware) on 2026-01-05 (workloads `now` and `refire`) or 2021-01-04 (`aged`). `now` and `aged`
ask at those instants; `refire` at the rule's next fire after each (re-arming after a fire). One
JSON line per workload, rule, zone and way:

  dateutil-cached   the baseline: one rrule object built once with cache=True, asked
                    `rule.after(t)` for every instant; what dateutil's documentation advises for an
                    rrule used many times (the cache holds the instances expanded so far; after()
                    still scans them from DTSTART, so its cost grows with the rule's age).
  dateutil-default  one rrule object built once as `rrulestr(text, dtstart=…)` builds it (no
                    cache), asked `rule.after(t)`: it expands the instances from DTSTART each time.
  dateutil-fresh    `rrulestr(text, dtstart=…).after(t)` per instant: the rule parsed and built per
                    question, as a stateless caller would (e.g. after a restart).

ns per call, p50/p90: cached, of 41 samples of 16…256 instants (about 2 ms each) after one
warm-up pass; default and fresh, of 7 samples of 16 instants. `aged` measures the cached way only.

With --fencepost BENCH (main.swift's binary, `--serve`), each of the 41 cached samples follows one
of Fencepost's (4,096 calls) for the same workload, rule and zone, so that every pair is taken
within milliseconds: on a shared machine both sides' speed swings between seconds, and a ratio is
fair only between figures taken together. --rounds N repeats it all N times (each line says its
round)."""
import argparse, json, subprocess, sys, time
from datetime import datetime, timezone
from zoneinfo import ZoneInfo
from dateutil.rrule import rrulestr

MASK = (1 << 64) - 1
state = 0x5EEDF1E7
def nxt():
    global state
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)
NOW = 1795651200  # 2026-11-26T00:00:00Z
instants = [NOW + nxt() % (30 * 86400) for _ in range(4096)]
rules = ["FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7", "FREQ=MONTHLY;BYDAY=-1FR", "FREQ=DAILY;BYHOUR=8,10,12,14,16,18", "FREQ=MONTHLY;BYMONTHDAY=-1"]
SAMPLES = 7
SAMPLES_PAIRED = 41


def measure(points, call):
    samples = []
    for _ in range(SAMPLES):
        t0 = time.perf_counter_ns()
        for p in points:
            call(p)
        samples.append((time.perf_counter_ns() - t0) / len(points))
    samples.sort()
    return round(samples[SAMPLES // 2]), round(samples[SAMPLES - 1])


def emit(impl, workload, text, name, round_, figures):
    print(json.dumps({"impl": impl, "workload": workload, "rule": text, "zone": name,
                      "p50_ns": figures[0], "p90_ns": figures[1], "round": round_}), flush=True)


def interleaved(ask, workload, text, name, round_, qs=None, call=None):
    """Fencepost's samples and dateutil's (with `call`, on `qs`) one after the other, SAMPLES_PAIRED
    of each: every pair is taken within a few milliseconds."""
    if ask(f"{workload}\t{text}\t{name}") != "ready":
        sys.exit(f"dateutil_next.py: the Fencepost binary could not prepare {workload} {text} {name}")
    ours, theirs = [], []
    for _ in range(SAMPLES_PAIRED):
        ours.append(float(ask("sample")))
        if call:
            t0 = time.perf_counter_ns()
            for p in qs:
                call(p)
            theirs.append((time.perf_counter_ns() - t0) / len(qs))
    for impl, samples in (("fencepost", ours), ("dateutil-cached", theirs)):
        if samples:
            samples.sort()
            emit(impl, workload, text, name, round_, (round(samples[len(samples) // 2]), round(samples[len(samples) * 9 // 10])))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("zones", nargs="*", default=["UTC", "Europe/Berlin"])
    parser.add_argument("--fencepost", metavar="BENCH", help="main.swift's binary: alternate its samples with dateutil's")
    parser.add_argument("--rounds", type=int, default=1, help="measure every row this many times (field \"round\")")
    args = parser.parse_args()
    bench = subprocess.Popen([args.fencepost, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) if args.fencepost else None

    def ask(line):
        bench.stdin.write(line + "\n")
        bench.stdin.flush()
        return bench.stdout.readline().strip()

    for round_ in range(1, args.rounds + 1):
        for name in args.zones:
            zone = ZoneInfo(name)
            points = [datetime.fromtimestamp(s, tz=timezone.utc).astimezone(zone) for s in instants[:256]]
            for text in rules:
                for dtstart, workloads in ((datetime(2026, 1, 5, tzinfo=zone), ("now", "refire")),
                                           (datetime(2021, 1, 4, tzinfo=zone), ("aged",))):
                    cached = rrulestr(text, dtstart=dtstart, cache=True)
                    for p in points:
                        cached.after(p)  # warm-up: the cache holds every instance up to the last point
                    fires = [cached.after(p) for p in points]
                    default = rrulestr(text, dtstart=dtstart)
                    for workload in workloads:
                        qs = fires if workload == "refire" else points
                        # A dateutil sample of about 2 ms (16…256 instants), as long as several of Fencepost's.
                        t0 = time.perf_counter_ns()
                        for p in qs[:16]:
                            cached.after(p)
                        per_call = max(1, (time.perf_counter_ns() - t0) // 16)
                        sample = qs[:max(16, min(len(qs), 2_000_000 // per_call))]
                        if bench:
                            interleaved(ask, workload, text, name, round_, sample, cached.after)
                        else:
                            emit("dateutil-cached", workload, text, name, round_, measure(sample, cached.after))
                        if workload == "aged":
                            continue
                        emit("dateutil-default", workload, text, name, round_, measure(qs[:16], default.after))
                        emit("dateutil-fresh", workload, text, name, round_,
                             measure(qs[:16], lambda p: rrulestr(text, dtstart=dtstart).after(p)))
                if bench:
                    interleaved(ask, "spread", text, name, round_)
    if bench:
        bench.stdin.close()
        bench.wait()


if __name__ == "__main__":
    main()
