#!/usr/bin/env bash
# Aggregate packet rate of `wirespeed load` against `iperf3 -u -b 0` with the same packets on
# loopback: 1 and 2 generators, 64- and 1536-byte packets (seed 000 lengths: Ethernet header
# and data; the UDP payload is the length less 14 + 20 + 8 bytes), interleaved repetitions,
# min / median / max. Writes the "wirespeed load vs iperf3 -u" section of bench/RESULTS.md.
#
#   bash bench/load.sh                 # 5 repetitions, 3 s transmissions (about 6 minutes)
#   REPS=3 SECS=2 bash bench/load.sh
#
# Traffic goes to 127.0.0.1 only; every iperf3 server is started here on a high port, one-off
# (-1), and waited for by PID.
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-5}
SECS=${SECS:-3}
PORT=${PORT:-15311}
OUT=bench/RESULTS.md
TMP=$(mktemp -d /tmp/ws-bench-load.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

command -v iperf3 >/dev/null || {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends iperf3 >/dev/null
}
cargo build --release -q -p wirespeed
WS=$PWD/target/release/wirespeed
MEASURE=$(python3 -c "print(max(0.5, $SECS / 2))")

# wirespeed load: "sent_pps received_pps" (received = at the counting sink; "-" with sink self).
ws_load() { # hosts length sink
    "$WS" load --local "$1" --hosts "$1" --lengths "$2" --sink "$3" --settle 0.3s \
        --transmit "${SECS}s" --measure "${MEASURE}s" --cooldown 0.2s --no-model --json |
        python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]["rows"][0]
pps = r["measured"]["packets_per_second"]
loss = r["loss_at_sink"]
print(pps, "-" if loss is None else pps * (1 - loss))'
}
# iperf3 -u -b 0, N parallel streams: "sent_pps received_pps".
iperf3_udp() { # streams length
    local payload=$(($2 - 42))
    iperf3 -s -1 -p "$PORT" >/dev/null 2>&1 &
    local pid=$!
    sleep 0.3
    iperf3 -c 127.0.0.1 -p "$PORT" -u -b 0 -l "$payload" -P "$1" -t "$SECS" -J >"$TMP/i.json" || true
    wait "$pid" 2>/dev/null || true
    python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["end"]
s = e.get("sum_sent") or e["sum"]
r = e.get("sum_received") or e["sum"]
sent = s["packets"] / s["seconds"]
lost = r.get("lost_packets", 0)
print(sent, (r["packets"] - lost) / r["seconds"])' "$TMP/i.json"
}

cases=("1 64" "1 1536" "2 64" "2 1536")
for ((rep = 1; rep <= REPS; rep++)); do
    for c in "${cases[@]}"; do
        set -- $c
        ws_load "$1" "$2" self >>"$TMP/$1-$2.ws-self"
        ws_load "$1" "$2" 1 >>"$TMP/$1-$2.ws-sink"
        iperf3_udp "$1" "$2" >>"$TMP/$1-$2.iperf3"
    done
    echo "repetition $rep of $REPS done" >&2
done

python3 - "$TMP" "$OUT" "$REPS" "$SECS" "$MEASURE" <<'PY'
import os, statistics, sys, subprocess, datetime
tmp, out, reps, secs, measure = sys.argv[1:6]
def mmm(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return f"{min(xs):,.0f} / **{statistics.median(xs):,.0f}** / {max(xs):,.0f}"
def col(path, i):
    vals = []
    for line in open(path):
        v = line.split()[i]
        vals.append(None if v == "-" else float(v))
    return vals
kernel = os.uname().release
load = open("/proc/loadavg").read().split()[:3]
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
lines = [
    "## wirespeed load vs iperf3 -u (loopback packet rate)",
    "",
    f"Made by `REPS={reps} SECS={secs} bash bench/load.sh` on {now}, kernel {kernel}, "
    f"{os.cpu_count()} CPUs, load average {' '.join(load)} when it finished (other engineers "
    "were compiling on the same cores). `wirespeed load` with N in-process agents "
    f"(`--local N --hosts N`), {secs} s transmissions of which the middle {measure} s are "
    "counted, each host sending as fast as it can (`sendto` per packet with a kernel TX "
    "software timestamp read back from the error queue); `--sink self` is the seed's "
    "receiver off (each host sends to its own socket, never read), `--sink 1` sends every "
    "host's packets to host 1's counting sink. iperf3: `-u -b 0 -l LENGTH-42 -P N`, sender "
    "and receiver packet rates from its JSON. Packets/s summed over the generators, "
    "min / **median** / max over the repetitions.",
    "",
    "| generators | length, bytes | tool | sent packets/s | received packets/s |",
    "|---|---|---|---|---|",
]
for n, length in [("1", "64"), ("1", "1536"), ("2", "64"), ("2", "1536")]:
    base = f"{tmp}/{n}-{length}"
    for tool, suffix in [("wirespeed load --sink self", "ws-self"),
                         ("wirespeed load --sink 1", "ws-sink"),
                         ("iperf3 -u -b 0", "iperf3")]:
        p = f"{base}.{suffix}"
        lines.append(f"| {n} | {length} | {tool} | {mmm(col(p, 0))} | {mmm(col(p, 1))} |")
lines.append("")
section = "\n".join(lines) + "\n"
text = open(out).read() if os.path.exists(out) else "# Benchmark results\n\n"
head = "## wirespeed load vs iperf3 -u"
if head in text:
    start = text.index(head)
    nxt = text.find("\n## ", start + 1)
    text = text[:start] + section + ("" if nxt < 0 else text[nxt + 1:])
else:
    text = text.rstrip("\n") + "\n\n" + section
open(out, "w").write(text)
print(section)
PY
