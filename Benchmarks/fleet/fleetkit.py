"""Pieces the fleet scripts share (rollout.py, fleetbox.py, measure.py and its fleet_agent.py):
the run's children and folder, a broker, the fault proxies, the events consumer and its reader,
the follower of retained documents, an agent's configuration, `fencepost` and `fleet push`, the
seeded set of circles, /proc readings, the machine's description and the end of a run (its JSON).

Stdlib only. The proxy is the fleet tests' own program (Tests/FleetTests/fault_proxy.py), run as a
child and driven over its control socket: one proxy implementation for tests and scripts.
"""

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import runinfo  # noqa: E402  (Benchmarks/runinfo.py: the machine and the commit, as Benchmarks/run writes them)
PROXY = os.path.join(ROOT, "Tests", "FleetTests", "fault_proxy.py")
DRIVE = os.path.join(ROOT, "board", "demo", "duesseldorf-2009-07-07.nmea")
RESULTS = os.path.join(ROOT, "Benchmarks", "results")


def require(script, tools=("mosquitto", "mosquitto_sub"), bin=None):
    """Puts /usr/sbin (mosquitto's place) on PATH and stops `script` naming the first tool, or
    the first of `fencepost` and `fencepost-agent` in the folder `bin`, that is missing."""
    if "/usr/sbin" not in os.environ["PATH"].split(":"):
        os.environ["PATH"] += ":/usr/sbin"
    for tool in tools:
        if shutil.which(tool) is None:
            raise SystemExit("%s: %s is not installed (board/install-deps installs mosquitto, mosquitto-clients)" % (script, tool))
    for exe in (("fencepost", "fencepost-agent") if bin else ()):
        if not os.path.exists(os.path.join(bin, exe)):
            raise SystemExit("%s: no %s in %s (swift build -c release)" % (script, exe, bin))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def accepts(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def status_kb(pid, key):
    """A `kB` field of /proc/PID/status (VmHWM, VmRSS), or None when the process is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def children_of(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def load_now():
    return float(open("/proc/loadavg").read().split()[0])


def write_circles(path, count, seed):
    """`count` circles around Europe, seeded, as GeoJSON (the shape FleetRolloutTests.circles
    writes) in the file `path`; returns its size. Written in slices of 100k (a 1M set is ~100 MB of
    Python strings at once otherwise)."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        f.write('{"type":"FeatureCollection","features":[')
        for start in range(0, count, 100_000):
            parts = []
            for i in range(start, min(count, start + 100_000)):
                lon, lat, r = rng.uniform(-10, 30), rng.uniform(36, 60), rng.randint(50, 2000)
                parts.append('{"type":"Feature","id":"z-%d","geometry":{"type":"Point","coordinates":[%.5f,%.5f]},"properties":{"radius":%d}}'
                             % (i, lon, lat, r))
            f.write((",\n" if start else "") + ",\n".join(parts))
        f.write("]}\n")
    return os.path.getsize(path)


def machine():
    return runinfo.machine()


def commit():
    """The commit, " + changes" when the sources or these scripts differ from it."""
    return runinfo.commit(["Sources", "Package.swift", "Benchmarks/fleet"])


class Children:
    """Child processes of a run, ended in reverse order (SIGTERM, then SIGKILL after 20 s)."""

    def __init__(self, folder):
        self.dir = folder
        self.list = []

    def path(self, *names):
        return os.path.join(self.dir, *names)

    def spawn(self, args, output, **kw):
        p = subprocess.Popen(args, stdout=open(self.path(output), "a"), stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, **kw)
        self.list.append(p)
        return p

    def spawn_piped(self, args):
        """A child whose output is read as text lines from its `stdout` (stderr dropped)."""
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
        self.list.append(p)
        return p

    def close(self):
        for p in reversed(self.list):
            if p.poll() is None:
                p.terminate()
        for p in reversed(self.list):
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)

    def remove(self, script, keep=False):
        """Removes the run folder, or with `keep` says where it stays (logs, states)."""
        if keep:
            print("%s: kept %s" % (script, self.dir))
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def start_broker(children, name="broker", max_queued=100000, listeners=()):
    """mosquitto with a TCP listener on 127.0.0.1 (the boards, through their proxies) and a Unix
    socket (the operator's push, consumers), anonymous on both. `listeners`: more TCP listeners on
    127.0.0.1 as (port, [their settings lines]), e.g. TLS with client certificates; the broker is up
    when every port accepts. `max_queued`: messages queued per client (0: no limit). Returns
    (process, port, socket path)."""
    port = free_port()
    sock = children.path(name + ".sock")
    conf = children.path(name + ".conf")
    lines = ["user root", "log_dest file " + children.path(name + ".log"), "per_listener_settings true",
             "max_queued_messages %d" % max_queued,
             "listener 0 " + sock, "allow_anonymous true",
             "listener %d 127.0.0.1" % port, "allow_anonymous true"]
    for extra, settings in listeners:
        lines += ["listener %d 127.0.0.1" % extra] + list(settings)
    with open(conf, "w") as f:
        f.write("\n".join(lines + [""]))
    p = children.spawn(["mosquitto", "-c", conf], name + ".out")
    end = time.time() + 10
    while not (all(accepts(q) for q in [port] + [q for q, _ in listeners]) and os.path.exists(sock)):
        if time.time() > end or p.poll() is not None:
            raise SystemExit("mosquitto did not start: " + open(children.path(name + ".out")).read())
        time.sleep(0.05)
    return p, port, sock


