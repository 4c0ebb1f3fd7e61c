#!/bin/sh
# The long form of the fault and soak harness (the short form is
# Tests/FencepostCLITests/ControlAbuseTests.swift, run by `swift test`).
#
#   Benchmarks/agent/soak.sh [bin-dir]          default .build/debug (or .build/release)
#   DURATION=1800 SEED=7 Benchmarks/agent/soak.sh .build/release
#
# Two parts, both on the real executables:
#
# 1. A month in virtual time: `fencepost simulate --state` runs the engine over its SQLite file
#    from the first to the last second of a 30-day month (minutely, hourly and daily calendar
#    triggers and an hourly interval), killed and resumed at seeded points; every expected fire
#    must be delivered exactly once (checked against a brute-force list of the fire times).
#
# 2. The real agent (`fencepost-agent`, console GPIO, the demo drive replayed in a loop, 1,000
#    zones, minutely triggers) for DURATION seconds of wall time under the month's abuse
#    compressed: a fresh `status` every 0.5 s (its latency recorded), bursts of 1,000 concurrent
#    clients (some pipelining `status` without reading, some holding partial lines, some
#    sending malformed or oversized lines), an EMFILE storm (the agent restarted once under
#    `ulimit -n 64` and flooded), SIGHUP storms, a SIGTERM during the start-up apply, SIGKILL
#    at seeded points (each followed by a restart). It reports resident memory and open
#    descriptors after start and at the end, the fresh-status latency (max, p99), the CPU used
#    while idle between requests, every delivery identifier (request/generation/fire) seen
#    exactly once with no gap, and the longest loop turn the agent logged.
#
# The agent's engine reads the real clocks (no virtual time inside the daemon), so part 2 runs in
# wall time; part 1 is where a month of fires is checked. Everything runs in a temporary folder.
set -eu
BIN=${1:-.build/debug}
DURATION=${DURATION:-600}
SEED=${SEED:-20261123}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
exec env PYTHONPATH="$(dirname "$0")" python3 - "$BIN" "$DURATION" "$SEED" "$ROOT" <<'PY'
import json, os, random, resource, signal, socket, subprocess, sys, tempfile, threading, time, re
from datetime import datetime, timedelta, timezone
import agent_rpc

BIN, DURATION, SEED, ROOT = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = random.Random(SEED)
DIR = tempfile.mkdtemp(prefix="fp-soak-")
FENCEPOST, AGENT = os.path.join(BIN, "fencepost"), os.path.join(BIN, "fencepost-agent")
resource.setrlimit(resource.RLIMIT_NOFILE, (8192, max(8192, resource.getrlimit(resource.RLIMIT_NOFILE)[1])))
print(f"soak: seed {SEED}, folder {DIR}, binaries {BIN}, {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, load {os.getloadavg()[0]:.2f}")
failures = []

def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok: failures.append(what)

