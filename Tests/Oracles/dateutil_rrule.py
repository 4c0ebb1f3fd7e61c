#!/usr/bin/env python3
"""The oracle of the recurrence-rule tests: python-dateutil's rrule (PyPI) expands each rule.

Reads JSON lines {"rule": "FREQ=...", "dtstart": "20260105T070000", "tz": "Europe/Berlin", "n": 30}
on standard input and answers one JSON line each, in order, as soon as it is known (flushed):
  {"local": ["2026-01-05T07:00:00", ...], "utc": [1767592800, ...], "cpu_ms": 3}
the first n instances of the rule from DTSTART as civil times (naive, dateutil's expansion) and
their UTC instants by Python's zoneinfo (the system's TZif files, POSIX footer included) with
fold=0: the offset before a gap and the first of two repeated times, as RFC 5545 §3.3.5 says.

Every rule's expansion is bounded three ways, so that no rule can hold the run:
  - a window: nothing is looked for more than 400 years after DTSTART's year (a Gregorian cycle:
    a rule with none in it has none at all), nor past 9999. dateutil looks period by period and
    yields nothing while a period has none, so the window is kept inside its expansion: its
    month/year tables (`_iterinfo.rebuild`, called on entering each new month or year) end it;
  - a count: n instances;
  - CPU time: a rule that takes more than --budget seconds of this process's CPU time (default
    1.0; SIGVTALRM, so a loaded machine does not turn slow rules into timeouts) is answered
    {"timeout": true, "cpu_ms": …}: within the window a sub-daily rule with no instance still
    takes one step per hour or minute (FREQ=MINUTELY;BYHOUR=10,15;BYSETPOS=-2: 120 steps a day,
    17 million in 400 years).
A rule dateutil refuses is answered {"error": "..."}.

    python3 Tests/Oracles/dateutil_rrule.py [--budget SECONDS] < cases.jsonl
"""
import itertools
import json
import signal
import sys
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import dateutil.rrule
from dateutil.rrule import rrulestr


class Timeout(Exception):
    pass


armed = False
window_end_year = 9999


class WindowEnd(Exception):
    pass


class _WindowedIterInfo(dateutil.rrule._iterinfo):
    """dateutil's per-rule month/year tables, rebuilt each time its expansion enters a new month
    or year (also when that period has no instance): the one place to end the expansion at the
    window even while it yields nothing."""

    def rebuild(self, year, month):
        if year > window_end_year:
            raise WindowEnd()
        return super().rebuild(year, month)


dateutil.rrule._iterinfo = _WindowedIterInfo


def on_alarm(signum, frame):
    # Only while a rule is being expanded: an alarm that arrives after the answer is known (the
    # timer is cleared right after) must not turn into an exception elsewhere.
    if armed:
        raise Timeout()


def answer(case):
    global window_end_year
    dtstart = datetime.strptime(case["dtstart"], "%Y%m%dT%H%M%S")
    rule = rrulestr(case["rule"], dtstart=dtstart)
    zone = ZoneInfo(case["tz"])
    window_end_year = min(9999, dtstart.year + 400)
    local, utc = [], []
    try:
        for dt in itertools.islice(rule, case["n"]):
            local.append(dt.strftime("%Y-%m-%dT%H:%M:%S"))
            utc.append(int(dt.replace(tzinfo=zone, fold=0).timestamp()))
    except WindowEnd:
        pass
    return {"local": local, "utc": utc}


def main():
    global armed
    budget = 1.0
    if len(sys.argv) == 3 and sys.argv[1] == "--budget":
        budget = float(sys.argv[2])
    signal.signal(signal.SIGVTALRM, on_alarm)
    # A child inherits its parent's blocked signals. Spawned from a test (a libdispatch or
    # Swift-concurrency worker thread, which blocks nearly every signal), SIGVTALRM arrived
    # blocked, so no budget ever ended a rule and a rule with no instance ran for hours.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGVTALRM})
    for line in sys.stdin:
        case = json.loads(line)
        began = time.process_time()
        armed = True
        signal.setitimer(signal.ITIMER_VIRTUAL, budget)
        try:
            out = answer(case)
        except Timeout:
            out = {"timeout": True}
        except Exception as e:  # dateutil's refusal of a rule, as text
            out = {"error": f"{type(e).__name__}: {e}"}
        finally:
            armed = False
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        out["cpu_ms"] = round((time.process_time() - began) * 1000)
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