class Proxy:
    """One Tests/FleetTests/fault_proxy.py in front of a broker's TCP port, its control socket and
    output (NAME.ctl, NAME.out) in `folder`. `wait=False` returns once it is spawned (then
    `wait_listening`), so that many proxies start side by side (see `start_proxies`)."""

    def __init__(self, children, target_port, folder, name="proxy", wait=True):
        self.control = os.path.join(folder, name + ".ctl")
        self.out = os.path.join(folder, name + ".out")
        self.process = children.spawn([sys.executable, PROXY, "--target", "127.0.0.1:%d" % target_port, "--control", self.control],
                                      os.path.relpath(self.out, children.dir))
        self.port = None
        if wait:
            self.wait_listening(time.time() + 60)

    def wait_listening(self, deadline):
        """Waits until the proxy has printed its port and made its control socket."""
        while self.port is None:
            line = open(self.out).readline()
            if line.endswith("\n") and os.path.exists(self.control):
                self.port = json.loads(line)["listening"]
            elif time.time() > deadline or self.process.poll() is not None:
                raise SystemExit("a proxy did not start: " + open(self.out).read())
            else:
                time.sleep(0.05)

    def command(self, line):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect(self.control)
        s.sendall((line + "\n").encode())
        answer = s.makefile().readline()
        s.close()
        r = json.loads(answer)
        if not r.get("ok", True):
            raise SystemExit("proxy: %s: %s" % (line, answer))
        return r


def start_proxies(children, target_port, folders, timeout=60):
    """One proxy in each of `folders`, all spawned before any is waited for (a proxy's Python
    start-up is paid once, not once a board)."""
    proxies = [Proxy(children, target_port, folder, wait=False) for folder in folders]
    deadline = time.time() + timeout
    for p in proxies:
        p.wait_listening(deadline)
    return proxies


def start_consumer(children, sock, client_id, output="events"):
    """A consumer of every board's events (`mosquitto_sub`, persistent session `client_id`, QoS 1)
    writing `TOPIC PAYLOAD` lines to `output` in the run folder; returns that file's path."""
    children.spawn(["mosquitto_sub", "--unix", sock, "-V", "5", "-q", "1", "-c", "-i", client_id, "-x", "3600",
                    "-t", "fencepost/v1/dev/+/evt", "-v"], output)
    return children.path(output)


def read_events(path):
    """The consumer's events per device: {device: {event id: event}} (a redelivery counted once)."""
    out = {}
    with open(path, errors="replace") as f:
        for line in f:
            topic, _, payload = line.rstrip("\n").partition(" ")
            parts = topic.split("/")
            try:
                e = json.loads(payload)
            except ValueError:
                continue
            if len(parts) == 5 and isinstance(e, dict):
                out.setdefault(parts[3], {})[e.get("id")] = e
    return out


class Retained:
    """The boards' latest retained documents (`kinds` of fencepost/v1/dev/+/KIND), followed by one
    `mosquitto_sub` on the broker's Unix socket and a thread. `on_message(device, kind, doc)` is
    called for each, after it is stored."""

    def __init__(self, children, sock, kinds=("status", "reported", "health"), on_message=None):
        self.lock = threading.Lock()
        self.docs = {}
        self.on_message = on_message
        args = ["mosquitto_sub", "--unix", sock, "-V", "5", "-v"]
        for kind in kinds:
            args += ["-t", "fencepost/v1/dev/+/" + kind]
        self.process = children.spawn_piped(args)
        threading.Thread(target=self.follow, daemon=True).start()

    def follow(self):
        for line in self.process.stdout:
            topic, _, payload = line.rstrip("\n").partition(" ")
            parts = topic.split("/")
            if len(parts) != 5:
                continue
            try:
                doc = json.loads(payload) if payload else None
            except ValueError:
                continue
            with self.lock:
                self.docs[(parts[3], parts[4])] = doc
            if self.on_message:
                self.on_message(parts[3], parts[4], doc)

    def get(self, device, kind):
        with self.lock:
            return self.docs.get((device, kind))


