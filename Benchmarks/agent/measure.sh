#!/bin/sh
# Measures the agent as a process: resident memory while idle with 1k zones and
# 1k triggers and with many zones, wakeups in 60 s idle, due-time → GPIO latency, binary size.
#
#   Benchmarks/agent/measure.sh [path/to/fencepost-agent] [zones for the large case, default 1000000]
#   PARTS="idle latency" Benchmarks/agent/measure.sh …    only some parts (idle, sparse, latency, fixes, large, reload)
#   (reload, not in the default: deliveries due every second while SIGHUP rebuilds the large set)
#
# Build first: swift build -c release --static-swift-stdlib --product fencepost-agent
# (the daemon the systemd unit runs; `fencepost run` — pass .build/release/fencepost — is the same
# agent inside the CLI, with swift-argument-parser and Foundation resident too).
# Everything runs in a temporary folder with console GPIO; nothing is installed.
set -eu
BIN=${1:-.build/release/fencepost-agent}
PARTS=${PARTS:-idle latency fixes large}
# SCHED_FIFO 10 with reset-on-fork, as board/fencepost.service runs it (root only; PRIORITY="" for none).
PRIORITY=${PRIORITY-chrt -R -f 10}; if [ "$(id -u)" -ne 0 ]; then PRIORITY=""; fi
case "$(basename "$BIN")" in fencepost) RUN="run" ;; *) RUN="" ;; esac
LARGE=${2:-1000000}
DIR=$(mktemp -d /tmp/fp-measure.XXXXXX)
trap 'rm -rf "$DIR"' EXIT

gen() { # gen NAME ZONES CALENDAR SECONDLY SPEED [STEP: the minutely triggers' seconds apart, 1]
python3 - "$DIR/$1" "$2" "$3" "$4" "$5" "$(cd "$(dirname "$0")/../.." && pwd)" "${6:-1}" <<'PY'
import json, random, sys, os
out, zones, cal, secondly, speed, root, step = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], int(sys.argv[7])
os.makedirs(out, exist_ok=True)
rng = random.Random(20261121)
# ROUTE=1: the zones 3° further south (none on the demo drive) plus 35 m zones on every 12th fix
# of the drive (entry only), as in the fixes part: a crossing every ~1.2 s at 10×.
route = os.environ.get("ROUTE") == "1"
with open(f"{out}/zones.geojson", "w") as f:
    f.write('{"type":"FeatureCollection","features":[')
    for i in range(zones):
        lat, lon = (48.0 if route else 51.0) + rng.random() * 0.5, 6.5 + rng.random() * 0.5
        f.write(("," if i else "") + json.dumps({"type": "Feature", "id": f"z{i}", "geometry": {"type": "Point", "coordinates": [lon, lat]},
                                                  "properties": {"radius": 50 + rng.random() * 250}}))
    if route:
        points = []
        for line in open(f"{root}/board/demo/duesseldorf-2009-07-07.nmea", encoding="ascii", errors="replace"):
            g = line.strip().split(",")
            if g[0].endswith("GGA") and len(g) > 6 and g[2] and g[4] and g[6] != "0":
                lat = int(g[2][:2]) + float(g[2][2:]) / 60; lon = int(g[4][:3]) + float(g[4][3:]) / 60
                points.append((lat if g[3] == "N" else -lat, lon if g[5] == "E" else -lon))
        for i, (lat, lon) in enumerate(points[12::12]):
            f.write("," + json.dumps({"type": "Feature", "id": f"p{i}", "geometry": {"type": "Point", "coordinates": [round(lon, 6), round(lat, 6)]},
                                      "properties": {"radius": 35, "notifyOnEntry": True, "notifyOnExit": False}}))
    f.write("]}")
