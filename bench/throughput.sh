#!/usr/bin/env bash
# Side-by-side loopback throughput: wirespeed tcp/udp against iperf3 (and iperf 2 and nuttcp
# for TCP), same congestion control and CPU placement in each pair, interleaved repetitions,
# min/median/max. Writes the "wirespeed tcp / udp vs iperf3" section of bench/RESULTS.md.
#
#   bash bench/throughput.sh            # 5 repetitions of 5 s each (about 10 minutes)
#   REPS=3 SECS=2 bash bench/throughput.sh
#
# Traffic goes to 127.0.0.1 only. Every server is started here on a fixed high port, is
# one-off (-1) or killed by PID when its run ends.
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-5}
SECS=${SECS:-5}
CC=${CC:-cubic}
CLIENT_CPU=${CLIENT_CPU:-0}
SERVER_CPU=${SERVER_CPU:-1}
PORT=${PORT:-15211}
# UDP socket buffers for both tools (wirespeed asks 4 MiB by itself, iperf3 keeps the kernel's
# default): the same explicit -w for both, so the comparison is of the tools.
UDP_BUF=${UDP_BUF:-4194304}
# The "paced" UDP 64 B row: wirespeed at PACE times the packets/s iperf3 reached at -b 0 in the
# same repetition. -b 0 measures how much a receiver takes before it drops; this row asks the
# target's question directly: can the tool deliver several times iperf3's packet rate without
# more loss than iperf3 had?
PACE=${PACE:-3}
OUT=bench/RESULTS.md
TMP=$(mktemp -d /tmp/ws-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

need=()
command -v iperf3 >/dev/null || need+=(iperf3)
command -v iperf >/dev/null || need+=(iperf)
command -v nuttcp >/dev/null || need+=(nuttcp)
if ((${#need[@]})); then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
cargo build --release -q
WS=$PWD/target/release/wirespeed

# One measurement per line in $TMP/<case>.<tool>: "bits_per_second packets_per_second loss_percent cpu_seconds_per_GB"
ws_tcp() { # extra flags...
    "$WS" tcp -t "$SECS" -C "$CC" -A "$CLIENT_CPU,$SERVER_CPU" -i 0 -J "$@" | python3 -c '
import json, sys
d = json.load(sys.stdin)["result"]["end"]
r = d["sum_received"]; c = d["cpu_utilization_percent"]
cpu = (c["host_total"] + c["remote_total"]) / 100 * r["seconds"]
print(r["bits_per_second"], 0, 0, cpu / (r["bytes"] / 1e9))'
}
# The same test against a separate `wirespeed serve` process (pinned like iperf3's server), so
# that client and agent are two processes as with iperf3.
ws_tcp_serve() { # extra flags...
    timeout $((SECS + 30)) taskset -c "$SERVER_CPU" "$WS" serve -1 -B 127.0.0.1 -p "$PORT" >/dev/null 2>&1 &
    local pid=$!
    listening "$PORT"
    ws_tcp 127.0.0.1 -p "$PORT" "$@"
    wait "$pid" 2>/dev/null || true
}
# Waits (at most 5 s) until something listens on TCP port $1: a busy host can take longer than
# a fixed sleep to start a server, and a one-off server that misses its client waits forever.
listening() {
    for _ in $(seq 50); do
        ss -ltn "sport = :$1" 2>/dev/null | grep -q LISTEN && return 0
        sleep 0.1
    done
    return 1
}
iperf3_run() { # client flags...
    timeout $((SECS + 30)) taskset -c "$SERVER_CPU" iperf3 -s -1 -p "$PORT" >/dev/null 2>&1 &
    local pid=$!
    listening "$PORT"
    iperf3 -c 127.0.0.1 -p "$PORT" -t "$SECS" -A "$CLIENT_CPU" -J "$@" > "$TMP/iperf3.json" || true
    wait "$pid" 2>/dev/null || true
}
iperf3_tcp() {
    iperf3_run -C "$CC" "$@"
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["end"]
r = d["sum_received"]; c = d["cpu_utilization_percent"]
cpu = (c["host_total"] + c["remote_total"]) / 100 * r["seconds"]
print(r["bits_per_second"], 0, 0, cpu / (r["bytes"] / 1e9))' "$TMP/iperf3.json"
}
ws_udp() { # length rate [extra flags]
    "$WS" udp -t "$SECS" -l "$1" -b "$2" -w "$UDP_BUF" -A "$CLIENT_CPU,$SERVER_CPU" -i 0 -J "${@:3}" | python3 -c '
import json, sys
d = json.load(sys.stdin)["result"]["end"]
r = d["sum_received"]; s = d["sum_sent"]; c = d["cpu_utilization_percent"]
cpu = (c["host_total"] + c["remote_total"]) / 100 * s["seconds"]
print(r["bits_per_second"], r["datagrams"] / s["seconds"], r["lost_percent"], cpu / max(r["bytes"], 1) * 1e9)'
}
iperf3_udp() { # length
    iperf3_run -u -l "$1" -b 0 -w "$UDP_BUF"
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["end"]
r = d["sum_received"]; s = d["sum_sent"]; c = d["cpu_utilization_percent"]
n = int(sys.argv[2])
cpu = (c["host_total"] + c["remote_total"]) / 100 * s["seconds"]
print(r["bits_per_second"], r["bytes"] / n / s["seconds"], r["lost_percent"], cpu / max(r["bytes"], 1) * 1e9)' "$TMP/iperf3.json" "$1"
}
iperf2_tcp() {
    taskset -c "$SERVER_CPU" iperf -s -p "$PORT" >/dev/null 2>&1 &
    local pid=$!
    listening "$PORT"
    # -y C: CSV, the last field is bits per second.
    taskset -c "$CLIENT_CPU" iperf -c 127.0.0.1 -p "$PORT" -t "$SECS" -Z "$CC" -y C | tail -1 | awk -F, '{print $NF, 0, 0, "nan"}'
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
}
nuttcp_tcp() {
    taskset -c "$SERVER_CPU" nuttcp -S -P "$((PORT + 1))" -p "$((PORT + 2))" --nofork >/dev/null 2>&1 &
    local pid=$!
    listening "$((PORT + 1))"
    # nuttcp has no congestion-control flag: it runs with the system default.
    taskset -c "$CLIENT_CPU" nuttcp -P "$((PORT + 1))" -p "$((PORT + 2))" -T "$SECS" -fparse 127.0.0.1 \
        | sed -n 's/.*rate_Mbps=\([0-9.]*\).*/\1/p' | awk '{print $1 * 1e6, 0, 0, "nan"}'
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
}

cases=(tcp1 tcp2 udp64 udp1472)
for ((rep = 1; rep <= REPS; rep++)); do
    echo "repetition $rep/$REPS" >&2
    ws_tcp >> "$TMP/tcp1.wirespeed"
    iperf3_tcp >> "$TMP/tcp1.iperf3"
    ws_tcp_serve >> "$TMP/tcp1.wirespeed-serve"
    iperf2_tcp >> "$TMP/tcp1.iperf2"
    nuttcp_tcp >> "$TMP/tcp1.nuttcp"
    ws_tcp -P 2 >> "$TMP/tcp2.wirespeed"
    iperf3_tcp -P 2 >> "$TMP/tcp2.iperf3"
    ws_udp 64 0 >> "$TMP/udp64.wirespeed"
    iperf3_udp 64 >> "$TMP/udp64.iperf3"
    rate=$(tail -1 "$TMP/udp64.iperf3" | awk -v pace="$PACE" '{printf "%d", $2 * pace * 64 * 8}')
    ws_udp 64 "$rate" >> "$TMP/udp64.wirespeed-paced"
    ws_udp 64 0 --no-gso >> "$TMP/udp64.wirespeed-no-gso"
    ws_udp 1472 0 >> "$TMP/udp1472.wirespeed"
    iperf3_udp 1472 >> "$TMP/udp1472.iperf3"
    ws_udp 1472 0 --no-gso >> "$TMP/udp1472.wirespeed-no-gso"
done

python3 - "$TMP" "$OUT" "$REPS" "$SECS" "$CC" "$CLIENT_CPU" "$SERVER_CPU" "$UDP_BUF" "$PACE" <<'PY'
import os, statistics, subprocess, sys, time
tmp, out, reps, secs, cc, ccpu, scpu, ubuf, pace = sys.argv[1:]
def load(case, tool):
    path = os.path.join(tmp, f"{case}.{tool}")
    if not os.path.exists(path):
        return []
    rows = []
    for line in open(path):
        f = line.split()
        if len(f) == 4:
            rows.append([float(x) for x in f])
    return rows
def mmm(xs, scale, fmt):
    xs = [x for x in xs if x == x]
    if not xs:
        return "n/a"
    xs = sorted(x / scale for x in xs)
    return f"{fmt.format(xs[0])} / **{fmt.format(statistics.median(xs))}** / {fmt.format(xs[-1])}"
def med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")
lines = []
lines.append("## wirespeed tcp / udp vs iperf3 (loopback)\n")
kernel = os.uname().release
loadavg = open("/proc/loadavg").read().split()[:3]
lines.append(f"Made by `REPS={reps} SECS={secs} bash bench/throughput.sh` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"kernel {kernel}, {os.cpu_count()} CPUs, load average {' '.join(loadavg)} when it finished. "
             f"Each pair runs interleaved, {reps} repetitions of {secs} s; client pinned to CPU {ccpu}, server/agent to CPU {scpu} "
             f"(wirespeed `-A {ccpu},{scpu}`, iperf3 `-A {ccpu}` with the server under `taskset -c {scpu}`, iperf 2 and nuttcp under taskset); "
             f"TCP congestion control `{cc}` for wirespeed (`-C`), iperf3 (`-C`) and iperf 2 (`-Z`); nuttcp has no such flag and uses the "
             f"system default. Buffer sizes: each tool's default write size (128 KiB for wirespeed and iperf3); TCP socket buffers left to "
             f"kernel autotuning in both; UDP socket buffers `-w {ubuf}` in both (clamped by the kernel to net.core.rmem_max/wmem_max). "
             f"Figures are min / **median** / max.\n")
lines.append("When the load average is above the number of CPUs (other work shares the host), both tools lose CPU time unpredictably and the min-max spread is wide: compare the medians, and rerun on an idle host before drawing a conclusion.\n")
lines.append("| case | tool | received rate, Gbit/s | received packets/s | loss % | CPU s per GB (both ends) |")
lines.append("|---|---|---|---|---|---|")
cmds = {
    ("tcp1", "wirespeed"): f"wirespeed tcp -t {secs} -C {cc} -A {ccpu},{scpu}",
    ("tcp1", "iperf3"): f"iperf3 -c 127.0.0.1 -t {secs} -C {cc} -A {ccpu}",
    ("tcp1", "iperf2"): f"iperf -c 127.0.0.1 -t {secs} -Z {cc}",
    ("tcp1", "nuttcp"): f"nuttcp -T {secs} 127.0.0.1",
    ("tcp2", "wirespeed"): f"wirespeed tcp -P 2 -t {secs} -C {cc} -A {ccpu},{scpu}",
    ("tcp2", "iperf3"): f"iperf3 -c 127.0.0.1 -P 2 -t {secs} -C {cc} -A {ccpu}",
    ("udp64", "wirespeed"): f"wirespeed udp -l 64 -b 0 -w {ubuf} -t {secs} -A {ccpu},{scpu}",
    ("udp64", "iperf3"): f"iperf3 -c 127.0.0.1 -u -l 64 -b 0 -w {ubuf} -t {secs} -A {ccpu}",
    ("udp1472", "wirespeed"): f"wirespeed udp -l 1472 -b 0 -w {ubuf} -t {secs} -A {ccpu},{scpu}",
    ("udp1472", "iperf3"): f"iperf3 -c 127.0.0.1 -u -l 1472 -b 0 -w {ubuf} -t {secs} -A {ccpu}",
    ("udp64", "wirespeed-paced"): f"wirespeed udp -l 64 -b RATE -w {ubuf} -t {secs} -A {ccpu},{scpu}   # RATE = {pace} x iperf3's packets/s in the same repetition x 512 bit",
    ("udp64", "wirespeed-no-gso"): f"wirespeed udp -l 64 -b 0 -w {ubuf} --no-gso -t {secs} -A {ccpu},{scpu}",
    ("udp1472", "wirespeed-no-gso"): f"wirespeed udp -l 1472 -b 0 -w {ubuf} --no-gso -t {secs} -A {ccpu},{scpu}",
    ("tcp1", "wirespeed-serve"): f"taskset -c {scpu} wirespeed serve -1 -B 127.0.0.1 -p PORT; wirespeed tcp 127.0.0.1 -p PORT -t {secs} -C {cc} -A {ccpu},{scpu}",
}
names = {"tcp1": "TCP, 1 stream", "tcp2": "TCP, -P 2", "udp64": "UDP 64 B, -b 0", "udp1472": "UDP 1472 B, -b 0"}
ratios = []
for case in ["tcp1", "tcp2", "udp64", "udp1472"]:
    for tool in ["wirespeed", "wirespeed-serve", "wirespeed-paced", "iperf3", "iperf2", "nuttcp", "wirespeed-no-gso"]:
        rows = load(case, tool)
        if not rows:
            continue
        udp = case.startswith("udp")
        lines.append(f"| {names[case]} | {tool} | {mmm([r[0] for r in rows], 1e9, '{:.2f}')} | "
                     f"{mmm([r[1] for r in rows], 1, '{:,.0f}') if udp else '-'} | "
                     f"{mmm([r[2] for r in rows], 1, '{:.1f}') if udp else '-'} | {mmm([r[3] for r in rows], 1, '{:.2f}')} |")
    i = load(case, "iperf3")
    for tool in ["wirespeed", "wirespeed-serve", "wirespeed-paced", "wirespeed-no-gso"]:
        w = load(case, tool)
        if w and i:
            k = 1 if case.startswith("udp") else 0
            loss = (f"; loss median {med([r[2] for r in w]):.2f}% against {med([r[2] for r in i]):.2f}%"
                    if k else "")
            # Runs of one repetition are back to back and share the host's load at that moment:
            # the median of per-repetition ratios is steadier than the ratio of medians when the
            # load swings between repetitions.
            paired = [a[k] / b[k] for a, b in zip(w, i) if b[k] > 0]
            if paired:
                loss += (f"; per-repetition ratios {', '.join(f'{x:.2f}' for x in paired)} "
                         f"(median {statistics.median(paired):.2f}x)")
            ratios.append((f"{names[case]} ({tool})", med([r[k] for r in w]) / med([r[k] for r in i]),
                           med([r[3] for r in w]) / med([r[3] for r in i]),
                           "packets/s received" if k else "received rate", loss))
lines.append("")
lines.append("`wirespeed` UDP rows are the default mode: UDP_SEGMENT (GSO) on the sender where the kernel takes it, "
             "UDP_GRO on the receiver: up to 64 datagrams per system call and, on loopback, per trip through the stack, each "
             "datagram still carrying its own sequence number and send time (the result's `udp i/o` line / `io_method` says "
             "which way each end went). `wirespeed-no-gso` rows: `--no-gso`, one datagram per message with sendmmsg/recvmmsg, "
             "which is what iperf3 3.12 (one send per datagram, no offload) can be compared with datagram for datagram. "
             f"`wirespeed-paced`: the default mode paced with `-b` at {pace}x the packets/s iperf3 reached at `-b 0` in the same "
             "repetition (as fast as possible, both tools lose datagrams whenever the receiving thread is descheduled for "
             "longer than its buffer lasts; paced, the question is whether the tool delivers that rate without more loss). "
             "`wirespeed-serve`: the TCP test against a separate `wirespeed serve` process pinned to the server CPU, "
             "instead of the in-process agent.\n")
lines.append("Ratios of medians, wirespeed / iperf3:\n")
for name, r, cpu, what, loss in ratios:
    lines.append(f"- {name}: {what} **{r:.2f}x**; CPU seconds per GB {cpu:.2f}x (below 1 is better){loss}")
lines.append("\nCommands (loopback, 127.0.0.1):\n")
lines.append("```")
for (case, tool), c in cmds.items():
    lines.append(c)
lines.append("```\n")
section = "\n".join(lines) + "\n"
text = open(out).read() if os.path.exists(out) else "# Benchmarks\n\n"
start = text.find("## wirespeed tcp / udp vs iperf3")
if start >= 0:
    nxt = text.find("\n## ", start + 3)
    text = text[:start] + section + (text[nxt + 1:] if nxt >= 0 else "")
else:
    text = text.rstrip("\n") + "\n\n" + section
open(out, "w").write(text)
print(section)
PY
