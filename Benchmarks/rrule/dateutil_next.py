#!/usr/bin/env python3
"""python-dateutil's next fire for the same four rules and starts as main.swift: rrule.after(start)
on a rule with tz-aware DTSTART 2000-01-03 00:00 in the zone, one call per start (dateutil walks from DTSTART, as for any rule
without a cache); p50/p90 of 5 samples of 32 starts, ns per call. One JSON line per rule and zone."""
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
starts = [946684800 + nxt() % 3155760000 for _ in range(4096)]
rules = ["FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7", "FREQ=MONTHLY;BYDAY=-1FR", "FREQ=DAILY;BYHOUR=8,10,12,14,16,18", "FREQ=MONTHLY;BYMONTHDAY=-1"]
for name in (sys.argv[1:] or ["UTC", "Europe/Berlin"]):
    zone = ZoneInfo(name)
    for text in rules:
        r = rrulestr(text, dtstart=datetime(2000, 1, 3, tzinfo=zone), cache=False)
        points = [datetime.fromtimestamp(s, tz=timezone.utc).astimezone(zone) for s in starts[:32]]
        samples = []
        for _ in range(5):
            t0 = time.perf_counter_ns()
            for p in points:
                r.after(p)
            samples.append((time.perf_counter_ns() - t0) / len(points))
        samples.sort()
        print(json.dumps({"impl": "dateutil", "rule": text, "zone": name, "p50_ns": round(samples[2]), "p90_ns": round(samples[4])}))
