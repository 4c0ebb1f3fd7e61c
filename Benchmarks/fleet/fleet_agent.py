"""The agent's part of Benchmarks/fleet/measure.py: fencepost-agent with a [fleet] section against
the lab's mosquitto, through the counting proxy.

- event: one delivery event as the agent publishes it (the wire part measures its bytes);
- backlog: the link cut (proxy refuse + rst), BACKLOG one-shot deliveries due over a few seconds,
  then the link restored: seconds from restored to the last event at a consumer (mosquitto_sub on
  the broker's Unix socket) and events/s over that time (the outbox's throughput to the broker,
  QoS 1 acknowledged, window 16);
- rss: VmRSS and RssAnon of the agent idle for a few seconds with the link up, and of the same
  agent without a [fleet] section;
- embedded (measure_rss, with --embedded PATH): the same two for another agent executable (the
  Embedded Swift build, board/cross-build x86_64), driven by --bin's `fencepost`.
"""

import json
import os
import subprocess
import time

from fleetkit import cli, read_events, start_agent, start_consumer, status_kb, wait_answering

BACKLOG = int(os.environ.get("FLEET_BACKLOG", "10000"))


class Agent:
    def __init__(self, lab, binary, name, fleet, executable=None):
        self.lab, self.binary, self.name = lab, binary, name
        self.dir = lab.path("agent-" + name)
        os.makedirs(self.dir, exist_ok=True)
        self.socket = os.path.join(self.dir, "control.sock")
        with open(os.path.join(self.dir, "fencepost.toml"), "w") as f:
            f.write('state = "%s/state.sqlite"\nclock_trust = "always"\ntime_zone = "UTC"\n'
                    '[engine]\npending_cap = %d\ndelivered_cap = %d\n[socket]\npath = "%s"\nmode = 0o600\n'
                    % (self.dir, BACKLOG * 2, BACKLOG * 2, self.socket))
            if fleet:
                f.write("[fleet]\n" + fleet + "\n")
        self.log = os.path.join(self.dir, "log")
        self.process = start_agent(lab.children, binary, os.path.join(self.dir, "fencepost.toml"), self.log, executable)
        wait_answering("measure", binary, [("the agent " + name, self.process, self.socket, self.log)], timeout=60)

    def cli(self, args):
        return cli(self.binary, self.socket, args, timeout=None)

    def add(self, prefix, seconds):
        lines = "".join('{"id":"%s-%d","content":{"title":"T","interruptionLevel":"passive"},"trigger":{"interval":{"seconds":%.3f}}}\n'
                        % (prefix, i, s) for i, s in enumerate(seconds))
        path = os.path.join(self.dir, "add.jsonl")
        with open(path, "w") as f:
            f.write(lines)
        out = self.cli(["add", path])
        if out.returncode != 0:
            raise SystemExit("fencepost add: " + out.stderr)

    def stop(self):
        self.process.terminate()
        self.process.wait(20)


def unique_events(path, device):
    """`device`'s events at the consumer, in arrival order, each once."""
    return list(read_events(path).get(device, {}).values())


def measure_rss(lab, binary, executable, name):
    """VmRSS and RssAnon of `executable` idle with the link up (a connected, idle link: 8 s after
    its start) and without a [fleet] section."""
    out = {"executable": executable}
    device = "van-rss"
    agent = Agent(lab, binary, name + "-link", 'broker = "unix:%s"\ndevice = "%s"\nkeepalive = 60\n' % (lab.sock, device), executable)
    time.sleep(8)
    with open(agent.log, errors="replace") as f:
        out["connected"] = any("fleet: connected" in line for line in f)
    out["rssLinkUpKiB"] = status_kb(agent.process.pid, "VmRSS")
    out["rssAnonLinkUpKiB"] = status_kb(agent.process.pid, "RssAnon")
    agent.stop()
    out.update(rss_without_fleet(lab, binary, name + "-nofleet", executable))
    return out


def rss_without_fleet(lab, binary, name, executable=None):
    """VmRSS and RssAnon of the agent (`executable`, else --bin's) with no [fleet] section, idle
    for 8 s after its start."""
    plain = Agent(lab, binary, name, None, executable)
    time.sleep(8)
    out = {"rssNoFleetKiB": status_kb(plain.process.pid, "VmRSS"), "rssAnonNoFleetKiB": status_kb(plain.process.pid, "RssAnon")}
    plain.stop()
    return out


def measure(lab, binary):
    if not os.path.exists(os.path.join(binary, "fencepost-agent")):
        return {"skipped": "no fencepost-agent in " + binary}
    check = subprocess.run([os.path.join(binary, "fencepost"), "check-config", "/dev/stdin"],
                           input='state = "/tmp/x.sqlite"\n[fleet]\nbroker = "unix:/tmp/x.sock"\ndevice = "x"\n',
                           capture_output=True, text=True)
    if "unknown key `fleet`" in check.stderr:
        return {"skipped": "this build of the agent has no fleet link"}
    out = {"build": binary, "backlog": BACKLOG}
    proxy = lab.proxy(lab.plain)
    device = "van-0042"
    events_path = start_consumer(lab.children, lab.sock, "measure", "consumer-measure")
    time.sleep(0.5)
    agent = Agent(lab, binary, "link", 'broker = "mqtt://127.0.0.1:%d"\ndevice = "%s"\nkeepalive = 60\n' % (proxy.port, device))
    time.sleep(3)

    # One event, as published.
    agent.add("one", [0.2])
    end = time.time() + 30
    while not unique_events(events_path, device) and time.time() < end:
        time.sleep(0.1)
    events = unique_events(events_path, device)
    if events:
        out["event"] = json.dumps(events[0], separators=(",", ":"))

    # RSS idle with the link up.
    time.sleep(5)
    out["rssLinkUpKiB"] = status_kb(agent.process.pid, "VmRSS")
    out["rssAnonLinkUpKiB"] = status_kb(agent.process.pid, "RssAnon")

    # The backlog: link down, BACKLOG deliveries, link up.
    proxy.command("mode refuse")
    proxy.command("rst")
    # Due after the adds are in (a burst of deliveries while thousands are still being added
    # starves the adds), over `spread` seconds.
    spread = max(5.0, BACKLOG / 1000.0)
    lead = 15.0 + BACKLOG / 500.0
    started = time.time()
    agent.add("backlog", [lead + spread * i / BACKLOG for i in range(BACKLOG)])
    time.sleep(max(0, started + lead + spread + 3 - time.time()))
    before = len(unique_events(events_path, device))
    proxy.command("zero")
    proxy.command("mode pass")
    restored = time.time()
    target = before + BACKLOG
    end = restored + 600
    count = before
    while time.time() < end:
        count = len(unique_events(events_path, device))
        if count >= target:
            break
        time.sleep(0.05)
    drained = time.time() - restored
    stats = proxy.command("stats")
    out["backlogDrainedSeconds"] = round(drained, 2)
    out["backlogReceived"] = count - before
    out["outboxEventsPerSecond"] = round((count - before) / drained, 1) if drained > 0 else None
    out["backlogBytesUp"] = stats["up"]
    out["backlogBytesDown"] = stats["down"]
    with open(agent.log, errors="replace") as f:
        out["slowTurnsLogged"] = sum(1 for line in f if "loop turn took" in line)
    agent.stop()

    # The same agent without a [fleet] section.
    out.update(rss_without_fleet(lab, binary, "nofleet"))
    return out
