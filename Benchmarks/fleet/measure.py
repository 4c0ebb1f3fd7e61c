#!/usr/bin/env python3
"""The fleet link's figures (issue 26), measured on this machine against a real mosquitto.

    Benchmarks/fleet/measure.py [--bin .build/release] [--parts wire,idle,agent] [--out FILE]

Parts:
  wire   bytes on the wire per event: Fencepost's delivery event and OwnTracks' transition (the
         shape OwnTracks publishes for a region event), QoS 1, plain MQTT and TLS 1.3 with client
         certificates. mosquitto_pub -l sends N events on one connection through a counting proxy
         (Tests/FleetTests/fault_proxy.py); (bytes with N) - (bytes with 0) over N is one event:
         PUBLISH up, PUBACK down, TLS records included. TCP/IP headers come on top: 52 bytes a
         segment (IPv4 + TCP with timestamps); an event is at least one segment each way.
  idle   bytes a day of an idle link: a client connected with keepalive K s through the proxy for
         a few keepalive periods; PINGREQ/PINGRESP bytes per period x 86400/K (K = 60 s, the
         agent's default, and 300 s), plain and TLS.
  agent  the agent itself (fencepost-agent with a [fleet] section, --bin): its delivery events as
         they come (bytes per event), outbox throughput (events/s acknowledged by the broker),
         time from the link restored to a 10,000-event backlog drained, RSS idle with the link up
         and with no [fleet] section. Needs the fleet link in the agent. With --embedded PATH
         also the RSS of that agent executable (the Embedded Swift build) link up and off.

Prints one JSON object, also written to --out (default Benchmarks/results/fleet.json).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fleetkit  # noqa: E402
from fleetkit import ROOT, free_port  # noqa: E402

# The shape of a delivery event as the agent publishes it (replaced by a real one in `agent`).
FENCEPOST_DELIVERY = (
    '{"v":1,"id":"van-0042.7f3a.000000000123","seq":123,"type":"delivery","at":"2026-11-26T07:12:03.120Z",'
    '"clock":"gnss","delivery":"depot/3/12","request":"depot","category":"arrival",'
    '"trigger":{"kind":"region","region":"z-1234","event":"enter"},'
    '"pos":{"lat":48.87069,"lon":2.34916,"acc":6,"fixAt":"2026-11-26T07:12:02.900Z"}}'
)
# OwnTracks' transition, as its booklet shows it.
OWNTRACKS_TRANSITION = (
    '{"_type":"transition","wtst":1610104395,"lat":48.87069,"lon":2.34916,"tst":1707057574,"acc":26,'
    '"tid":"j1","event":"enter","desc":"My favorite coffee shop","t":"c","rid":"f7676c"}'
)


class Lab:
    """A folder with TLS material, a mosquitto with a plain and a TLS listener, and a proxy."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="fp-fleet-measure-")
        self.children = fleetkit.Children(self.dir)
        self.proxies = {}
        self.make_pki()

    def path(self, name):
        return self.children.path(name)

    def openssl(self, *args):
        subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def make_pki(self):
        def key(name):
            self.openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", self.path(name + ".key"))
            os.chmod(self.path(name + ".key"), 0o600)

        key("ca")
        self.openssl("req", "-x509", "-new", "-key", self.path("ca.key"), "-sha256", "-days", "2",
                     "-subj", "/CN=measure CA", "-out", self.path("ca.crt"))
        for name, ext in (("server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
                          ("van-0042", "extendedKeyUsage=clientAuth\n")):
            key(name)
            with open(self.path(name + ".ext"), "w") as f:
                f.write(ext)
            self.openssl("req", "-new", "-key", self.path(name + ".key"), "-subj",
                         "/CN=" + ("127.0.0.1" if name == "server" else name), "-out", self.path(name + ".csr"))
            self.openssl("x509", "-req", "-in", self.path(name + ".csr"), "-CA", self.path("ca.crt"), "-CAkey",
                         self.path("ca.key"), "-CAcreateserial", "-days", "2", "-sha256", "-extfile",
                         self.path(name + ".ext"), "-out", self.path(name + ".crt"))

    def start_broker(self):
        """The fleet scripts' broker (fleetkit.start_broker), with a TLS listener beside the plain one."""
        self.tls = free_port()
        tls = ["allow_anonymous false", "cafile " + self.path("ca.crt"), "certfile " + self.path("server.crt"),
               "keyfile " + self.path("server.key"), "require_certificate true", "use_identity_as_username true"]
        self.broker, self.plain, self.sock = fleetkit.start_broker(self.children, max_queued=0, listeners=[(self.tls, tls)])

    def spawn(self, args, output, **kw):
        return self.children.spawn(args, output, **kw)

    def proxy(self, target_port):
        """The proxy to `target_port` (one per port, made at first use)."""
        if target_port not in self.proxies:
            self.proxies[target_port] = fleetkit.Proxy(self.children, target_port, self.dir, name="proxy-%d" % target_port)
        return self.proxies[target_port]

    def close(self):
        self.children.close()
        self.children.remove("measure")

    def client_args(self, port, tls):
        args = ["-h", "127.0.0.1", "-p", str(port), "-V", "5"]
        if tls:
            args += ["--cafile", self.path("ca.crt"), "--cert", self.path("van-0042.crt"), "--key", self.path("van-0042.key")]
        return args


def publish_through(lab, proxy, tls, payload, count):
    """Bytes each way for one connection that publishes `count` events (QoS 1) and disconnects."""
    proxy.command("zero")
    p = subprocess.run(["mosquitto_pub"] + lab.client_args(proxy.port, tls) + ["-q", "1", "-t", "fencepost/v1/dev/van-0042/evt", "-l"],
                       input=("".join(payload + "\n" for _ in range(count))).encode(), capture_output=True, timeout=120)
    if p.returncode != 0:
        raise SystemExit("mosquitto_pub failed: " + p.stderr.decode())
    time.sleep(0.3)
    s = proxy.command("stats")
    return s["up"], s["down"]


def part_wire(lab, shapes):
    out = {}
    n = 200
    for tls, port in ((False, lab.plain), (True, lab.tls)):
        proxy = lab.proxy(port)
        for name, payload in shapes.items():
            up0, down0 = publish_through(lab, proxy, tls, payload, 0)
            up, down = publish_through(lab, proxy, tls, payload, n)
            out["%s %s" % (name, "tls" if tls else "plain")] = {
                "payloadBytes": len(payload.encode()),
                "upPerEvent": round((up - up0) / n, 1),
                "downPerEvent": round((down - down0) / n, 1),
                "connectionBytes": up0 + down0,
            }
    return out


def segments_to(port):
    """(segs_out, segs_in) of the client socket connected to 127.0.0.1:`port` (ss -ti)."""
    text = subprocess.run(["ss", "-tinH", "dst", "127.0.0.1:%d" % port], capture_output=True, text=True).stdout
    out = inn = None
    for word in text.split():
        if word.startswith("segs_out:"):
            out = int(word.split(":")[1])
        if word.startswith("segs_in:"):
            inn = int(word.split(":")[1])
    return (out, inn) if out is not None and inn is not None else None


def part_idle(lab, periods=3, keepalive=5):
    """PINGREQ/PINGRESP bytes over `periods` keepalive periods of an idle subscriber."""
    out = {}
    for tls, port in ((False, lab.plain), (True, lab.tls)):
        proxy = lab.proxy(port)
        sub = subprocess.Popen(["mosquitto_sub"] + lab.client_args(proxy.port, tls)
                               + ["-k", str(keepalive), "-q", "1", "-t", "fencepost/v1/dev/van-0042/cmd"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)
        proxy.command("zero")
        segments0 = segments_to(proxy.port)
        time.sleep(periods * keepalive + 0.5)
        s = proxy.command("stats")
        segments = segments_to(proxy.port)
        sub.terminate()
        sub.wait(5)
        per_period = (s["up"] + s["down"]) / periods
        segs = (segments[0] - segments0[0] + segments[1] - segments0[1]) / periods if segments and segments0 else None
        key = "tls" if tls else "plain"
        out[key] = {"bytesPerKeepalive": round(per_period, 1),
                    "segmentsPerKeepalive": segs,
                    "bytesPerDayKeepalive60s": round(per_period * 86400 / 60),
                    "bytesPerDayKeepalive300s": round(per_period * 86400 / 300)}
        if segs is not None:
            # IPv4 (20) + TCP with timestamps (32) per segment.
            out[key]["withTcpIpHeadersPerDayKeepalive60s"] = round((per_period + 52 * segs) * 86400 / 60)
            out[key]["withTcpIpHeadersPerDayKeepalive300s"] = round((per_period + 52 * segs) * 86400 / 300)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    parser.add_argument("--parts", default="wire,idle,agent")
    parser.add_argument("--out", default=os.path.join(ROOT, "Benchmarks", "results", "fleet.json"))
    parser.add_argument("--embedded", help="another fencepost-agent executable (board/cross-build x86_64): its RSS link up and off")
    options = parser.parse_args()
    parts = options.parts.split(",")
    fleetkit.require("measure", ("mosquitto", "mosquitto_pub", "mosquitto_sub", "openssl"))
    result = {
        "run": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip(),
        "load": open("/proc/loadavg").read().split()[:3],
        "cores": os.cpu_count(),
        "mosquitto": subprocess.run(["mosquitto", "-h"], capture_output=True, text=True).stdout.splitlines()[0],
    }
    lab = Lab()
    try:
        lab.start_broker()
        shapes = {"fencepost delivery": FENCEPOST_DELIVERY, "owntracks transition": OWNTRACKS_TRANSITION}
        if "agent" in parts:
            try:
                import fleet_agent  # noqa: F401  (Benchmarks/fleet/fleet_agent.py)
            except ImportError:
                fleet_agent = None
            if fleet_agent is not None:
                result["agent"] = fleet_agent.measure(lab, options.bin)
                if options.embedded:
                    result["agent"]["embedded"] = fleet_agent.measure_rss(lab, options.bin, options.embedded, "embedded")
                if "event" in result["agent"]:
                    shapes["fencepost delivery"] = result["agent"]["event"]
        if "wire" in parts:
            result["wire"] = part_wire(lab, shapes)
        if "idle" in parts:
            result["idle"] = part_idle(lab)
    finally:
        lab.close()
    text = json.dumps(result, indent=2)
    print(text)
    os.makedirs(os.path.dirname(options.out), exist_ok=True)
    with open(options.out, "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
