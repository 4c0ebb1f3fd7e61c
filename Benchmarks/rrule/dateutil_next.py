#!/usr/bin/env python3
"""python-dateutil's next fire for the same four rules as main.swift's `now` workload: DTSTART
2026-01-05 00:00 in the zone (tz-aware), query instants in the 30 days from 2026-11-26T00:00Z
(the same SplitMix64 seed and draws). Workload `now` asks at those instants; `refire` at the
rule's next fire after each (re-arming after a fire). One JSON line per workload, rule, zone and way:

  dateutil-cached  the baseline: one rrule object built once with cache=True, asked
                   `rule.after(t)` for every instant; what a long-running service would keep per
                   rule (the cache holds the instances expanded so far; after() still scans them
                   from DTSTART).
  dateutil-fresh   `rrulestr(text, dtstart=…).after(t)` per instant: the rule parsed and built per
                   question, as a stateless caller would (e.g. after a restart).

ns per call: p50/p90 of 5 samples (cached: 256 instants a sample after one warm-up pass; fresh: 32)."""
import json, sys, time
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


def measure(points, call):
    samples = []
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for p in points:
            call(p)
        samples.append((time.perf_counter_ns() - t0) / len(points))
    samples.sort()
    return round(samples[2]), round(samples[4])


for name in (sys.argv[1:] or ["UTC", "Europe/Berlin"]):
    zone = ZoneInfo(name)
    dtstart = datetime(2026, 1, 5, tzinfo=zone)
    for text in rules:
        cached = rrulestr(text, dtstart=dtstart, cache=True)
        points = [datetime.fromtimestamp(s, tz=timezone.utc).astimezone(zone) for s in instants[:256]]
        for p in points:
            cached.after(p)  # warm-up: the cache holds every instance up to the last point
        fires = [cached.after(p) for p in points]
        for workload, qs in (("now", points), ("refire", fires)):
            p50, p90 = measure(qs, cached.after)
            print(json.dumps({"impl": "dateutil-cached", "workload": workload, "rule": text, "zone": name, "p50_ns": p50, "p90_ns": p90}), flush=True)
            p50, p90 = measure(qs[:32], lambda p: rrulestr(text, dtstart=dtstart).after(p))
            print(json.dumps({"impl": "dateutil-fresh", "workload": workload, "rule": text, "zone": name, "p50_ns": p50, "p90_ns": p90}), flush=True)
