#!/bin/sh
# The control plane at scale: listings of 100k zones, and a fresh `status`
# while 1,000 clients misbehave.
#
#   Benchmarks/agent/control.sh [bin-dir] [zones]      default .build/release, 100000
#
# Starts `fencepost-agent` (console GPIO, no GPS) in a temporary folder, adds that many circle
# zones as location requests over the socket (`add`, 250 a call: a line is at most 64 KiB by default), then prints:
#   - the time of one answer: `status {}` (its first page), `pending {"limit":1000}`, a page in the
#     middle, and an unpaged `pending` (refused with a hint past 5,000);
#   - the whole listing through the CLI (`fencepost pending`, every page);
#   - a burst of 1,000 concurrent clients (100 pipelining `status` without reading, 100 holding
#     60 kB partial lines, 50 sending junk, the rest idle) held 5 s, with a fresh `status` every
#     50 ms meanwhile: how many answered, max and p99;
#   - RSS and descriptors before and after, and the longest loop turn the agent logged at stop.
set -eu
BIN=${1:-.build/release}
ZONES=${2:-100000}
exec env PYTHONPATH="$(dirname "$0")" python3 - "$BIN" "$ZONES" <<'PY'
import json, os, random, signal, socket, subprocess, sys, tempfile, time, re, shutil
import agent_rpc

BIN, ZONES = sys.argv[1], int(sys.argv[2])
import resource
resource.setrlimit(resource.RLIMIT_NOFILE, (8192, max(8192, resource.getrlimit(resource.RLIMIT_NOFILE)[1])))
AGENT, CLI = os.path.join(BIN, "fencepost-agent"), os.path.join(BIN, "fencepost")
rng = random.Random(20261124)
DIR = tempfile.mkdtemp(prefix="fp-control-")
SOCK = os.path.join(DIR, "control.sock")
try:
    with open(os.path.join(DIR, "fencepost.toml"), "w") as f:
        f.write(f'state = "{DIR}/state.sqlite"\nclock_trust = "always"\ntime_zone = "UTC"\n'
                f'[engine]\nlocation_cap = {max(ZONES, 1000) * 2}\n[gpio]\nbackend = "console"\n'
                f'[socket]\npath = "{SOCK}"\nmode = 0o600\n')
    err = open(os.path.join(DIR, "err"), "w")
    agent = subprocess.Popen([AGENT, "--config", os.path.join(DIR, "fencepost.toml")], stdout=subprocess.DEVNULL, stderr=err)
    def log():
        with open(os.path.join(DIR, "err"), errors="replace") as f: return f.read()
    end = time.time() + 300
    while "start-up memory released" not in log():
        if time.time() > end or agent.poll() is not None: sys.exit("the agent did not start:\n" + log())
        time.sleep(0.2)
    time.sleep(2)
    def rss(): return int(next(l.split()[1] for l in open(f"/proc/{agent.pid}/status") if l.startswith("VmRSS:")))
    def fds(): return len(os.listdir(f"/proc/{agent.pid}/fd"))

    def rpc(method, params=None, timeout=10.0): return agent_rpc.call(SOCK, method, params, timeout)

    t = time.time()
    for start in range(0, ZONES, 250):
        reqs = [{"id": f"z{i}", "content": {"title": "Zone"},
                 "trigger": {"location": {"region": {"circle": {"lat": 51.0 + rng.random() * 0.5, "lon": 6.5 + rng.random() * 0.5,
                                                                "radius": 50 + rng.random() * 250}}, "notifyOnEntry": True, "repeats": True}}}
                for i in range(start, min(ZONES, start + 250))]
        d, body = rpc("add", {"requests": reqs}, timeout=120)
        if d is None or b'"error"' in body: sys.exit(f"add failed at {start}: {body[:300]}")
    print(f"{ZONES} location requests added in {time.time() - t:.1f} s")
    time.sleep(2)
    rss0, fds0 = rss(), fds()
    print(f"{ZONES} requests: RSS {rss0} kB, {fds0} descriptors after start")
    for method, params in [("status", {}), ("pending", {"limit": 1000}), ("pending", {"limit": 1000, "after": f"z{ZONES // 2}"}),
                           ("status", {"limit": 1000, "after": f"z{ZONES // 2}"}), ("pending", {})]:
        rpc(method, params)     # warm
        times = sorted(rpc(method, params)[0] for _ in range(5))
        d, body = rpc(method, params)
        kind = "error" if "error" in json.loads(body) else "result"
        print(f"{method} {json.dumps(params)}: median {times[2] * 1000:.1f} ms of 5, {len(body)} bytes ({kind})")
    t = time.time()
    p = subprocess.run([CLI, "pending", "--socket", SOCK], capture_output=True, text=True)
    print(f"fencepost pending (every page): {time.time() - t:.2f} s, exit {p.returncode}, {len(p.stdout.splitlines())} lines")

    # The burst.
    status_line = (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "status", "params": {}}) + "\n").encode()
    held = []
    failed = {}
    for i in range(1000):
        # A full listen backlog refuses a Unix connect with EAGAIN: retried for up to 5 s, so the
        # burst has the clients it says (the agent accepts 64 a loop turn).
        s = socket.socket(socket.AF_UNIX); s.setblocking(False)
        give_up = time.time() + 5
        while True:
            try:
                s.connect(SOCK); break
            except BlockingIOError:
                if time.time() > give_up: break
                time.sleep(0.001)
            except OSError:
                break
        try: s.getpeername()
        except OSError:
            failed["not connected"] = failed.get("not connected", 0) + 1
            s.close(); continue
        try:
            if i < 100: s.send(status_line * 2000)
            elif i < 200: s.send(b"x" * 60000)
            elif i < 250: s.send(b"{not json\n" * 10)
        except OSError: pass
        held.append(s)
    fresh = []
    end = time.time() + 5
    while time.time() < end:
        d, _ = rpc("status", timeout=3.0)
        fresh.append(d if d is not None else float("inf"))
        time.sleep(0.05)
    rss1 = rss()
    if failed: print(f"connections not made: {failed}")
    for s in held: s.close()
    ok = sorted(x for x in fresh if x != float("inf"))
    if ok:
        print(f"burst of {len(held)} clients, fresh status every 50 ms for 5 s: {len(ok)} of {len(fresh)} answered within 3 s, "
              f"p50 {ok[len(ok) // 2] * 1000:.1f} ms, p99 {ok[max(0, int(len(ok) * 0.99) - 1)] * 1000:.1f} ms, max {ok[-1] * 1000:.1f} ms; RSS {rss1} kB")
    else:
        print(f"burst of {len(held)} clients: no fresh status answered within 3 s")
    time.sleep(3)
    print(f"after the burst: RSS {rss()} kB, {fds()} descriptors (after start: {rss0} kB, {fds0})")
    agent.send_signal(signal.SIGTERM); agent.wait(30)
    m = re.findall(r"longest loop turn: .*", log())
    print(m[-1] if m else "no longest-turn line")
    print(f"slow-turn warnings: {log().count('loop turn took')}")
finally:
    shutil.rmtree(DIR, ignore_errors=True)
PY