# ---------------------------------------------------------------- part 1: a month, virtual time
def month():
    start = datetime(2026, 3, 1, tzinfo=timezone.utc)
    end = start + timedelta(days=30)
    reqs = [
        {"id": "minutely", "content": {"title": "m"}, "trigger": {"calendar": {"match": {"second": 0}, "repeats": True}}},
        {"id": "hourly", "content": {"title": "h"}, "trigger": {"calendar": {"match": {"minute": 17, "second": 0}, "repeats": True}}},
        {"id": "daily", "content": {"title": "d"}, "trigger": {"calendar": {"match": {"hour": 7, "minute": 0}, "repeats": True}}},
        {"id": "every-hour", "content": {"title": "i"}, "trigger": {"interval": {"seconds": 3600, "repeats": True}}},
    ]
    path = os.path.join(DIR, "month.jsonl")
    with open(path, "w") as f:
        for r in reqs: f.write(json.dumps(r) + "\n")
    expected = {"minutely": 30 * 24 * 60, "hourly": 30 * 24, "daily": 30, "every-hour": 30 * 24}
    state = os.path.join(DIR, "month.sqlite")
    # Kill and resume at seeded points: each run covers a slice of the month.
    cuts = sorted(rng.sample(range(1, 30 * 24), 5))
    bounds = [start] + [start + timedelta(hours=h) for h in cuts] + [end]
    seen = {}
    t0 = time.time()
    maxrss = 0
    for a, b in zip(bounds, bounds[1:]):
        # Each run's own peak (wait4), not RUSAGE_CHILDREN: that is the largest of every child
        # waited for so far, agent runs included.
        with open(os.path.join(DIR, "month.out"), "w+") as out, open(os.path.join(DIR, "month.err"), "w+") as err:
            child = subprocess.Popen([FENCEPOST, "simulate", "--requests", path, "--state", state, "--resume-gap", "0",
                                      "--start", a.strftime("%Y-%m-%dT%H:%M:%SZ"), "--end", b.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                      "--tz", "UTC", "--jsonl"], stdout=out, stderr=err)
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            maxrss = max(maxrss, usage.ru_maxrss)
            out.seek(0); err.seek(0)
            stdout, stderr = out.read(), err.read()
        if child.returncode != 0:
            check(False, f"month: simulate {a}..{b} exited {child.returncode}: {stderr[-500:]}")
            return
        for line in stdout.splitlines():
            e = json.loads(line)
            if e.get("event") in ("delivered", "late"):
                seen.setdefault(e["id"], []).append(e["t"])
    took = time.time() - t0
    for rid, n in expected.items():
        times = seen.get(rid, [])
        check(len(times) == len(set(times)), f"month: {rid}: no fire delivered twice ({len(times)} deliveries)")
        # The interval starts at the first run's start; its last fire may fall on the end instant.
        check(abs(len(set(times)) - n) <= (1 if rid == "every-hour" else 0), f"month: {rid}: {len(set(times))} fires, expected {n}")
    print(f"month: 30 days in virtual time in {took:.1f} s over {len(bounds) - 1} runs (killed and resumed at hours {cuts}); "
          f"max RSS of a run {maxrss // 1024} MB")
    # The same month in one process, its resident memory and descriptors sampled every 0.2 s:
    # drift shows as the later samples above the earlier ones (the engine and store of the agent,
    # over a month of fires; the agent's own loop runs on the real clocks, part 2). With the
    # agent's delivered cap: a simulation keeps every delivery by default, and grows by design.
    with open(os.path.join(DIR, "whole.out"), "w") as out:
        child = subprocess.Popen([FENCEPOST, "simulate", "--requests", path, "--state", os.path.join(DIR, "whole.sqlite"),
                                  "--start", start.strftime("%Y-%m-%dT%H:%M:%SZ"), "--end", end.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                  "--tz", "UTC", "--jsonl", "--delivered-cap", "1000"], stdout=out, stderr=subprocess.DEVNULL)
        samples = []
        while child.poll() is None:
            try:
                with open(f"/proc/{child.pid}/status") as f:
                    kb = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
                samples.append((kb, len(os.listdir(f"/proc/{child.pid}/fd"))))
            except (OSError, StopIteration):
                pass
            time.sleep(0.2)
    if len(samples) >= 10:
        tenth = max(1, len(samples) // 10)
        first, last = samples[tenth], samples[-1]
        check(last[1] <= first[1], f"month in one process: descriptors {first[1]} early, {last[1]} at the end")
        at = lambda q: samples[min(len(samples) - 1, int(len(samples) * q))][0]
        print(f"month in one process: {len(samples)} samples; RSS at 10/25/50/75/90 % of the run and the end: "
              f"{at(0.1)}, {at(0.25)}, {at(0.5)}, {at(0.75)}, {at(0.9)}, {last[0]} kB; descriptors {first[1]} → {last[1]}")
    else:
        print(f"month in one process: too short to sample ({len(samples)} samples)")

# ---------------------------------------------------------------- part 2: the real agent
def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for l in f:
            if l.startswith("VmRSS:"): return int(l.split()[1])
def fds(pid): return len(os.listdir(f"/proc/{pid}/fd"))
def cpu(pid):
    with open(f"/proc/{pid}/stat") as f: parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")

A = os.path.join(DIR, "agent"); os.makedirs(A)
SOCK = os.path.join(A, "control.sock")
with open(os.path.join(A, "zones.geojson"), "w") as f:
    f.write('{"type":"FeatureCollection","features":[' + ",".join(
        json.dumps({"type": "Feature", "id": f"z{i}", "geometry": {"type": "Point", "coordinates": [6.7 + rng.random() * 0.1, 51.2 + rng.random() * 0.05]},
                    "properties": {"radius": 50 + rng.random() * 200}}) for i in range(1000)) + "]}")
def write_config(extra=""):
    with open(os.path.join(A, "fencepost.toml"), "w") as f:
        f.write(f'state = "{A}/state.sqlite"\nclock_trust = "always"\ntime_zone = "UTC"\nzones = "zones.geojson"\n'
                f'[engine]\nlocation_cap = 10000\npending_cap = 100\n'
                f'[gps]\nsource = "replay"\nfile = "{ROOT}/board/demo/duesseldorf-2009-07-07.nmea"\nspeed = 20\nexit_at_end = false\n'
                f'[gpio]\nbackend = "console"\n[gpio.buzzer]\npin = 18\n[gpio.led]\npin = 23\n'
                f'[socket]\npath = "{SOCK}"\nmode = 0o600\n{extra}\n')
        for k in range(5):
            f.write(f'[[request]]\nid = "tick-{k}"\ncontent = {{ title = "Tick {k}", sound = "default" }}\n'
                    f'trigger = {{ calendar = {{ match = {{ second = {k * 12} }}, repeats = true }} }}\n\n')
write_config()

runs = []
def start(ulimit=None):
    n = len(runs)
    err = open(os.path.join(A, f"err-{n}"), "w"); out = open(os.path.join(A, f"out-{n}"), "w")
    pre = (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (ulimit, ulimit))) if ulimit else None
    p = subprocess.Popen([AGENT, "--config", os.path.join(A, "fencepost.toml")], stdout=out, stderr=err, preexec_fn=pre)
    runs.append((p, os.path.join(A, f"err-{n}")))
    return p
