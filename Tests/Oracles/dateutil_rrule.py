#!/usr/bin/env python3
"""The oracle of the recurrence-rule tests: python-dateutil's rrule (PyPI) expands each rule.

Reads JSON lines {"rule": "FREQ=...", "dtstart": "20260105T070000", "tz": "Europe/Berlin", "n": 30}
on standard input and answers one JSON line each, in order:
  {"local": ["2026-01-05T07:00:00", ...], "utc": [1767592800, ...]}
the first n instances of the rule from DTSTART as civil times (naive, dateutil's expansion) and
their UTC instants by Python's zoneinfo (the system's TZif files, POSIX footer included) with
fold=0: the offset before a gap and the first of two repeated times, as RFC 5545 §3.3.5 says.
A case dateutil does not finish in 0.5 s is answered {"timeout": true}; one it refuses {"error": "..."}.

    python3 Tests/Oracles/dateutil_rrule.py < cases.jsonl
"""
import itertools
import json
import signal
import sys
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def answer(case):
    dtstart = datetime.strptime(case["dtstart"], "%Y%m%dT%H%M%S")
    rule = rrulestr(case["rule"], dtstart=dtstart)
    zone = ZoneInfo(case["tz"])
    local, utc = [], []
    for dt in itertools.islice(rule, case["n"]):
        local.append(dt.strftime("%Y-%m-%dT%H:%M:%S"))
        utc.append(int(dt.replace(tzinfo=zone, fold=0).timestamp()))
    return {"local": local, "utc": utc}


def main():
    signal.signal(signal.SIGALRM, on_alarm)
    for line in sys.stdin:
        case = json.loads(line)
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        try:
            out = answer(case)
        except Timeout:
            out = {"timeout": True}
        except Exception as e:  # dateutil's refusal of a rule, as text
            out = {"error": f"{type(e).__name__}: {e}"}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