gps = f'[gps]\nsource = "replay"\nfile = "{root}/board/demo/duesseldorf-2009-07-07.nmea"\nspeed = {speed}\nexit_at_end = false\n' if speed != "0" else ""
with open(f"{out}/fencepost.toml", "w") as f:
    f.write(f'state = "{out}/state.sqlite"\nclock_trust = "always"\ntime_zone = "UTC"\nzones = "zones.geojson"\n\n')
    f.write('[engine]\npending_cap = 100000\nlocation_cap = 2000000\n\n')
    f.write(f'[socket]\npath = "{out}/control.sock"\n\n' + gps + '\n[gpio]\nbackend = "console"\n[gpio.buzzer]\npin = 18\n[gpio.led]\npin = 23\n[gpio.badge]\npin = 24\n\n')
    for i in range(cal):
        f.write(f'[[request]]\nid = "daily-{i}"\ncontent = {{ title = "Check {i}", sound = "default" }}\n'
                f'trigger = {{ calendar = {{ match = {{ hour = {rng.randrange(24)}, minute = {rng.randrange(60)} }}, repeats = true }} }}\n\n')
    for i in range(secondly):
        f.write(f'[[request]]\nid = "minutely-{i}"\ncontent = {{ title = "Tick {i}", sound = "default" }}\n'
                f'trigger = {{ calendar = {{ match = {{ second = {(i * step) % 60} }}, repeats = true }} }}\n\n')
PY
}

elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
rss() { awk '/VmRSS/ {print $2}' /proc/"$1"/status; }
. "$(dirname "$0")/figure.sh"
# latency NAME LOGFILE: the agent's "latency … p50 A µs, p99 B µs, max C µs" line as figures.
latency() {
    line=$(grep -o 'latency .*: p50 .*' "$2" | tail -n 1) || return 0
    for q in p50 p99 max; do
        figure "$1" "$q" "$(echo "$line" | sed -n "s/.*$q \([0-9.]*\) µs.*/\1/p")" "µs"
    done
}
switches() { awk '/^voluntary_ctxt_switches/ {v=$2} /^nonvoluntary_ctxt_switches/ {n=$2} END {print v+n}' /proc/"$1"/status; }
start() { # start NAME → PID; waits for "running:"
  # Empty the logs first: the shell truncates them in the child, after this script may already
  # have read a previous run's "running:" (a restart then measured 0.0 s).
  : > "$DIR/$1/out"; : > "$DIR/$1/err"
  $PRIORITY "$BIN" $RUN --config "$DIR/$1/fencepost.toml" > "$DIR/$1/out" 2> "$DIR/$1/err" &
  PID=$!
  i=0; until grep -q "running:" "$DIR/$1/err" 2>/dev/null; do sleep 0.2; i=$((i+1)); [ $i -lt 3000 ] || { echo "no start"; cat "$DIR/$1/err"; exit 1; }; done
  # The configuration is applied and the zone set built or mapped right after "running:"; the
  # start-up line after READY says it is done.
  i=0; until grep -q "start-up memory released" "$DIR/$1/err" 2>/dev/null; do sleep 0.05; i=$((i+1)); [ $i -lt 24000 ] || break; done
}

echo "binary: $(stat -c %s "$BIN") bytes; stripped: $(strip -o "$DIR/stripped" "$BIN" && stat -c %s "$DIR/stripped") bytes"
figure "binary, stripped" size "$(stat -c %s "$DIR/stripped")" bytes

has() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

if has idle; then
    gen idle 1000 1000 0 0
    start idle
    sleep 5
    figure "idle, 1k zones + 1k calendar triggers" "RSS at start" "$(rss $PID)" kB
    echo "idle, 1k zones + 1k calendar triggers: RSS $(rss $PID) kB ($(grep -E '^Rss(Anon|File)' /proc/$PID/status | tr -s ' \t' ' ' | paste -sd' '))"
    S0=$(switches $PID); sleep 60; S1=$(switches $PID)
    figure "idle, 1k zones + 1k calendar triggers" "wakeups in 60 s" "$((S1 - S0))" ""
    figure "idle, 1k zones + 1k calendar triggers" "RSS after 60 s" "$(rss $PID)" kB
    echo "idle, 60 s without GPS input: $((S1 - S0)) context switches (wakeups); deliveries in that minute: $(grep -c delivered "$DIR/idle/err" || true)"
    echo "idle, after those 60 s: RSS $(rss $PID) kB"
    kill -TERM $PID; wait $PID || true
fi

if has sparse; then
    # A delivery every 15 s, no GPS: each comes after the agent gave its idle memory back (10 s
    # after the last work), so its code faults back in from the page cache first.
    gen sparse 100 0 4 0 15
    printf '\n[log]\nlevel = "debug"\n' >> "$DIR/sparse/fencepost.toml"   # the release's own line
    start sparse
    sleep 122
    kill -TERM $PID; wait $PID || true
    echo "sparse (a delivery every 15 s, each after the idle release): $(grep -c 'idle 10 s after work' "$DIR/sparse/err" || true) releases logged"
    grep "latency" "$DIR/sparse/err" | sed 's/^/sparse: /' || echo "sparse: no latency line"