def log(n=-1):
    with open(runs[n][1], errors="replace") as f: return f.read()
def wait_log(text, timeout=120, n=-1):
    end = time.time() + timeout
    while time.time() < end:
        if text in log(n): return True
        time.sleep(0.1)
    return False
def stop(p, sig=signal.SIGTERM):
    p.send_signal(sig)
    try: return p.wait(20)
    except subprocess.TimeoutExpired: p.kill(); return p.wait()

def rpc(method, params=None, timeout=2.0): return agent_rpc.call(SOCK, method, params, timeout)[0]

# A SIGTERM during the start-up apply, then the agent that stays.
p = start(); time.sleep(0.3); code = stop(p)
check(code == 0, f"SIGTERM during the start-up apply: exit {code}")
p = start()
check(wait_log("start-up memory released"), "the agent started")
time.sleep(2)
pid = p.pid
start_rss, start_fds = rss(pid), fds(pid)
print(f"agent after start: RSS {start_rss} kB, {start_fds} descriptors")

latencies, stop_all = [], threading.Event()
def poller():
    while not stop_all.is_set():
        d = rpc("status")
        latencies.append(d if d is not None else float("inf"))
        time.sleep(0.5)

def burst(n=1000):
    """n concurrent clients: 10 % pipeline status without reading, 10 % hold partial lines,
    5 % send junk or oversized lines, the rest connect and wait; held 3 s, then dropped."""
    held = []
    status_line = (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "status", "params": {}}) + "\n").encode()
    for i in range(n):
        s = socket.socket(socket.AF_UNIX); s.setblocking(False)
        try: s.connect(SOCK)
        except OSError: s.close(); continue
        r = rng.random()
        try:
            if r < 0.10: s.send(status_line * 2000)
            elif r < 0.20: s.send(b"x" * 60000)
            elif r < 0.23: s.send(b"{not json\n" * 10)
            elif r < 0.25: s.send(b"y" * 70000 + b"\n")
        except OSError: pass
        held.append(s)
    time.sleep(3)
    for s in held: s.close()

