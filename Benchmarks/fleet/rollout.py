#!/usr/bin/env python3
"""A zone set rolled out to one board through the broker over a slow, faulty link, with figures.

    Benchmarks/fleet/rollout.py [--zones 1000000] [--rate 1mbit] [--cuts 3] [--kill 1] [--seed N]
                                [--every 5] [--bin .build/release] [--timeout 3600] [--out FILE] [--keep]

Runs in a temporary folder, with release builds of `fencepost` and `fencepost-agent` (--bin): a
mosquitto (TCP for the board, a Unix socket for the operator and the consumer), the fleet tests'
fault proxy (Tests/FleetTests/fault_proxy.py, via fleetkit.py) between the board and the broker,
limited to --rate each way, one agent (the demo drive replayed at real speed, console GPIO) with a
one-shot interval request added every --every seconds, due --every seconds later (a
repeating interval is at least 60 s), and a few longer one-shots, and a consumer of its events.

A seeded set of --zones circles (GeoJSON, as FleetRolloutTests writes it) is pushed with `fencepost
fleet push --zones` (gzip, chunks of 64 KiB). While the board downloads it, the link is reset
(RST, mid-chunk) --cuts times and the agent is killed (SIGKILL, a power cut) and restarted --kill
times, each at a seeded point of the download's progress (bytes down the link). The run waits for the board's retained
`reported` to say `applied` with the set's hash and zone count, then stops the agent (SIGTERM: its
summary of loop turns and latencies) and checks:

- the set arrived, verified and applied (the hash and zone count reported; a resume after the kill);
- the bytes down the link are within 5 % of the compressed size (or a chunk a fault, when more:
  a small blob);
- no loop turn of the agent took over 50 ms of CPU time (the fleet tests' measure: a turn that
  waited off the CPU on a loaded machine is logged with both times, and its wall time is recorded);
- the deliveries went on: every tick added (outside the kill's outage) was delivered to the
  consumer, and the longer one-shots arrived, with no `seq` hole.

Figures recorded: time to applied, bytes on the link and their ratio to the blob, resets, chunks
asked again (the agent's own count), peak resident of the agent (VmHWM, reset just before the push,
read before the kill and at the end) and of the build child (its `peak N kB resident` line), the
board's disk at peak (the state folder sampled every 0.2 s: blob + GeoJSON + compiled set), the
slowest turn by CPU and by wall time, ticks late by over 50 ms (a lower bound: see deliveries()),
the machine, the commit and the load (start, end, highest).

Writes a script-suite JSON to --out (Benchmarks/report renders every rollout-*.json as "Roll-out
through the broker"). Exit 0 when every check holds, 1 otherwise (the JSON is written either way,
with "failures").
"""

import argparse
import calendar
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetkit  # noqa: E402

DEVICE = "board-1"
FLEET = "acme"
ONE_SHOTS = [15, 45, 90]
CHUNK = 65536   # fleet push's default --chunk-size