def start_agent(children, bin, config, log, executable=None):
    """`fencepost-agent --config CONFIG` from the folder `bin` (or `executable`), its output to
    `log` (a path in the run folder); `wait_answering` waits for it."""
    return children.spawn([executable or os.path.join(bin, "fencepost-agent"), "--config", config],
                          os.path.relpath(log, children.dir))


def wait_answering(script, bin, agents, timeout=120):
    """Waits until every agent, given as (name, process, control socket, log path), answers
    `fencepost status`; stops `script` with the log's end of one that exited, or after `timeout`
    seconds naming those that do not answer."""
    end = time.time() + timeout
    waiting = list(agents)
    while True:
        waiting = [a for a in waiting if cli(bin, a[2], ["status", "--json"]).returncode != 0]
        if not waiting:
            return
        for name, process, _, log in waiting:
            if process.poll() is not None:
                raise SystemExit("%s: %s did not start:\n%s" % (script, name, open(log, errors="replace").read()[-3000:]))
        if time.time() > end:
            raise SystemExit("%s: not answering after %d s: %s" % (script, timeout, " ".join(a[0] for a in waiting)))
        time.sleep(0.3)


def cli(bin, control_socket, args, timeout=60):
    """`fencepost ARGS --socket CONTROL_SOCKET` from the folder `bin`, its output captured."""
    return subprocess.run([os.path.join(bin, "fencepost")] + args + ["--socket", control_socket],
                          capture_output=True, text=True, timeout=timeout)


def push_zones(bin, devices, zones, fleet, sock, timeout):
    """`fencepost fleet push DEVICES --zones ZONES` through the broker's Unix socket: the pushed
    set's description (zoneSet: sha256, size, …), or a RuntimeError with the command's output."""
    out = subprocess.run([os.path.join(bin, "fencepost"), "fleet", "push"] + list(devices)
                         + ["--zones", zones, "--fleet", fleet, "--json", "--broker", "unix:" + sock],
                         capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError("fencepost fleet push: %d %s %s" % (out.returncode, out.stdout, out.stderr))
    pushed = json.loads(out.stdout)
    return (pushed[0] if isinstance(pushed, list) else pushed)["zoneSet"]


class Push:
    """`push_zones` on a thread, so that the faults begin with it: `error` when it failed,
    `seconds` from `started` (the caller's clock of the roll-out) once it returned, and
    `on_pushed(zone_set, seconds)` called when it succeeded."""

    def __init__(self, bin, devices, zones, fleet, sock, timeout, started, on_pushed):
        self.error = None
        self.seconds = None

        def run():
            try:
                zone_set = push_zones(bin, devices, zones, fleet, sock, timeout)
            except RuntimeError as e:
                self.error = str(e)
                return
            finally:
                self.seconds = time.time() - started
            on_pushed(zone_set, self.seconds)
        threading.Thread(target=run, daemon=True).start()


def finish(script, result, out, failures, seed):
    """Writes a run's JSON to `out` (when it got that far), prints its benchmarks, the failures and
    the seed; returns the exit status (1 when anything failed)."""
    if result:
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w") as f:
            f.write(json.dumps(result, indent=1) + "\n")
        print(json.dumps(result["benchmarks"], indent=1, ensure_ascii=False))
        print("%s: wrote %s" % (script, out))
    for line in failures:
        print("%s: FAILED: %s" % (script, line))
    print("%s: seed %d" % (script, seed))
    return 1 if failures else 0


def agent_config(folder, device, broker_port, keepalive=10):
    """An agent's configuration in `folder` (state, control socket, the demo drive replayed at real
    speed, console GPIO, `[fleet]` to 127.0.0.1:broker_port). Returns its path."""
    config = os.path.join(folder, "fencepost.toml")
    with open(config, "w") as f:
        f.write('state = "%s/state.sqlite"\nclock_trust = "always"\ntime_zone = "UTC"\n\n'
                '[socket]\npath = "%s/control.sock"\nmode = 0o600\n\n'
                '[gps]\nsource = "replay"\nfile = "%s"\nspeed = 1\nexit_at_end = false\n\n'
                '[gpio]\nbackend = "console"\n[gpio.buzzer]\npin = 18\n[gpio.led]\npin = 23\n\n'
                '[fleet]\nbroker = "mqtt://127.0.0.1:%d"\ndevice = "%s"\nkeepalive = %d\n'
                % (folder, folder, DRIVE, broker_port, device, keepalive))
    return config
