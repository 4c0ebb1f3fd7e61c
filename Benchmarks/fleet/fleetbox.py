#!/usr/bin/env python3
"""A fleet in a box: one mosquitto, N agents each behind its own throttling proxy, a zone set
rolled out to all of them through the broker while their links are cut at random.

    Benchmarks/fleet/fleetbox.py [--agents 50] [--zones 100000] [--seed N] [--cut-rate 1.0]
                                 [--throttle 125000] [--bin .build/release] [--timeout 900]
                                 [--out Benchmarks/results/fleetbox.json] [--keep]

Everything runs in a temporary folder on this machine (release builds of `fencepost` and
`fencepost-agent` from --bin):

- mosquitto with a TCP listener on 127.0.0.1 (the boards, through their proxies) and a Unix socket
  (the operator's `fencepost fleet push`, the event consumer, the observer of retained documents);
- one `Tests/FleetTests/fault_proxy.py` per agent, limited to --throttle bytes a second each way
  (1 Mbit/s by default, a cellular link). One proxy per board, not one shared: each board's bytes
  on the wire are that proxy's counters, and a cut (`cut BYTES rst`) takes down one board's link
  only, mid-chunk, as a cellular drop does;
- N `fencepost-agent`s (box-000 …), each with its own folder (state, config, control socket, log),
  `[fleet]` over its proxy, console GPIO, the demo drive (`board/demo/*.nmea`) replayed at real
  speed, and a few interval requests added with `fencepost add` (one-shots due during the roll-out
  and a repeating one): their deliveries travel over the same cut links as the set;
- a consumer (`mosquitto_sub`, persistent session, QoS 1) of every board's events.

Then: a seeded set of --zones circles (GeoJSON, as FleetRolloutTests writes it), one `fencepost
fleet push box-000 … --zones` for all boards (in the background: the cuts begin with it), and
cuts: a Poisson stream of --cut-rate cuts a second over the fleet, each an `rst` of the proxy of a
board still downloading, chosen by the seeded generator; every cut is printed with the board's
progress. (Not `cut BYTES`: the proxy reads ahead from the broker unthrottled and counts what it
read, so with a window of 16 chunks on the way a byte count past the blob's end never falls; a
reset drops what the proxy holds, mid-chunk, as a cellular drop does.) The run waits for every board's retained
`reported` to say `applied` with the set's hash and zone count, or fails after --timeout naming the
stragglers and their last `reported`.

It asserts: every board applied the right set; each agent's peak resident during the roll-out (VmHWM,
reset through /proc/PID/clear_refs just before the push, read just before the agent is stopped)
and its zone-set build child's (the child's own `peak N kB resident` line in the agent's log) within the figures the repository documents for the agent (see
`documented_limits`); no chunk sent twice beyond those in flight at a reset (each board's bytes
down within 2 % of the blob plus a window of 16 chunks a reset); no delivery lost (each board's due one-shots arrived at the consumer, its
event `seq` without holes). The agents schedule their builds themselves (each starts its child when
its download has verified); the run samples how many build children ran at once.

Writes a script-suite JSON (Benchmarks/report renders it as "Fleet in a box") to --out, with each
board's figures under "boards". Exit 0 when all assertions hold, 1 otherwise (the JSON is written
either way, with "failures").
"""

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetkit  # noqa: E402
from fleetkit import RESULTS, ROOT, children_of, load_now, status_kb  # noqa: E402

FLEET = "box"
# One-shot interval requests each board gets (seconds after they are added), and a repeating one.
ONE_SHOTS = [10, 20, 35, 50, 70, 90, 120]
REPEAT_SECONDS = 60


