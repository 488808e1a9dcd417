#!/usr/bin/env bash
# Where each idle UDP echo probe's time goes across one lab link, step by step, from the
# kernel's own clock (issue 17: the median network round trip's excess over 2D +
# serialization). Needs root and a kernel with tracefs (ftrace events: net, sched, syscalls).
#
# A private tracing instance (/sys/kernel/tracing/instances/ws-lat-PID, trace_clock mono,
# events only of this script's descendants: the lab's emulator, the agent, the client) records
# every probe's path: the client's sendto, the frame's transmit into h1's TAP
# (net_dev_start_xmit, the instant the emulator charges the link from), the emulator's TAP
# read, its egress thread's wake-up and write into h2's TAP, h2's receive (netif_receive_skb:
# the agent's kernel receive stamp T2), the agent's wake-up, recvmsg and sendto (T3), the
# answer's transmit into h2's TAP, and back. Each probe of the idle phase gives one value per
# step; the script prints p50 and p90 per step (us) as Markdown, and the network round trip's
# excess the client reported (its JSON) beside the trace's own.
#
#   sudo bash bench/latency-trace.sh [RATE] [DELAY] [SECONDS]      (default 10M 10ms 4)
#   sudo WIRESPEED_BIN=/path/to/wirespeed bash bench/latency-trace.sh ...
#
# The instance is removed on exit (and the lab taken down); the global trace buffer and other
# instances are not touched. Tracing costs each event about a microsecond.
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${1:-10M}
delay=${2:-10ms}
secs=${3:-4}
. bench/lib/wirespeed-bin.sh
tracefs=/sys/kernel/tracing
if [ ! -d "$tracefs/instances" ]; then
    mount -t tracefs nodev "$tracefs" 2>/dev/null || true