fi

if has latency; then
    # One calendar trigger a second (a second one in the same second would wait behind the first
    # one's pattern, by design, and is not counted), 120 s: 120 deliveries.
    gen latency 100 0 60 20
    start latency
    sleep 120
    figure "busy: 100 zones, a fix every 50 ms, a delivery a second" "RSS after 120 s" "$(rss $PID)" kB
    echo "busy (100 zones, a fix every 50 ms, a delivery a second) after 120 s: RSS $(rss $PID) kB ($(grep -E '^Rss(Anon|File)' /proc/$PID/status | tr -s ' \t' ' ' | paste -sd' '))"
    kill -TERM $PID; wait $PID || true
    grep "latency" "$DIR/latency/err" || echo "no latency line"
    latency "due → GPIO (a calendar trigger a second)" "$DIR/latency/err"
fi

if has fixes; then
    # Fix → GPIO: a zone of 35 m every 12th fix along the demo drive, replayed to its end at 10×:
    # an entry every ~1.2 s, after the previous pattern and the pause behind it (else it would wait
    # in the queue, by design, and not count).
    mkdir -p "$DIR/fixes"
    python3 - "$DIR/fixes" "$(cd "$(dirname "$0")/../.." && pwd)" <<'PY'
import sys
out, root = sys.argv[1], sys.argv[2]
log = f"{root}/board/demo/duesseldorf-2009-07-07.nmea"
points = []
for line in open(log, encoding="ascii", errors="replace"):
    f = line.strip().split(",")
    if f[0].endswith("GGA") and len(f) > 6 and f[2] and f[4] and f[6] != "0":
        lat = int(f[2][:2]) + float(f[2][2:]) / 60; lon = int(f[4][:3]) + float(f[4][3:]) / 60
        points.append((lat if f[3] == "N" else -lat, lon if f[5] == "E" else -lon))
feats = [f'{{"type":"Feature","id":"p{i}","geometry":{{"type":"Point","coordinates":[{lon:.6f},{lat:.6f}]}},'
         f'"properties":{{"radius":35,"notifyOnEntry":true,"notifyOnExit":false}}}}' for i, (lat, lon) in enumerate(points[12::12])]
open(f"{out}/zones.geojson", "w").write('{"type":"FeatureCollection","features":[' + ",".join(feats) + "]}")
open(f"{out}/fencepost.toml", "w").write(f'state = "{out}/state.sqlite"\nclock_trust = "always"\ntime_zone = "UTC"\nzones = "zones.geojson"\n\n'
    f'[socket]\npath = "{out}/control.sock"\n\n[gps]\nsource = "replay"\nfile = "{log}"\nspeed = 10\nexit_at_end = true\n\n[gpio]\nbackend = "console"\n[gpio.buzzer]\npin = 18\n[gpio.led]\npin = 23\n[gpio.badge]\npin = 24\n')
PY
    start fixes
    wait $PID || true
    echo "fix → GPIO: $(grep -c "on enter" "$DIR/fixes/err" || true) zone entries delivered"
    grep "latency" "$DIR/fixes/err" || echo "no latency line"
    latency "fix → GPIO (a zone entry every ~1.2 s)" "$DIR/fixes/err"
fi