def documented_limits():
    """The agent's own figures, from Benchmarks/results (the tables of Benchmarks/README.md):

    - link_up: the agent's resident memory idle with the fleet link up (fleet-agent.json,
      agent.rssLinkUpKiB); busy: with 100 zones, a fix every 50 ms and a delivery a second
      (agent-measure.json). The agent's limit during a roll-out is the larger of the two plus what
      the roll-out adds by design (docs/fleet.md): the window of 16 chunks of at most 64 KiB, the
      read-back check's 1 MiB a turn, and the new set's file, which the agent maps and checks
      (every page may be resident once; the file's size is read from the board's state folder).
    - build_1m: the 1M-circle build child's peak resident (agent-measure.json, "peak RSS while
      building"): the build child of a smaller set must stay under it (a loose ceiling: the
      repository documents no build figure at 100k; the run reports the margin).
    """
    def load(name):
        path = os.path.join(RESULTS, name)
        if not os.path.exists(path):
            raise SystemExit("fleetbox: %s is missing (the documented figures come from it)" % path)
        with open(path) as f:
            return json.load(f)
    fleet = load("fleet-agent.json")
    measure = load("agent-measure.json")
    def metric(case, name):
        for b in measure["benchmarks"]:
            if re.search(case, b["name"]):
                return b["metrics"][name]["value"]
        raise SystemExit("fleetbox: agent-measure.json has no %s / %s" % (case, name))
    link_up = fleet["agent"]["rssLinkUpKiB"]
    busy = metric(r"^busy", "RSS after 120 s")
    build_1m = metric(r"circle zones$", "peak RSS while building")
    return {"link_up": link_up, "busy": busy, "build_1m": build_1m}