def rate_bytes(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(mbit|kbit|kb|mb|b)?", text.strip().lower())
    if not m:
        raise SystemExit("rollout: --rate %r: a number of bytes a second, or with mbit, kbit, kb, mb" % text)
    n = float(m.group(1))
    return int(n * {"mbit": 125_000, "kbit": 125, "kb": 1000, "mb": 1_000_000, "b": 1, None: 1}[m.group(2)])


def parse_at(text):
    """`2026-11-26T07:12:03.120Z` → seconds since the epoch."""
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?Z", text or "")
    if not m:
        return None
    g = [int(x) for x in m.groups()[:6]]
    return calendar.timegm((g[0], g[1], g[2], g[3], g[4], g[5], 0, 0, 0)) + float(m.group(7) or 0)


def disk_bytes(folder):
    total = 0
    for name in os.listdir(folder):
        try:
            st = os.stat(os.path.join(folder, name))
        except OSError:
            continue
        total += st.st_blocks * 512
    return total


class Run:
    def __init__(self, o):
        self.o = o
        self.dir = tempfile.mkdtemp(prefix="fp-rollout-")
        self.kids = fleetkit.Children(self.dir)
        self.board = self.kids.path(DEVICE)
        os.makedirs(self.board)
        self.stop = threading.Event()
        self.sha = None
        self.size = None
        self.t0 = None
        self.pushing = None
        self.load_highest = fleetkit.load_now()
        self.agent_hwm = 0            # the most of the agent processes' VmHWM since the push
        self.build_hwm_sampled = 0
        self.disk_peak = 0
        self.disk_peak_files = {}
        self.outage = []             # (from, to) epoch seconds the agent was down

    # Children.

    def start(self):
        self.broker, port, self.sock = fleetkit.start_broker(self.kids)
        self.events_path = fleetkit.start_consumer(self.kids, self.sock, "rollout-events")
        self.retained = fleetkit.Retained(self.kids, self.sock, ("status", "reported"))
        self.proxy = fleetkit.Proxy(self.kids, port, self.board)
        self.config = fleetkit.agent_config(self.board, DEVICE, self.proxy.port)
        self.start_agent()

    def start_agent(self):
        log = self.kids.path(DEVICE, "log")
        self.agent = fleetkit.start_agent(self.kids, self.o.bin, self.config, log)
        fleetkit.wait_answering("rollout", self.o.bin, [(DEVICE, self.agent, os.path.join(self.board, "control.sock"), log)])

    def log(self):
        return open(self.kids.path(DEVICE, "log"), errors="replace").read()

    def cli(self, args):
        return fleetkit.cli(self.o.bin, os.path.join(self.board, "control.sock"), args)

    def doc(self, kind):
        return self.retained.get(DEVICE, kind)

    def wait_online(self, timeout=120):
        end = time.time() + timeout
        while (self.doc("status") or {}).get("online") is not True:
            if time.time() > end:
                raise SystemExit("rollout: the board is not online after %d s:\n%s" % (timeout, self.log()[-3000:]))
            time.sleep(0.3)

    def add_requests(self):
        lines = ['{"id":"once-%d","content":{"title":"Once %d","interruptionLevel":"passive"},"trigger":{"interval":{"seconds":%d}}}'
                 % (s, s, s) for s in ONE_SHOTS]
        path = self.kids.path("requests.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        out = self.cli(["add", path])
        if out.returncode != 0:
            raise SystemExit("rollout: fencepost add: " + out.stderr)
        self.requests_added = time.time()
        self.ticks = {}      # id -> (seconds before the add, after it): due --every s after the agent took it
        threading.Thread(target=self.add_ticks, daemon=True).start()

    def add_ticks(self):
        """A one-shot due in --every seconds, added every --every seconds (a repeating interval is
        at least 60 s): deliveries all through the roll-out, and control requests in its turns."""
        path = self.kids.path("tick.json")
        k = 0
        while not self.stop.is_set():
            k += 1
            name = "tick-%d" % k
            with open(path, "w") as f:
                f.write('{"id":"%s","content":{"title":"Tick","interruptionLevel":"passive"},"trigger":{"interval":{"seconds":%d}}}\n'
                        % (name, self.o.every))
            before = time.time()
            try:
                ok = self.cli(["add", path]).returncode == 0
            except subprocess.TimeoutExpired:
                ok = False
            if ok:
                self.ticks[name] = (before, time.time())
            self.stop.wait(max(0.0, before + self.o.every - time.time()))

    # Sampling.

    def sample(self):
        while not self.stop.is_set():
            self.load_highest = max(self.load_highest, fleetkit.load_now())
            pid = self.agent.pid
            h = fleetkit.status_kb(pid, "VmHWM")
            if h:
                self.agent_hwm = max(self.agent_hwm, h)
            for c in fleetkit.children_of(pid):
                ch = fleetkit.status_kb(c, "VmHWM")
                if ch:
                    self.build_hwm_sampled = max(self.build_hwm_sampled, ch)
            d = disk_bytes(self.board)
            if d > self.disk_peak:
                self.disk_peak = d
                files = {}
                for name in os.listdir(self.board):
                    try:
                        files[name] = os.stat(os.path.join(self.board, name)).st_blocks * 512
                    except OSError:
                        pass
                self.disk_peak_files = files
            self.stop.wait(0.2)

    # The roll-out.

    def push(self):
        geojson = self.kids.path("zones.geojson")
        self.raw_size = fleetkit.write_circles(geojson, self.o.zones, self.o.seed)
        self.proxy.command("throttle %d" % self.o.rate)
        self.proxy.command("zero")
        with open("/proc/%d/clear_refs" % self.agent.pid, "w") as f:
            f.write("5")   # VmHWM from here on: the roll-out's, not the start-up's
        self.t0 = time.time()
        self.pushing = fleetkit.Push(self.o.bin, [DEVICE], geojson, FLEET, self.sock, 1800, self.t0, self.pushed)

    def pushed(self, pushed, seconds):
        self.size = pushed["size"]
        self.sha = pushed["sha256"]
        print("rollout: pushed %d zones (%d bytes GeoJSON, %d gzipped, sha256 %s…) in %.1f s"
              % (self.o.zones, self.raw_size, self.size, self.sha[:12], seconds), flush=True)

    def applied(self):
        r = self.doc("reported") or {}
        z = r.get("zoneSet") or {}
        return self.sha is not None and r.get("state") == "applied" and z.get("active") == self.sha and z.get("zones") == self.o.zones

    def progress(self):
        r = self.doc("reported") or {}
        p = (r.get("zoneSet") or {}).get("pending") or {}
        return r.get("state"), p.get("have", 0), p.get("of", 0)

    def roll_out(self):
        """Runs the faults at seeded points of the progress; returns seconds to applied or None."""
        rng = random.Random(self.o.seed * 7919 + 1)
        kinds = ["cut"] * self.o.cuts + ["kill"] * self.o.kill
        rng.shuffle(kinds)
        # Points spread over 10 %–90 % of the blob's bytes, one a slot, seeded within the slot.
        n = len(kinds)
        points = [0.1 + 0.8 * (i + rng.uniform(0.2, 0.8)) / n for i in range(n)]
        self.faults = []
        end = self.t0 + self.o.timeout
        last_line = 0
        while time.time() < end:
            if self.pushing.error:
                raise SystemExit("rollout: " + self.pushing.error)
            if self.applied():
                return time.time() - self.t0
            state, have, of = self.progress()
            now = time.time()
            # Progress by the bytes down the link (the board's `reported` counts chunks only now
            # and then): each fault once the link has carried its fraction of the blob since the
            # last, with a connection open for a cut.
            st = self.proxy.command("stats")
            if len(self.faults) < n and self.size and st["down"] >= points[len(self.faults)] * self.size and not self.applied():
                kind = kinds[len(self.faults)]
                if kind == "cut" and st["open"] > 0:
                    self.proxy.command("rst")
                    print("rollout: cut the link at %d of %d bytes (t=%.1f s; reported %s %d/%d)" % (st["down"], self.size, now - self.t0, state, have, of), flush=True)
                elif kind == "kill":
                    self.agent_hwm = max(self.agent_hwm, fleetkit.status_kb(self.agent.pid, "VmHWM") or 0)
                    self.agent.send_signal(signal.SIGKILL)
                    self.agent.wait()
                    down = time.time()
                    with open(self.kids.path(DEVICE, "log"), "a") as f:
                        f.write("--- killed ---\n")
                    print("rollout: killed the agent at %d of %d bytes (t=%.1f s; reported %s %d/%d)" % (st["down"], self.size, now - self.t0, state, have, of), flush=True)
                    self.start_agent()
                    self.outage.append((down, time.time()))
                else:
                    kind = None
                if kind:
                    self.faults.append({"kind": kind, "atBytes": st["down"], "t": round(now - self.t0, 1)})
            if now - last_line >= 15:
                last_line = now
                print("rollout: t=%.0f s: %s %d/%d chunks, %d bytes down, load %.1f" % (now - self.t0, state, have, of, st["down"], fleetkit.load_now()),
                      flush=True)
            time.sleep(0.1)
        return None

    def deliveries(self):
        """The ticks at the consumer: each due --every s after the agent took its add, which lies
        between the script's times before and after the call; lateness is `at` minus the latest
        possible due (a lower bound; the agent's own due → GPIO figure is at the end of its log).
        Ticks due while the agent was down (the kill) are delivered at its restart: not counted."""
        at, once, seqs = {}, set(), set()
        for e in fleetkit.read_events(self.events_path).get(DEVICE, {}).values():
            if isinstance(e.get("seq"), int):
                seqs.add(e["seq"])
            if e.get("type") != "delivery":
                continue
            r = str(e.get("request", ""))
            if r.startswith("tick-"):
                at[r] = parse_at(e.get("at"))
            elif r.startswith("once-"):
                once.add(r)
        late, missing, outage, worst = 0, [], 0, 0.0
        end = self.ended - 2 * self.o.every
        for name, (before, after) in self.ticks.items():
            due = after + self.o.every
            if any(lo - 1 <= due <= hi + 1 for lo, hi in self.outage):
                outage += 1
                continue
            if name not in at:
                if due < end:
                    missing.append(name)
                continue
            lateness = at[name] - due
            worst = max(worst, lateness)
            late += 1 if lateness > 0.05 else 0
        holes = [s for s in range(1, max(seqs) + 1) if s not in seqs] if seqs else []
        return {"ticks": len(self.ticks), "delivered": len(at), "late": late, "dueInOutage": outage, "missing": missing[:10],
                "worstLatenessSeconds": round(worst, 3), "oneShots": len(once), "seqHoles": holes[:10]}


def turns(log):
    """The slow-turn lines and the last run's summary in the agent's log."""
    slow = re.findall(r"loop turn took ([\d.]+) ms, ([\d.]+) ms of it on the CPU \(([^)]*)\): (.*)", log)
    summary = re.findall(r"longest loop turn: ([\d.]+) ms, ([\d.]+) ms on the CPU \((.*?)\); (\d+) turns over 50 ms, (\d+) with over 50 ms on the CPU"
                         r"(?:; the most CPU in one turn: ([\d.]+) ms of ([\d.]+) ms \((.*)\))?", log)
    return slow, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--zones", type=int, default=1_000_000)
    parser.add_argument("--rate", default="1mbit", help="the link each way: bytes a second, or 1mbit, 500kbit, 125kb")
    parser.add_argument("--cuts", type=int, default=3)
    parser.add_argument("--kill", type=int, default=1)
    parser.add_argument("--seed", type=int, default=None, help="the set's and the faults' seed (default: random, printed)")
    parser.add_argument("--every", type=int, default=5, help="seconds between ticks (one-shots added, each due this long after)")
    parser.add_argument("--bin", default=os.path.join(fleetkit.ROOT, ".build", "release"))
    parser.add_argument("--timeout", type=float, default=3600, help="seconds after the push until the board must have applied")
    parser.add_argument("--out", default=None, help="default: Benchmarks/results/rollout-ZONES.json")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs, state)")
    o = parser.parse_args()
    o.rate = rate_bytes(o.rate)
    if o.seed is None:
        o.seed = random.randrange(1, 1_000_000)
    o.out = o.out or os.path.join(fleetkit.RESULTS, "rollout-%d.json" % o.zones)
    print("rollout: seed %d (--seed %d repeats the set and the faults' points)" % (o.seed, o.seed), flush=True)
    fleetkit.require("rollout", ("mosquitto", "mosquitto_sub"), o.bin)
    started = time.gmtime()
    load_start = fleetkit.load_now()
    run = Run(o)
    failures = []
    result = {}
    try:
        run.start()
        run.wait_online()
        run.add_requests()
        threading.Thread(target=run.sample, daemon=True).start()
        run.push()
        seconds = run.roll_out()
        if seconds is None:
            failures.append("not applied after %.0f s: %s" % (o.timeout, json.dumps(run.doc("reported"))))
        else:
            print("rollout: applied %.1f s after the push began" % seconds, flush=True)
        # The one-shots fall due; a few more repeats after the swap.
        due = max(run.requests_added + max(ONE_SHOTS) + 5, time.time() + 3 * o.every)
        time.sleep(max(0, due - time.time()))
        stats = run.proxy.command("stats")
        run.stop.set()
        run.ended = time.time()
        time.sleep(o.every + 3)   # the last ticks and the consumer's last events
        alive = run.agent.poll() is None
        agent_hwm = max(run.agent_hwm, fleetkit.status_kb(run.agent.pid, "VmHWM") or 0)
        if alive:
            run.agent.terminate()
            run.agent.wait(30)
        log = run.log()
        slow, summaries = turns(log)
        slow_cpu = [float(c) for _, c, _, _ in slow if float(c) > 50]
        most_cpu = max([float(s[5]) for s in summaries if s[5]] + [float(c) for _, c, _, _ in slow] + [0])
        longest_wall = max([float(s[0]) for s in summaries] + [float(w) for w, _, _, _ in slow] + [0])
        build_peaks = [int(x) for x in re.findall(r"peak (\d+) kB resident", log)]
        rebuilt = re.findall(r"zone set rebuilt in ([\d.]+) s", log)
        verified = re.findall(r"downloaded and verified \((\d+) chunks, (\d+) bytes received, (\d+) bad, (\d+) asked again\)", log)
        latency = re.findall(r"latency due → GPIO over (\d+) deliveries: p50 ([\d.]+) µs, p99 ([\d.]+) µs, max ([\d.]+) µs", log)
        d = run.deliveries()
        size = run.size or 0
        ratio = stats["down"] / size if size else None
        if not alive:
            failures.append("the agent exited: " + log[-2000:])
        # The bound is 5 % of the blob. A reset costs by design the chunk it cut and what
        # the kernel's buffers held (a chunk is recorded only whole), so for a small blob the bound
        # is a chunk a fault when that is more (at 1M circles, ~20 MB, 4 faults are ~1.3 %).
        limit = max(0.05 * size, len(run.faults) * CHUNK)
        if seconds is not None and size and stats["down"] - size > limit:
            failures.append("%d bytes down the link for %d compressed (%.3f×): %d more, limit %d" % (stats["down"], size, ratio, stats["down"] - size, limit))
        if o.kill and "resuming with" not in log:
            failures.append("no resume after the kill")
        if len(run.faults) < o.cuts + o.kill:
            failures.append("only %d of %d faults happened (the download ended first)" % (len(run.faults), o.cuts + o.kill))
        for w, c, cause, what in slow:
            if float(c) > 50:
                failures.append("a loop turn took %s ms of CPU (%s ms wall): %s" % (c, w, what))
        if not summaries:
            failures.append("no summary of loop turns in the agent's log")
        if d["missing"]:
            failures.append("ticks not delivered: %s" % json.dumps(d))
        if d["oneShots"] < len(ONE_SHOTS) or d["seqHoles"]:
            failures.append("deliveries lost: %s" % json.dumps(d))
        files = run.disk_peak_files
        result = {
            "suite": "rollout", "harness": "script",
            "command": "Benchmarks/fleet/rollout.py --zones %d --rate %d --cuts %d --kill %d --seed %d --every %d"
                       % (o.zones, o.rate, o.cuts, o.kill, o.seed, o.every),
            "start": time.strftime("%Y-%m-%dT%H:%M:%SZ", started), "end": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "commit": fleetkit.commit(), "build": "release", "machine": fleetkit.machine(),
            "load": {"start": load_start, "end": fleetkit.load_now(), "highest": run.load_highest},
            "faults": run.faults, "diskPeakFiles": files, "deliveries": d,
            "slowTurns": [{"wallMs": float(w), "cpuMs": float(c), "what": what} for w, c, _, what in slow],
            "summaries": [list(s) for s in summaries], "failures": failures,
        }
        result["benchmarks"] = [{"name": "%d circles at %g Mbit/s, %d cuts, %d kill" % (o.zones, o.rate * 8 / 1e6, o.cuts, o.kill), "metrics": {
            "zones": {"value": o.zones, "unit": ""},
            "GeoJSON": {"value": run.raw_size, "unit": "bytes"},
            "gzipped (the blob)": {"value": size, "unit": "bytes"},
            "link": {"value": o.rate * 8 / 1e6, "unit": "Mbit/s"},
            "time to applied": {"value": round(seconds, 1) if seconds else None, "unit": "s"},
            "push (gzip, chunks, manifest)": {"value": round((run.pushing.seconds if run.pushing else 0) or 0, 1), "unit": "s"},
            "build → swapped": {"value": float(rebuilt[-1]) if rebuilt else None, "unit": "s"},
            "bytes down the link": {"value": stats["down"], "unit": "bytes"},
            "down / blob": {"value": round(ratio, 4) if ratio else None, "unit": "×"},
            "resets": {"value": stats["resets"], "unit": ""},
            "chunks asked again (after the kill)": {"value": int(verified[-1][3]) if verified else None, "unit": ""},
            "agent peak resident (VmHWM)": {"value": agent_hwm, "unit": "kB"},
            "build child peak resident": {"value": max(build_peaks) if build_peaks else None, "unit": "kB"},
            "disk at peak (blob + GeoJSON + compiled)": {"value": run.disk_peak // 1024, "unit": "kB"},
            "slowest turn, CPU": {"value": most_cpu, "unit": "ms"},
            "slowest turn, wall": {"value": longest_wall, "unit": "ms"},
            "turns over 50 ms of CPU": {"value": len(slow_cpu), "unit": ""},
            "turns over 50 ms wall": {"value": len(slow), "unit": ""},
            "one-shots added and delivered (one every %d s)" % o.every: {"value": d["delivered"], "unit": ""},
            "late by over 50 ms (lower bound)": {"value": d["late"], "unit": ""},
            "due → GPIO max (after the restart)": {"value": float(latency[-1][3]) / 1000 if latency else None, "unit": "ms"},
        }}]
    finally:
        run.stop.set()
        run.kids.close()
        run.kids.remove("rollout", o.keep)
    return fleetkit.finish("rollout", result, o.out, failures, o.seed)


if __name__ == "__main__":
    sys.exit(main())