if has large; then
    # Zones are a zone set (STATE.zones, mapped read-only): the first start builds it, a restart
    # maps it, a SIGHUP with a changed GeoJSON rebuilds it in a child process.
    gen large "$LARGE" 0 0 0
    T0=$(date +%s.%N)
    start large
    figure "$LARGE circle zones" "first start (build) → ready" "$(elapsed "$T0")" s
    figure "$LARGE circle zones" "peak RSS while building" "$(awk '/VmHWM/ {print $2}' /proc/$PID/status)" kB
    echo "large, $LARGE zones, first start (the set is built): ready in $(elapsed "$T0") s; $(grep -o 'zone set built: .*' "$DIR/large/err") (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    echo "large, peak RSS of the first start (while building): $(awk '/VmHWM/ {print $2}' /proc/$PID/status) kB"
    sleep 5
    figure "$LARGE circle zones" "idle RSS" "$(rss $PID)" kB
    echo "idle, $LARGE zones: RSS $(rss $PID) kB ($(grep -E '^Rss(Anon|File)' /proc/$PID/status | tr -s ' \t' ' ' | paste -sd' '))"
    kill -TERM $PID; wait $PID || true
    # Again with the set built: exec → READY.
    T0=$(date +%s.%N)
    start large
    figure "$LARGE circle zones" "restart (set mapped) → ready" "$(elapsed "$T0")" s
    echo "large, $LARGE zones, restart with the set built: exec → ready in $(elapsed "$T0") s"
    sleep 5
    echo "idle after the restart: RSS $(rss $PID) kB ($(grep -E '^Rss(Anon|File)' /proc/$PID/status | tr -s ' \t' ' ' | paste -sd' ')); peak $(awk '/VmHWM/ {print $2}' /proc/$PID/status) kB"
    # A changed GeoJSON (one zone's radius) and SIGHUP: built in a child, swapped in.
    sed -i 's/"radius": /"radius": 1/' "$DIR/large/zones.geojson"
    T0=$(date +%s.%N)
    kill -HUP $PID
    i=0; until grep -q "zone set swapped in\|keeping the previous zone set" "$DIR/large/err" 2>/dev/null; do sleep 0.2; i=$((i+1)); [ $i -lt 3000 ] || break; done
    echo "SIGHUP rebuild: $(grep -o 'zone set rebuilt.*' "$DIR/large/err" || grep 'keeping' "$DIR/large/err") (signal → swapped $(elapsed "$T0") s); $(grep -o 'zone set swapped in.*' "$DIR/large/err")"
    sleep 2
    echo "idle after the rebuild: RSS $(rss $PID) kB ($(grep -E '^Rss(Anon|File)' /proc/$PID/status | tr -s ' \t' ' ' | paste -sd' '))"
    kill -TERM $PID; wait $PID || true
fi

if has reload; then
    # Deliveries on time during SIGHUP rebuilds: the large set, one calendar trigger due every
    # second, and REBUILDS (default 3) SIGHUPs, each with a changed GeoJSON (every radius), built
    # in a child and swapped in. Each log line is stamped with the wall clock as it appears (the
    # file polled every 2 ms); a trigger is due at its whole second, so a delivery's lateness is
    # its line's stamp minus that second (the log line follows the GPIO change, in the same turn).
    # The two GeoJSON files are written and synced before the agent starts and swapped by a hard
    # link: a GeoJSON written just before the SIGHUP (EDIT=sed: `sed -i` on it) is on its way to
    # the disk meanwhile, and on ext4 the agent's next commit waits for it (see Benchmarks/README).
    # ROUTE=1: also the demo drive replayed at 10×, crossing a 35 m zone every ~1.2 s (the large
    # set moved off its way): location deliveries during the rebuilds too.
    if [ "${ROUTE:-}" = 1 ]; then gen reload "$LARGE" 0 60 10; else gen reload "$LARGE" 0 60 0; fi
    R=$DIR/reload
    if [ "${EDIT:-}" != sed ]; then
        cp "$R/zones.geojson" "$R/zones-a.geojson"
        sed 's/"radius": /"radius": 1/' "$R/zones.geojson" > "$R/zones-b.geojson"
        sync
    fi
    # The first start builds the set in process: the ticks due meanwhile come at once after it,
    # and their patterns would queue behind each other for the rest of the run. A restart maps
    # the set built (under a second) and starts with no backlog.
    start reload
    kill -TERM $PID; wait $PID || true
    start reload
    python3 -c '
import sys, time
src, dst = sys.argv[1], sys.argv[2]
with open(src, "rb") as f, open(dst, "w") as out:
    buf = b""
    while True:
        chunk = f.read()
        if not chunk:
            time.sleep(0.002); continue
        t = time.time()
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for l in lines: out.write("%.6f %s\n" % (t, l.decode(errors="replace")))
        out.flush()