fi
[ -d "$tracefs/instances" ] || { echo "latency-trace: no tracefs at $tracefs (mount -t tracefs nodev $tracefs)" >&2; exit 2; }
tmp=$(mktemp -d)
inst=$tracefs/instances/ws-lat-$$
lab=
agent=
cleanup() {
    [ -d "$inst" ] && { echo 0 > "$inst/tracing_on"; rmdir "$inst"; } 2>/dev/null || true
    [ -n "$agent" ] && kill "$agent" 2>/dev/null || true
    [ -n "$lab" ] && "$bin" lab down "$lab" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

mkdir "$inst"
echo mono > "$inst/trace_clock"
echo 16384 > "$inst/buffer_size_kb"
echo 1 > "$inst/options/record-tgid"
echo 1 > "$inst/options/event-fork"
echo "$BASHPID" > "$inst/set_event_pid"
for e in net/net_dev_start_xmit net/netif_receive_skb_entry net/netif_rx_entry \
    sched/sched_wakeup sched/sched_switch \
    syscalls/sys_enter_write syscalls/sys_exit_write syscalls/sys_exit_read \
    syscalls/sys_enter_sendto syscalls/sys_exit_recvmsg syscalls/sys_exit_clock_nanosleep \
    syscalls/sys_exit_poll syscalls/sys_exit_ppoll; do
    echo 1 > "$inst/events/$e/enable"
done
echo 1 > "$inst/tracing_on"

printf '[[host]]\nname = "h1"\n[[host]]\nname = "h2"\n[[link]]\na = "h1"\nb = "h2"\nrate = "%s"\ndelay = "%s"\nqueue = 100\n' "$rate" "$delay" > "$tmp/wl.toml"
lab=$("$bin" lab up "$tmp/wl.toml")
emulator=$(cat "${WIRESPEED_LAB_STATE:-/run/wirespeed-lab}/$lab/pid")
"$bin" lab exec "$lab" h2 -- chrt -f 10 "$bin" serve -B 198.18.0.2 >/dev/null 2>&1 &
agent=$!
sleep 1
echo > "$inst/trace"
"$bin" lab exec "$lab" h1 -- "$bin" latency 198.18.0.2 --idle "${secs}s" -t 0.5s -P 1 \
    --direction up --probe-interval 10ms --json > "$tmp/lat.json" &
client=$!
wait "$client"
echo 0 > "$inst/tracing_on"
cp "$inst/trace" "$tmp/trace.txt"
kill "$agent" 2>/dev/null || true
wait "$agent" 2>/dev/null || true
agent_pid=$agent
agent=
status=$("$bin" lab status "$lab" --json 2>/dev/null || true)
"$bin" lab down "$lab" >/dev/null
lab=
echo "$status" > "$tmp/status.json"

python3 - "$tmp/trace.txt" "$tmp/lat.json" "$emulator" "$agent_pid" "$client" "$rate" "$delay" "$tmp/status.json" <<'PY'
import json, re, statistics as st, sys
trace, latf, emu, agent, client = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rate = {"k": 1e3, "M": 1e6, "G": 1e9}[sys.argv[6][-1]] * float(sys.argv[6][:-1])
d = sys.argv[7]
D = 0.0 if d == "0" else float(d[:-2]) * ({"ms": 1e-3, "us": 1e-6}[d[-2:]])
line = re.compile(r"^\s*(.*)-(\d+)\s+\(\s*(\d+|-+)\)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+)(?:: |\(| -> )(.*)$")
ev = []
for l in open(trace, errors="replace"):
    m = line.match(l)
    if not m:
        continue
    comm, tid, tgid, cpu, t, name, rest = m.groups()
    tgid = int(tgid) if tgid.isdigit() else -1
    ev.append((float(t), int(tid), tgid, name, rest))
ev.sort(key=lambda e: e[0])
def field(rest, key):
    m = re.search(r"\b" + key + r"[=:] ?(\S+?)[,) ]", rest + " ")
    return m.group(1) if m else None
# The echo's frame: Ethernet 14, IPv4 20, UDP 8 and its payload (cookie, sequence, and the
# residence and follow-up fields where the agent has them: 32 or 48 bytes).
PAYLOADS = ("0x20", "0x30")
def frame_of(e):
    return 42 + int(field(e[4], "len"), 16)
def after(t0, pred, limit=0.5):
    for e in ev_from(t0):
        if e[0] > t0 + limit:
            return None
        if pred(e):
            return e
    return None
import bisect
times = [e[0] for e in ev]
def ev_from(t0):
    i = bisect.bisect_left(times, t0)
    return ev[i:]
def before(t1, pred, limit=0.05):
    i = bisect.bisect_right(times, t1) - 1
    while i >= 0 and ev[i][0] >= t1 - limit:
        if pred(ev[i]):
            return ev[i]
        i -= 1
    return None
def is_sendto(e, tgid):
    return e[3] == "sys_sendto" and e[2] == tgid and field(e[4], "len") in PAYLOADS
rows = []
sends = [e for e in ev if is_sendto(e, client)]
for s0 in sends:
    FRAME = frame_of(s0)
    WRITES = {FRAME, FRAME + 10, FRAME + 12}  # with the vnet header where the TAPs carry it
    ser = (FRAME + 4 + 8 + 12) * 8 / rate  # + FCS, preamble, inter-frame gap
    xmit = lambda tid: lambda e: e[3] == "net_dev_start_xmit" and e[1] == tid and field(e[4], "len") == str(FRAME)
    write_enter = lambda e: e[3] == "sys_write" and e[2] == emu and int(field(e[4], "count") or "0", 16) in WRITES
    receive = lambda tid: lambda e: e[3] in ("netif_receive_skb_entry", "netif_rx_entry") and e[1] == tid and field(e[4], "len") == str(FRAME - 14)
    b1 = after(s0[0], xmit(s0[1]), 0.01)
    if not b1: continue
    r1 = after(b1[0], lambda e: e[3] == "sys_read" and e[2] == emu and int(e[4].strip(), 16) in WRITES, 0.05)
    w1 = after(b1[0] + D + ser - 50e-6, write_enter, 0.05)
    if not w1: continue
    n1 = before(w1[0], lambda e: e[1] == w1[1] and e[3] == "sys_clock_nanosleep", 0.002)
    k2 = after(w1[0], receive(w1[1]), 0.005)
    if not k2: continue
    s2 = after(k2[0], lambda e: is_sendto(e, agent), 0.05)
    if not s2: continue
    rcv2 = before(s2[0], lambda e: e[1] == s2[1] and e[3] == "sys_recvmsg", 0.05)
    sw2 = before(rcv2[0] if rcv2 else s2[0], lambda e: e[3] == "sched_switch" and field(e[4], "next_pid") == str(s2[1]), 0.05)
    b2 = after(s2[0], xmit(s2[1]), 0.01)
    if not b2: continue
    r2 = after(b2[0], lambda e: e[3] == "sys_read" and e[2] == emu and int(e[4].strip(), 16) in WRITES, 0.05)
    w2 = after(b2[0] + D + ser - 50e-6, write_enter, 0.05)
    if not w2: continue
    n2 = before(w2[0], lambda e: e[1] == w2[1] and e[3] == "sys_clock_nanosleep", 0.002)
    k4 = after(w2[0], receive(w2[1]), 0.005)
    if not k4: continue
    rc = after(k4[0], lambda e: e[3] == "sys_recvmsg" and e[2] == client and e[4].strip() == field(s0[4], "len"), 0.05)
    us = lambda a, b: (a - b) * 1e6 if a is not None and b is not None else float("nan")
    t = lambda e: e[0] if e else None
    rows.append({
        "client sendto -> h1 xmit (before T1)": us(b1[0], s0[0]),
        "h1 xmit -> emulator read (absorbed into D)": us(t(r1), b1[0]),
        "egress sleep ended before its release (>= 0: on time)": us(b1[0] + ser + D, t(n1)) if n1 else float("nan"),
        "h1 -> h2 release lateness (write - xmit - ser - D)": us(w1[0], b1[0] + ser + D),
        "TAP write -> h2 receive (T2)": us(k2[0], w1[0]),
        "h1 -> h2 crossing excess (T2 - xmit - ser - D)": us(k2[0], b1[0] + ser + D),
        "agent: T2 -> scheduled in": us(t(sw2), k2[0]),
        "agent: scheduled in -> recvmsg returns": us(t(rcv2), t(sw2)),
        "agent: recvmsg returns -> sendto (T3)": us(s2[0], t(rcv2)),
        "agent: sendto -> h2 xmit (the agent's send path: in the residence only with follow-ups)": us(b2[0], s2[0]),
        "h2 xmit -> emulator read (absorbed into D)": us(t(r2), b2[0]),
        "egress sleep ended before its release, back": us(b2[0] + ser + D, t(n2)) if n2 else float("nan"),
        "h2 -> h1 release lateness": us(w2[0], b2[0] + ser + D),
        "TAP write -> h1 receive (T4)": us(k4[0], w2[0]),
        "h2 -> h1 crossing excess (T4 - xmit - ser - D)": us(k4[0], b2[0] + ser + D),
        "h1 receive -> client recvmsg returns": us(t(rc), k4[0]),
        "network round trip excess, traced, residence to the agent's sendto ((T4 - xmit1) - (sendto - T2) - 2 ser - 2D)": us(k4[0] - b1[0] - (s2[0] - k2[0]), 2 * ser + 2 * D),
        "network round trip excess, traced, residence to the agent's xmit ((T4 - xmit1) - (xmit2 - T2) - 2 ser - 2D)": us(k4[0] - b1[0] - (b2[0] - k2[0]), 2 * ser + 2 * D),
        "_at": s0[0],
        "_truth": 2 * ser + 2 * D,
    })
doc = json.load(open(latf))["result"]
if not rows:
    sys.exit("latency-trace: no probe could be followed through the trace")
t0 = rows[0]["_at"]
rows = [r for r in rows if r["_at"] - t0 < doc["idle_seconds"] - 0.5]
k = next(k for k in doc["kinds"] if k["kind"] == "udp_echo")
net = k.get("network_round_trip") or {}
truth = rows[0]["_truth"]
def pct(v, q):
    v = sorted(x for x in v if x == x)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")
print(f"{len(rows)} idle probes followed, {sys.argv[6]} link, {d} each way (2D + serialization = {truth * 1e6:.1f} us)")
print()
print("| step | p50 us | p90 us | min us |")
print("|---|---|---|---|")
for key in rows[0]:
    if key.startswith("_"): continue
    v = [r[key] for r in rows]
    print(f"| {key} | {pct(v, 0.5):.1f} | {pct(v, 0.9):.1f} | {pct(v, 0.0):.1f} |")
if net:
    print(f"| network round trip excess, the client's report (p50; best) | {net['idle']['p50_ms'] * 1e3 - truth * 1e6:.1f} | | {net['idle']['min_ms'] * 1e3 - truth * 1e6:.1f} |")
    print(f"| idle probes whose residence reached the agent's transmit stamp (follow-ups) | {net.get('idle_to_transmit_stamp', 0)} of {net['idle']['probes']} | | |")
print(f"| raw round trip excess, the client's report (p50) | {k['idle']['p50_ms'] * 1e3 - truth * 1e6:.1f} | | {k['idle']['min_ms'] * 1e3 - truth * 1e6:.1f} |")
try:
    st_ = json.load(open(sys.argv[8]))
    for p in st_.get("result", st_).get("ports", []):
        print(f"port {p.get('from')} -> {p.get('to')}: lateness {json.dumps(p.get('lateness'))} stamps {json.dumps(p.get('ingress_stamps'))}")
except Exception as e:
    pass
PY