class Box:
    def __init__(self, options):
        self.o = options
        self.dir = tempfile.mkdtemp(prefix="fp-fleetbox-")
        self.kids = fleetkit.Children(self.dir)
        self.lock = threading.Lock()
        self.applied_at = {}    # device -> seconds after the push
        self.t0 = None
        self.stop_sampling = threading.Event()
        self.load_highest = 0.0
        self.max_builds = 0
        self.build_peak_sampled = {}
        self.sha = None
        self.pushing = None

    def path(self, *names):
        return self.kids.path(*names)

    def spawn(self, args, output, **kw):
        return self.kids.spawn(args, output, **kw)

    def close(self):
        self.kids.close()
        self.kids.remove("fleetbox", self.o.keep)

    # The broker, the consumer, the observer.

    def start_broker(self):
        self.broker, self.port, self.sock = fleetkit.start_broker(self.kids)

    def start_consumer(self):
        self.events_path = fleetkit.start_consumer(self.kids, self.sock, "fleetbox-events")

    def start_observer(self):
        """Follows every board's retained status, reported and health."""
        self.retained = fleetkit.Retained(self.kids, self.sock, on_message=self.observed)

    def observed(self, device, kind, doc):
        with self.lock:
            if kind == "reported" and self.t0 is not None and device not in self.applied_at and self.is_applied(doc):
                self.applied_at[device] = time.time() - self.t0

    def doc(self, device, kind):
        return self.retained.get(device, kind)

    def is_applied(self, doc):
        """Applied with a set of the zone count pushed (the hash is checked after the push has
        named it: a board may apply before `fleet push` has returned)."""
        z = (doc or {}).get("zoneSet") or {}
        return (doc or {}).get("state") == "applied" and z.get("zones") == self.o.zones and (self.sha is None or z.get("active") == self.sha)

    # Proxies and agents.

    def start_proxies(self):
        folders = [self.path("box-%03d" % i) for i in range(self.o.agents)]
        for d in folders:
            os.makedirs(d)
        self.proxies = fleetkit.start_proxies(self.kids, self.port, folders)
        for px in self.proxies:
            px.command("throttle %d" % self.o.throttle)

    def start_agents(self):
        self.agents = []
        for i in range(self.o.agents):
            name = "box-%03d" % i
            d = self.path(name)
            config = fleetkit.agent_config(d, name, self.proxies[i].port)
            p = fleetkit.start_agent(self.kids, self.o.bin, config, os.path.join(d, "log"))
            self.agents.append({"name": name, "dir": d, "process": p, "socket": os.path.join(d, "control.sock"),
                                "log": os.path.join(d, "log"), "proxy": self.proxies[i]})
        fleetkit.wait_answering("fleetbox", self.o.bin, [(a["name"], a["process"], a["socket"], a["log"]) for a in self.agents])

    def cli(self, agent, args):
        return fleetkit.cli(self.o.bin, agent["socket"], args)

    def add_requests(self):
        lines = ['{"id":"once-%d","content":{"title":"Once %d","interruptionLevel":"passive"},"trigger":{"interval":{"seconds":%d}}}'
                 % (s, s, s) for s in ONE_SHOTS]
        lines.append('{"id":"every-minute","content":{"title":"Tick","interruptionLevel":"passive"},'
                     '"trigger":{"interval":{"seconds":%d,"repeats":true}}}' % REPEAT_SECONDS)
        path = self.path("requests.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        for a in self.agents:
            out = self.cli(a, ["add", path])
            if out.returncode != 0:
                raise SystemExit("fleetbox: fencepost add on %s: %s" % (a["name"], out.stderr))
        self.requests_added = time.time()

    def wait_online(self, timeout=120):
        end = time.time() + timeout
        while time.time() < end:
            offline = [a["name"] for a in self.agents if ((self.doc(a["name"], "status") or {}).get("online") is not True)]
            if not offline:
                return
            time.sleep(0.5)
        raise SystemExit("fleetbox: not online after %d s: %s" % (timeout, " ".join(offline)))

    # Sampling: load, build children, the broker.

    def sample(self):
        while not self.stop_sampling.is_set():
            self.load_highest = max(self.load_highest, load_now())
            builds = 0
            for a in self.agents:
                for c in children_of(a["process"].pid):
                    builds += 1
                    hwm = status_kb(c, "VmHWM")
                    if hwm:
                        self.build_peak_sampled[a["name"]] = max(self.build_peak_sampled.get(a["name"], 0), hwm)
            self.max_builds = max(self.max_builds, builds)
            self.stop_sampling.wait(0.1)

    # The roll-out.

    def push(self):
        zones = self.path("zones.geojson")
        self.raw_size = fleetkit.write_circles(zones, self.o.zones, self.o.seed)
        for px in self.proxies:
            px.command("zero")
        self.t0 = time.time()
        self.pushing = fleetkit.Push(self.o.bin, [a["name"] for a in self.agents], zones, FLEET, self.sock, 600, self.t0, self.pushed)

    def pushed(self, pushed, seconds):
        self.sha = pushed["sha256"]
        self.size = pushed["size"]
        self.chunk_size = 65536   # fleet push's default --chunk-size
        print("fleetbox: pushed %d zones (%d bytes GeoJSON, %d gzipped, sha256 %s…) to %d boards in %.1f s"
              % (self.o.zones, self.raw_size, self.size, self.sha[:12], self.o.agents, seconds), flush=True)

    def roll_out(self):
        rng = random.Random(self.o.seed * 7919 + 1)
        self.cuts = []
        end = self.t0 + self.o.timeout
        next_cut = time.time() + (rng.expovariate(self.o.cut_rate) if self.o.cut_rate > 0 else 1e9)
        last_line = 0
        while time.time() < end:
            if self.pushing.error:
                raise SystemExit("fleetbox: " + self.pushing.error)
            with self.lock:
                done = len(self.applied_at) if self.sha else 0
            states = {}
            for a in self.agents:
                s = (self.doc(a["name"], "reported") or {}).get("state", "?")
                states[s] = states.get(s, 0) + 1
            if done == len(self.agents):
                return True
            now = time.time()
            if now >= next_cut:
                downloading = [a for a in self.agents if (self.doc(a["name"], "reported") or {}).get("state") == "downloading"]
                if downloading:
                    a = rng.choice(downloading)
                    r = a["proxy"].command("rst")
                    self.cuts.append({"at": round(now - self.t0, 2), "board": a["name"], "reset": r.get("resets")})
                    print("fleetbox: cut %s (t=%.1f s, %s)" % (a["name"], now - self.t0, (self.doc(a["name"], "reported") or {}).get("zoneSet", {}).get("pending")), flush=True)
                next_cut = now + rng.expovariate(self.o.cut_rate)
            if now - last_line >= 10:
                last_line = now
                print("fleetbox: t=%.0f s: %d/%d applied; states %s; load %.2f" % (now - self.t0, done, len(self.agents),
                      json.dumps(states, sort_keys=True), load_now()), flush=True)
            time.sleep(0.1)
        return False

    # Deliveries.

    def events(self):
        """Per device: {id: event} of the consumer's events (duplicates dropped by id)."""
        return fleetkit.read_events(self.events_path)

    def wait_deliveries(self, timeout=120):
        """Waits until every due one-shot of every board is at the consumer; returns the per-board check."""
        due = self.requests_added + max(ONE_SHOTS) + 5
        if time.time() < due:
            print("fleetbox: waiting %.0f s for the last one-shot to fall due" % (due - time.time()), flush=True)
            time.sleep(due - time.time())
        end = time.time() + timeout
        while True:
            events = self.events()
            result = {}
            for a in self.agents:
                evs = [e for e in events.get(a["name"], {}).values()]
                ones = {e.get("request") for e in evs if e.get("type") == "delivery" and str(e.get("request", "")).startswith("once-")}
                seqs = sorted(e.get("seq") for e in evs if isinstance(e.get("seq"), int))
                holes = [s for s in range(1, seqs[-1] + 1) if s not in set(seqs)] if seqs else []
                result[a["name"]] = {"oneShots": len(ones), "events": len(evs), "holes": holes[:10],
                                     "ticks": sum(1 for e in evs if e.get("request") == "every-minute")}
            missing = [n for n, r in result.items() if r["oneShots"] < len(ONE_SHOTS) or r["holes"]]
            if not missing or time.time() > end:
                return result, missing
            time.sleep(1)

    # Figures.

    def agent_figures(self):
        out = {}
        for a in self.agents:
            log = open(a["log"], errors="replace").read()
            peaks = [int(m) for m in re.findall(r"peak (\d+) kB resident", log)]
            rebuilt = re.findall(r"zone set rebuilt in ([\d.]+) s", log)
            stats = a["proxy"].command("stats")
            out[a["name"]] = {
                "appliedSeconds": round(self.applied_at.get(a["name"], -1), 2),
                "down": stats["down"], "up": stats["up"], "resets": stats["resets"], "accepted": stats["accepted"],
                "vmHWMKiB": status_kb(a["process"].pid, "VmHWM"),
                "vmRSSKiB": status_kb(a["process"].pid, "VmRSS"),
                "buildPeakKiB": max(peaks) if peaks else None,
                "buildPeakSampledKiB": self.build_peak_sampled.get(a["name"]),
                "buildSeconds": float(rebuilt[-1]) if rebuilt else None,
                "chunkHashFailures": len(re.findall(r"arrived with a wrong SHA-256", log)),
                "resumes": len(re.findall(r"resuming with", log)),
                "slowTurns": sum(1 for l in log.splitlines() if "loop turn took" in l),
                "slowTurnsOwnWork": sum(1 for l in log.splitlines() if "loop turn took" in l and "(the agent's own work)" in l),
                "alive": a["process"].poll() is None,
                "zoneSetFileKiB": os.path.getsize(os.path.join(a["dir"], "state.sqlite.zones")) // 1024
                                  if os.path.exists(os.path.join(a["dir"], "state.sqlite.zones")) else None,
            }
        return out


def spread(values):
    v = sorted(x for x in values if x is not None)
    if not v:
        return None, None, None
    return v[0], statistics.median(v), v[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--zones", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=None, help="the set's and the cuts' seed (default: random, printed)")
    parser.add_argument("--cut-rate", type=float, default=1.0, help="cuts a second over the fleet, while any board downloads")
    parser.add_argument("--throttle", type=int, default=125_000, help="bytes a second each way per board link (default 1 Mbit/s)")
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"),
                        help="the folder of fencepost and fencepost-agent, built as board/install builds them: "
                             "swift build -c release --static-swift-stdlib (the documented figures are that build's)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds after the push until every board must have applied")
    parser.add_argument("--out", default=os.path.join(RESULTS, "fleetbox.json"))
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs, states)")
    o = parser.parse_args()
    if o.seed is None:
        o.seed = random.randrange(1, 1_000_000)
    print("fleetbox: seed %d (--seed %d repeats the set and the cuts' choices)" % (o.seed, o.seed), flush=True)
    fleetkit.require("fleetbox", ("mosquitto", "mosquitto_sub"), o.bin)
    # The limits below are the figures of a build with the Swift runtime linked in (board/install's);
    # a build that maps libswiftCore.so is ~2 MB larger resident and would fail them for that alone.
    with open(os.path.join(o.bin, "fencepost-agent"), "rb") as f:
        if b"libswiftCore.so" in f.read():
            raise SystemExit("fleetbox: %s links the Swift runtime dynamically (libswiftCore.so); the documented figures it is held to "
                             "are those of board/install's build: swift build -c release --static-swift-stdlib, then run again"
                             % os.path.join(o.bin, "fencepost-agent"))
    limits = documented_limits()
    started = time.gmtime()
    load_start = load_now()
    box = Box(o)
    failures = []
    result = {}
    sampler = None
    try:
        box.start_broker()
        box.start_consumer()
        box.start_observer()
        box.start_proxies()
        box.start_agents()
        box.wait_online()
        box.add_requests()
        print("fleetbox: %d agents online, each with %d one-shots and a repeating request" % (o.agents, len(ONE_SHOTS)), flush=True)
        sampler = threading.Thread(target=box.sample, daemon=True)
        sampler.start()
        base_rss = {a["name"]: status_kb(a["process"].pid, "VmRSS") for a in box.agents}
        start_hwm = {a["name"]: status_kb(a["process"].pid, "VmHWM") for a in box.agents}
        # The peak from here on: the start-up's (the executable's mappings before the agent
        # drops them) is not the roll-out's. Writing 5 to clear_refs resets VmHWM to VmRSS.
        for a in box.agents:
            with open("/proc/%d/clear_refs" % a["process"].pid, "w") as f:
                f.write("5")
        box.push()
        all_applied = box.roll_out()
        total = time.time() - box.t0
        if not all_applied:
            stragglers = [a["name"] for a in box.agents if a["name"] not in box.applied_at]
            for n in stragglers:
                failures.append("%s not applied after %.0f s: %s" % (n, o.timeout, json.dumps(box.doc(n, "reported"))))
        else:
            print("fleetbox: all %d boards applied in %.1f s after the push" % (o.agents, total), flush=True)
        for a in box.agents:
            r = box.doc(a["name"], "reported") or {}
            if a["name"] in box.applied_at and not box.is_applied(r):
                failures.append("%s: reported %s, not set %s… with %d zones" % (a["name"], json.dumps(r), box.sha[:12], o.zones))
        deliveries, missing = box.wait_deliveries()
        for n in missing:
            failures.append("%s: deliveries lost: %s" % (n, json.dumps(deliveries[n])))
        # The roll-out is over: settle the links' last bytes, then the figures.
        time.sleep(2)
        box.stop_sampling.set()
        boards = box.agent_figures()
        for n, b in boards.items():
            b["baseRSSKiB"] = base_rss.get(n)
            b["startUpVmHWMKiB"] = start_hwm.get(n)
            b["deliveries"] = deliveries[n]
        broker_hwm = status_kb(box.broker.pid, "VmHWM")
        # Limits: see documented_limits().
        build_limit = limits["build_1m"]
        for n, b in boards.items():
            b["limitKiB"] = agent_limit = max(limits["link_up"], limits["busy"]) + 16 * 64 + 1024 + (b["zoneSetFileKiB"] or 0)
            if not b["alive"]:
                failures.append("%s: the agent exited: %s" % (n, open(box.path(n, "log"), errors="replace").read()[-1500:]))
            if b["vmHWMKiB"] is None or b["vmHWMKiB"] > agent_limit:
                failures.append("%s: agent peak resident %s kB over its limit %d kB" % (n, b["vmHWMKiB"], agent_limit))
            # No chunk comes twice beyond those in flight at a reset (the window: 16 chunks).
            resent = b["down"] - box.size * 1.02
            if resent > b["resets"] * 16 * (box.chunk_size + 64):
                failures.append("%s: %d bytes down for a blob of %d with %d resets: more than the window again at each"
                                % (n, b["down"], box.size, b["resets"]))
            if b["buildPeakKiB"] is None and n in box.applied_at:
                failures.append("%s: no build child peak in its log" % n)
            elif b["buildPeakKiB"] is not None and b["buildPeakKiB"] > build_limit:
                failures.append("%s: build child peak %d kB over %d kB" % (n, b["buildPeakKiB"], build_limit))
        applied = sorted(box.applied_at.values())
        def at_fraction(f):
            k = max(1, int(round(f * len(box.agents))))
            return round(applied[k - 1], 1) if len(applied) >= k else None
        down = [b["down"] for b in boards.values()]
        hwm = [b["vmHWMKiB"] for b in boards.values()]
        build = [b["buildPeakKiB"] for b in boards.values()]
        ratio = [b["down"] / box.size for b in boards.values()]
        result = {
            "suite": "fleetbox", "harness": "script",
            "command": "Benchmarks/fleet/fleetbox.py --agents %d --zones %d --seed %d --cut-rate %g --throttle %d"
                       % (o.agents, o.zones, o.seed, o.cut_rate, o.throttle),
            "start": time.strftime("%Y-%m-%dT%H:%M:%SZ", started), "end": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "commit": fleetkit.commit(), "build": "release", "machine": fleetkit.machine(),
            "load": {"start": load_start, "end": load_now(), "highest": box.load_highest},
            "limits": {"agentVmHWMKiB": max(b["limitKiB"] for b in boards.values()), "buildChildKiB": build_limit, "from": limits},
            "cuts": box.cuts, "boards": boards, "failures": failures,
        }
        lo, med, hi = spread(hwm)
        blo, bmed, bhi = spread(build)
        dlo, dmed, dhi = spread(down)
        rlo, rmed, rhi = spread(ratio)
        result["benchmarks"] = [
            {"name": "the roll-out", "metrics": {
                "boards": {"value": o.agents, "unit": ""},
                "zones": {"value": o.zones, "unit": ""},
                "GeoJSON": {"value": box.raw_size, "unit": "bytes"},
                "gzipped (the blob)": {"value": box.size, "unit": "bytes"},
                "link per board": {"value": o.throttle * 8 / 1e6, "unit": "Mbit/s"},
                "random cuts (seeded)": {"value": len(box.cuts), "unit": ""},
                "push (gzip, chunks, manifest, desired)": {"value": round(box.pushing.seconds, 1), "unit": "s"},
            }},
            {"name": "time after the push", "metrics": {
                "50 % applied": {"value": at_fraction(0.5), "unit": "s"},
                "90 % applied": {"value": at_fraction(0.9), "unit": "s"},
                "100 % applied": {"value": at_fraction(1.0), "unit": "s"},
            }},
            {"name": "bytes on the wire per board (down)", "metrics": {
                "min": {"value": dlo, "unit": "bytes"}, "median": {"value": dmed, "unit": "bytes"}, "max": {"value": dhi, "unit": "bytes"},
                "max / blob": {"value": round(rhi, 3) if rhi else None, "unit": "×"},
                "up, median": {"value": spread([b["up"] for b in boards.values()])[1], "unit": "bytes"},
            }},
            {"name": "peak resident (VmHWM)", "metrics": {
                "broker": {"value": broker_hwm, "unit": "kB"},
                "agent, min": {"value": lo, "unit": "kB"}, "agent, median": {"value": med, "unit": "kB"}, "agent, max": {"value": hi, "unit": "kB"},
                "agent limit (documented figures + the set's file)": {"value": max(b["limitKiB"] for b in boards.values()), "unit": "kB"},
                "build child, median": {"value": bmed, "unit": "kB"}, "build child, max": {"value": bhi, "unit": "kB"},
                "build child ceiling (the 1M build's peak)": {"value": build_limit, "unit": "kB"},
            }},
            {"name": "builds", "metrics": {
                "at once, most (sampled every 0.1 s)": {"value": box.max_builds, "unit": ""},
                "build → swapped, median": {"value": spread([b["buildSeconds"] for b in boards.values()])[1], "unit": "s"},
                "build → swapped, max": {"value": spread([b["buildSeconds"] for b in boards.values()])[2], "unit": "s"},
            }},
            {"name": "deliveries", "metrics": {
                "one-shots due": {"value": o.agents * len(ONE_SHOTS), "unit": ""},
                "arrived": {"value": sum(d["deliveries"]["oneShots"] for d in boards.values()), "unit": ""},
                "boards with a seq hole": {"value": sum(1 for d in boards.values() if d["deliveries"]["holes"]), "unit": ""},
                "loop turns over 50 ms (all boards)": {"value": sum(b["slowTurns"] for b in boards.values()), "unit": ""},
                "of them the agent's own work": {"value": sum(b["slowTurnsOwnWork"] for b in boards.values()), "unit": ""},
            }},
            {"name": "faults seen", "metrics": {
                "resets (all boards)": {"value": sum(b["resets"] for b in boards.values()), "unit": ""},
                "resumes": {"value": sum(b["resumes"] for b in boards.values()), "unit": ""},
                "chunks with a wrong hash": {"value": sum(b["chunkHashFailures"] for b in boards.values()), "unit": ""},
            }},
        ]
    finally:
        box.stop_sampling.set()
        box.close()
    return fleetkit.finish("fleetbox", result, o.out, failures, o.seed)


if __name__ == "__main__":
    sys.exit(main())