' "$DIR/reload/err" "$DIR/reload/stamped" &
    WATCH=$!
    L0=$(cut -d' ' -f1-3 /proc/loadavg)
    k=0
    while [ $k -lt "${REBUILDS:-3}" ]; do
        k=$((k+1))
        sleep 3
        if [ "${EDIT:-}" = sed ]; then
            if [ $((k % 2)) -eq 1 ]; then sed -i 's/"radius": /"radius": 1/' "$R/zones.geojson"
            else sed -i 's/"radius": 1/"radius": /' "$R/zones.geojson"; fi
        elif [ $((k % 2)) -eq 1 ]; then ln -f "$R/zones-b.geojson" "$R/zones.geojson"
        else ln -f "$R/zones-a.geojson" "$R/zones.geojson"; fi
        kill -HUP $PID
        i=0; until [ "$(grep -c 'zone set rebuilt\|keeping the previous zone set' "$DIR/reload/err")" -ge $k ]; do sleep 0.2; i=$((i+1)); [ $i -lt 3000 ] || break; done
    done
    sleep 3
    kill -TERM $PID; wait $PID || true
    sleep 0.1; kill $WATCH; wait $WATCH 2>/dev/null || true
    echo "reload: $k SIGHUP rebuilds of $LARGE zones (GeoJSON ${EDIT:-synced, swapped by a link}), a calendar trigger due every second$([ "${ROUTE:-}" = 1 ] && echo ", the demo drive at 10×") (load average $L0 → $(cut -d' ' -f1-3 /proc/loadavg))"
    python3 - "$DIR/reload/stamped" <<'PY'
import calendar, math, re, sys
inside, outside, windows, start = [], [], [], None
delivered = {}
first = None
crossings = []
for line in open(sys.argv[1]):
    t, text = line.split(" ", 1)
    t = float(t)
    if first is None: first = t
    if t == first: continue     # the log before the watcher began (the start)
    if "builds the zone set if the zones changed" in text: start = t
    # A window ends with the swap turn: "swapped in" is logged last in it.
    elif start is not None and ("zone set swapped in" in text or "keeping the previous zone set" in text):
        windows.append((start, t)); start = None
    # A zone entry's line ends with its fix's GNSS time; the replay at 10× puts fix time f at
    # wall time (f - f0) / 10 + c for an unknown c: entries are compared after removing the
    # smallest stamp - f / 10 (their lateness relative to the most punctual one).
    e = re.search(r"delivered p\d+/.* on enter \(fix (\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)Z\)", text)
    if e:
        y, mo, d, h, mi, se = (int(x) for x in e.groups())
        crossings.append((t - calendar.timegm((y, mo, d, h, mi, se)) / 10, start is not None))
    m = re.search(r"delivered minutely-(\d+)[/ ]", text)
    if m:
        s = math.floor(t); s -= (s - int(m.group(1))) % 60      # the trigger's due second
        delivered[s] = t - s
        (inside if start is not None else outside).append(t - s)
def summary(xs):
    if not xs: return "none"
    xs = sorted(xs)
    q = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))] * 1000
    return f"{len(xs)} deliveries, lateness p50 {q(0.5):.1f} ms, p99 {q(0.99):.1f} ms, max {xs[-1] * 1000:.1f} ms"
due = [s for a, b in windows for s in range(math.ceil(a), math.floor(b))]
missing = [s for s in due if s not in delivered]
print(f"reload: during the rebuilds ({', '.join(f'{b - a:.1f} s' for a, b in windows)}): {summary(inside)}; "
      f"{len(due) - len(missing)} of the {len(due)} seconds due meanwhile delivered")
print(f"reload: outside them: {summary(outside)}")
if crossings:
    c0 = min(c for c, _ in crossings)
    for during in (True, False):
        xs = sorted((c - c0) * 1000 for c, w in crossings if w == during)
        if xs: print(f"reload: zone entries (ROUTE=1) {'during the rebuilds' if during else 'outside them'}: {len(xs)}, "
                     f"lateness relative to the most punctual entry p50 {xs[len(xs) // 2]:.1f} ms, max {xs[-1]:.1f} ms")
PY
    # Each SIGHUP: the configuration read again on its own thread (the line says how long the
    # read took there), then, in the turn that applies it, the build's child started (the spawn
    # returns once the child has exec'd); the "longest loop turn" line below covers that turn.
    grep -o 'SIGHUP: configuration reloaded.*\|SIGHUP: process.*started in .*\|zone set rebuilt.*\|zone set swapped in.*' "$DIR/reload/err" || true
    [ -z "${KEEP:-}" ] || { cp "$DIR/reload/stamped" "$KEEP"; cp "$DIR/reload/out" "$KEEP.gpio"; }
    grep "latency\|longest loop turn:\|loop turn took" "$DIR/reload/err" || true
fi
