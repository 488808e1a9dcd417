#!/usr/bin/env bash
# Where the idle round trip across a lab link exceeds 2D + serialization (issue 17: the ground
# truth wants 20 us; the lab test finds 230-290 us). Needs root and python3. For each link
# (10 Gbit/s with no delay: crossings alone; 10 Mbit/s with none; 10 Mbit/s with 10 ms each
# way), REPS times: a fresh lab, an agent on h2, and `wirespeed latency --idle 4s` from h1,
# while an AF_PACKET socket in each namespace timestamps every UDP frame on eth0 (the kernel's
# SO_TIMESTAMPNS, the same clock in both namespaces). Each echo probe is then seen four times
# (leaving h1, reaching h2, its answer leaving h2, reaching h1), which splits its round trip:
#   h1 -> h2 and h2 -> h1 excess: the crossing of the emulator (TAP read, schedule, release,
#       TAP write, the other namespace's receive), less the wire's serialization and delay;
#   agent turnaround: from the request reaching h2's eth0 to the answer leaving it (the
#       agent's wake-up, its receive and send: user space);
#   client side: the probe's own round trip less eth0-to-eth0 (its kernel timestamps).
# Prints the medians over the idle phase, min | median | max over the repetitions, as
# Markdown, and the same probe on loopback for reference. The capture sockets wake for every
# frame and so load the CPU a little themselves. Where the agent reports its residence time
# (issue 17), also the network round trip (raw less residence, to the agent's kernel stamp of
# the reply entering its device queue where it sends follow-ups) over 2D + serialization: its
# median and its best probe. bench/latency-trace.sh splits one lab's probes step by step from
# the kernel's trace.
#
#   sudo bash bench/latency-idle.sh [REPS]
#   sudo WIRESPEED_BIN=/path/to/wirespeed bash bench/latency-idle.sh [REPS]   (another build)
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
. bench/lib/wirespeed-bin.sh
tmp=$(mktemp -d)
lab=
cleanup() {
    [ -n "$lab" ] && "$bin" lab down "$lab" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

cat > "$tmp/cap.py" <<'PY'
# Every UDP frame on eth0 for SECONDS: kernel timestamp, direction, ports, the first 24
# payload bytes (the echo's cookie and sequence: the same in a request and its answer).
import json, socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.bind(("eth0", 0))
s.setsockopt(socket.SOL_SOCKET, 35, 1)  # SO_TIMESTAMPNS
s.settimeout(0.2)
end, n = time.time() + float(sys.argv[1]), 0
while time.time() < end and n < 100000:
    try:
        data, anc, _, addr = s.recvmsg(2048, 64)
    except socket.timeout:
        continue
    if len(data) < 42 or data[12:14] != b"\x08\x00" or data[23] != 17:
        continue
    ts = next(struct.unpack("qq", v[:16]) for l, k, v in anc if l == socket.SOL_SOCKET and k == 35)
    u = 14 + (data[14] & 15) * 4
    sport, dport = struct.unpack("!HH", data[u:u + 4])
    print(json.dumps({"t": ts[0] * 10**9 + ts[1], "out": addr[2] == 4, "sport": sport,
                      "dport": dport, "p": data[u + 8:u + 32].hex()}))
    n += 1
PY

cat > "$tmp/split.py" <<'PY'
# RATE D_US h1.jsonl h2.jsonl latency.json -> probe-excess h1h2-excess turnaround h2h1-excess
# client network-p50-excess network-min-excess
import json, statistics as st, sys
from collections import Counter
rate, d = float(sys.argv[1]), float(sys.argv[2])
c1 = [json.loads(l) for l in open(sys.argv[3])]
c2 = [json.loads(l) for l in open(sys.argv[4])]
doc = json.load(open(sys.argv[5]))["result"]
idle_end = doc["idle_seconds"]
port = Counter(o["dport"] for o in c1 if o["out"]).most_common(1)[0][0]
def at(c, out, key, val):
    return {o["p"]: o["t"] for o in c if o["out"] == out and o[key] == val}
a, b = at(c1, True, "dport", port), at(c2, False, "dport", port)
c, e = at(c2, True, "sport", port), at(c1, False, "sport", port)
rows = [(b[p] - a[p], c[p] - b[p], e[p] - c[p], e[p] - a[p], a[p]) for p in a if p in b and p in c and p in e]
t0 = min(r[4] for r in rows)
rows = [r for r in rows if (r[4] - t0) / 1e9 < idle_end - 0.5]  # the idle phase only
m = lambda i: st.median(r[i] for r in rows) / 1e3
k = next(k for k in doc["kinds"] if k["kind"] == "udp_echo")
net = k.get("network_round_trip")
# The echo's IP packet (52 bytes, 60 with the residence field, 76 with the follow-up's, as the
# client reports it) in an Ethernet frame of 38 more.
ser = ((net.get("probe_ip_bytes") or 60) if net else 52) + 38
ser = ser * 8 / rate * 1e6
u = k["idle"]["p50_ms"] * 1e3
nu = f'{net["idle"]["p50_ms"] * 1e3 - 2 * ser - 2 * d:.1f} {net["idle"]["min_ms"] * 1e3 - 2 * ser - 2 * d:.1f}' if net else "nan nan"
print(f"{u - 2 * ser - 2 * d:.1f} {m(0) - ser - d:.1f} {m(1):.1f} {m(2) - ser - d:.1f} {u - m(3):.1f} {nu}")
PY

declare -A res
for link in "10G 0" "10M 0" "10M 10ms"; do
    set -- $link
    rate=$1 delay=$2
    ratebits=$(python3 -c "print({'10G':1e10,'10M':1e7}['$rate'])")
    d=$(python3 -c "print({'0':0,'10ms':10000}['$delay'])")
    printf '[[host]]\nname = "h1"\n[[host]]\nname = "h2"\n[[link]]\na = "h1"\nb = "h2"\nrate = "%s"\ndelay = "%s"\nqueue = 100\n' "$rate" "$delay" > "$tmp/link.toml"
    for ((r = 0; r < reps; r++)); do
        lab=$("$bin" lab up "$tmp/link.toml")
        "$bin" lab exec "$lab" h2 -- "$bin" serve -B 198.18.0.2 >/dev/null 2>&1 &
        agent=$!
        sleep 1
        ip netns exec "ws-$lab-h1" python3 "$tmp/cap.py" 5 > "$tmp/h1.jsonl" &
        c1=$!
        ip netns exec "ws-$lab-h2" python3 "$tmp/cap.py" 5 > "$tmp/h2.jsonl" &
        c2=$!
        sleep 0.3
        "$bin" lab exec "$lab" h1 -- "$bin" latency 198.18.0.2 --idle 4s -t 0.5s -P 1 --direction up --json > "$tmp/lat.json"
        wait "$c1" "$c2"
        kill "$agent" 2>/dev/null || true
        wait "$agent" 2>/dev/null || true
        "$bin" lab down "$lab" >/dev/null
        lab=
        res["$link"]+="$(python3 "$tmp/split.py" "$ratebits" "$d" "$tmp/h1.jsonl" "$tmp/h2.jsonl" "$tmp/lat.json")"$'\n'
    done
done
loop=()
for ((r = 0; r < reps; r++)); do
    loop+=("$("$bin" latency --idle 3s -t 0.5s -P 1 --direction up --json | python3 -c 'import json,sys; d=json.load(sys.stdin)["result"]; print(next(k for k in d["kinds"] if k["kind"]=="udp_echo")["idle"]["p50_ms"]*1e3)')")
done

stats() { python3 -c 'import sys,math,statistics as s; v=sorted(float(x) for x in sys.argv[1:] if not math.isnan(float(x))); print(f"{v[0]:.0f} / {s.median(v):.0f} / {v[-1]:.0f}" if v else "-")' "$@"; }
echo "| link ($reps labs; min / median / max over the labs, us) | raw probe p50 over 2D + serialization | network p50 over it | network best over it | h1 -> h2 crossing excess | agent turnaround | h2 -> h1 crossing excess | client side |"
echo "|---|---|---|---|---|---|---|---|"
for link in "10G 0" "10M 0" "10M 10ms"; do
    cols=()
    for i in 1 2 3 4 5 6 7; do
        cols+=("$(stats $(printf '%s' "${res[$link]}" | awk -v i="$i" 'NF {print $i}'))")
    done
    echo "| $link | ${cols[0]} | ${cols[5]} | ${cols[6]} | ${cols[1]} | ${cols[2]} | ${cols[3]} | ${cols[4]} |"
done
echo "| loopback (no lab) | UDP echo idle p50 $(stats "${loop[@]}") | | | | | | |"