threading.Thread(target=poller, daemon=True).start()
month_thread = threading.Thread(target=month); month_thread.start()
t_end = time.time() + DURATION
kill_points = sorted(rng.uniform(0.2, 0.8) * DURATION for _ in range(2))
idle_cpu = []
next_burst = time.time() + 5
t0 = time.time()
while time.time() < t_end:
    now = time.time() - t0
    if kill_points and now >= kill_points[0]:
        kill_points.pop(0)
        # SIGKILL at a seeded point, then the restart systemd would do; once, under a low limit.
        stop(p, signal.SIGKILL)
        low = len(kill_points) == 1
        p = start(ulimit=64 if low else None)
        wait_log("start-up memory released")
        if low:
            # The EMFILE storm: far more clients than descriptors.
            burst(400)
            d = rpc("status")
            check(d is not None and d < 0.1, f"EMFILE storm (ulimit -n 64): a fresh status answered in {d}")
            stop(p); p = start(); wait_log("start-up memory released")
        pid = p.pid
        continue
    if time.time() >= next_burst:
        burst()
        for _ in range(5): os.kill(pid, signal.SIGHUP); time.sleep(0.05)    # a SIGHUP storm
        next_burst = time.time() + 20
        continue
    c0 = cpu(pid); time.sleep(2); c1 = cpu(pid)
    idle_cpu.append((c1 - c0) / 2)

end_rss, end_fds = rss(pid), fds(pid)
stop_all.set()
code = stop(p)
month_thread.join()
check(code == 0, f"final SIGTERM: exit {code}")
print(f"agent at the end: RSS {end_rss} kB, {end_fds} descriptors (after start: {start_rss} kB, {start_fds}); "
      f"last run's start: {len(runs)} runs in all")
check(end_fds <= start_fds + 2, f"descriptors: {start_fds} after start, {end_fds} at the end")
check(end_rss < 256 * 1024, f"RSS under MemoryMax=256M at the end ({end_rss} kB)")
fin = [l for l in latencies if l != float("inf")]
fin.sort()
lost = len(latencies) - len(fin)
if fin:
    print(f"fresh status: {len(latencies)} asked, {lost} unanswered (during SIGKILL restarts), max {max(fin) * 1000:.1f} ms, "
          f"p99 {fin[int(len(fin) * 0.99) - 1] * 1000:.1f} ms, p50 {fin[len(fin) // 2] * 1000:.1f} ms")
if idle_cpu:
    print(f"CPU between bursts: median {sorted(idle_cpu)[len(idle_cpu) // 2] * 100:.1f} %, max {max(idle_cpu) * 100:.1f} % "
          f"(a fresh status every 0.5 s and the replayed drive)")

# Every delivery exactly once: request/generation/fire counters without repeat or gap.
fires = {}
longest = []
for _, path in runs:
    with open(path, errors="replace") as f:
        for line in f:
            m = re.search(r"delivered (\S+)/(\d+)/(\d+) ", line)
            if m: fires.setdefault((m.group(1), m.group(2)), []).append(int(m.group(3)))
            m = re.search(r"longest loop turn: ([\d.]+) ms \((.*)\)", line)
            if m: longest.append((float(m.group(1)), m.group(2)))
dupes = sum(len(v) - len(set(v)) for v in fires.values())
gaps = sum(max(v) - len(set(v)) for v in fires.values())
check(dupes == 0 and gaps == 0, f"deliveries: {sum(len(v) for v in fires.values())} over {len(fires)} request generations, "
      f"{dupes} repeated, {gaps} missing")
if longest:
    worst = max(longest)
    print(f"longest loop turn over the runs: {worst[0]} ms ({worst[1]})")
    slow = sum(log(i).count("loop turn took") for i in range(len(runs)))
    print(f"slow-turn warnings written: {slow}")
print("soak: " + ("PASSED" if not failures else f"FAILED: {failures}"))
sys.exit(1 if failures else 0)
PY
