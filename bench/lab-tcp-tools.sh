#!/usr/bin/env bash
# wirespeed tcp against iperf3 through one two-host lab (issue 20, the tool side). Like with
# like: the same lab (RATE, 1 ms each way, queue 1000 frames), the same congestion control
# (cubic), the same default buffers (kernel autotuning at both ends), the client in h1 sending
# to a one-test server in h2 (iperf3 -s -1, wirespeed serve -1), and the same measured window:
# 2 s of slow start left out, then SECONDS counted. (iperf3's -O comes on top of its -t;
# wirespeed's -O is inside its -t: iperf3 -t S -O 2 and wirespeed tcp -t S+2 -O 2 both run
# S+2 seconds and count the last S.) The tools alternate REPS times. Per run: received rate
# against the envelope ceiling (1448/1538 of the rate), the ratio to the iperf3 run before it,
# retransmits, each tool's CPU (sender, receiver, share of a core), and from `lab status`
# around the run: data frames, ACK frames per 100 data frames (the reverse port), queue drops
# and host-TAP drops of the data direction, and the emulator's CPU (share of a core, both
# directions). Then min/median/max per tool and the ratio of the medians, with the load average.
# Losses, side by side per tool: the tool's own retransmits (counted window, after -O), the
# sender's retransmitted segments over the whole run (`nstat` TcpRetransSegs in h1's namespace,
# which only this lab's connections use: slow start included, so it compares with the queue
# drops, which cover the whole run too), and the emulator's queue drops. Why they differ: the
# sender's window use, the median over the counted intervals of rate x srtt / cwnd from the
# tool's own JSON (iperf3's snd_cwnd and rtt, wirespeed's cwnd_bytes and rtt_seconds): near 1
# the sender keeps its congestion window full (window-limited: cubic grows it until the queue
# overflows, the loss a bulk TCP flow meets on this path), well below 1 it does not (limited by
# its own writes or by the receiver's window: the queue is never filled). Also per run: the
# cwnd at which HyStart ended slow start (TCPHystartTrainCwnd/DelayCwnd) and the receiver's
# zero-window advertisements (TCPWantZeroWindowAdv in h2). The summary pools the runs of both
# tools by window use, so that losses are compared between runs that used their window alike.
# Needs root and iperf3. Builds its own lab (198.18.0.0/24, name tt-*, namespaces ws-tt-*) and
# removes it on every exit.
# Usage: bench/lab-tcp-tools.sh [SECONDS] [REPS] [RATE]   (default 8 s, 3 reps, 10G)
# WIRESPEED_ARGS adds flags to wirespeed tcp (e.g. "-l 64KiB"); IPERF3_ARGS to iperf3's client;
# NICE=-20 runs both tools' clients and servers at that nice level (the same for both): on a
# machine busy with other work (builds) they then take the CPU the emulator leaves as on an idle
# host, which is the regime the tools are compared in.
# WIRESPEED_T sets wirespeed's -t (default SECONDS+2; SECONDS alone is the unequal window that
# bench/lab-rates.sh used before: wirespeed counting 2 s less than iperf3, and 2 s earlier).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-8}" reps="${2:-3}" rate="${3:-10G}"
wt="${WIRESPEED_T:-$((secs + 2))}"
nice=(nice -n "${NICE:-0}")
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
W="${WIRESPEED:-$CARGO_TARGET_DIR/release/wirespeed}"
[ -n "${WIRESPEED:-}" ] || cargo build --release -q -p wirespeed --bin wirespeed
command -v iperf3 >/dev/null || { echo "needs iperf3" >&2; exit 2; }
# QUEUE=N sets the link's drop-tail queue in frames (default 1000: 0.6 of the 10 Gbit/s path's
# bandwidth-delay product, 1,653 frames at 2 ms).
queue=${QUEUE:-1000}
case "$queue" in ''|*[!0-9]*) echo "QUEUE=$queue is not a number of frames: give e.g. QUEUE=2000" >&2; exit 2 ;; esac
dir=$(mktemp -d)
printf '[[host]]\nname = "h1"\n[[host]]\nname = "h2"\n[[link]]\na = "h1"\nb = "h2"\nrate = "%s"\ndelay = "1ms"\nqueue = %s\nipv6 = false\n' "$rate" "$queue" >"$dir/tt.toml"
name=""
server=""
cleanup() {
  [ -z "$server" ] || kill "$server" 2>/dev/null || true
  [ -z "$name" ] || "$W" lab down "$name" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
name=$("$W" lab up "$dir/tt.toml")
n1="ws-$name-h1" n2="ws-$name-h2"
bits=$(awk -v r="$rate" 'BEGIN{m=1; if (r ~ /G$/) m=1e9; else if (r ~ /M$/) m=1e6; sub(/[GM]$/,"",r); print r*m}')
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, kernel $(uname -r), lab $name ($rate, 1 ms each way, queue $queue), nice ${NICE:-0}, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# iperf3 -t $secs -O 2 -C cubic ${IPERF3_ARGS:-}; wirespeed tcp -t $wt -O 2 -C cubic ${WIRESPEED_ARGS:-}; ceiling $(awk -v b="$bits" 'BEGIN{printf "%.1f", b*1448/1538/1e6}') Mbit/s"
# One run: server in h2, client in h1; prints the client's JSON on stdout.
run() {
  local tool=$1
  if [ "$tool" = iperf3 ]; then
    "${nice[@]}" ip netns exec "$n2" iperf3 -s -1 -B 198.18.0.2 -p 5298 >/dev/null 2>&1 &
    server=$!
    sleep 0.4
    # shellcheck disable=SC2086
    "${nice[@]}" ip netns exec "$n1" timeout $((secs + 30)) iperf3 -c 198.18.0.2 -p 5298 -J -t "$secs" -O 2 -C cubic ${IPERF3_ARGS:-} || true
  else
    "${nice[@]}" ip netns exec "$n2" "$W" serve -1 -B 198.18.0.2 -p 5299 >/dev/null 2>&1 &
    server=$!
    sleep 0.4
    # shellcheck disable=SC2086
    "${nice[@]}" ip netns exec "$n1" timeout $((secs + 30)) "$W" tcp 198.18.0.2 -p 5299 --json -t "$wt" -O 2 -C cubic ${WIRESPEED_ARGS:-} || true
  fi
  # A one-test server ends by itself; one that did not is ended here, by pid.
  for _ in $(seq 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=""
}
for rep in $(seq 1 "$reps"); do
  for tool in iperf3 wirespeed; do
    # The namespaces are this lab's own: their TCP counters are this run's connections only.
    ip netns exec "$n1" nstat -asz >"$dir/h1.before"
    ip netns exec "$n2" nstat -asz >"$dir/h2.before"
    "$W" lab status "$name" --json >"$dir/before.json"
    run "$tool" >"$dir/$tool.$rep.json"
    "$W" lab status "$name" --json >"$dir/after.json"
    ip netns exec "$n1" nstat -asz >"$dir/h1.after"
    ip netns exec "$n2" nstat -asz >"$dir/h2.after"
    python3 - "$tool" "$rep" "$dir" "$bits" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, math, statistics, sys
tool, rep, d, bits, load = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
ceiling = bits * 1448 / 1538
def nstat(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 2 and f[1].isdigit():
            out[f[0]] = int(f[1])
    return out
def ndelta(host):
    a, b = nstat(f"{d}/{host}.after"), nstat(f"{d}/{host}.before")
    return lambda k: a.get(k, 0) - b.get(k, 0)
h1, h2 = ndelta("h1"), ndelta("h2")
# Window use per counted interval: in flight (rate x srtt) over the congestion window.
use = []
try:
    o = json.load(open(f"{d}/{tool}.{rep}.json"))
    if tool == "wirespeed":
        o = o["result"]
        s = o["end"]["streams"][0]
        cpu = lambda x: 100 * (x["cpu"]["user_seconds"] + x["cpu"]["system_seconds"]) / x["seconds"]
        snd, rcv = cpu(s["sender"]), cpu(s["receiver"])
        for iv in o["intervals"]:
            for x in iv["streams"]:
                if not iv.get("omitted") and x.get("cwnd_bytes") and x.get("rtt_seconds"):
                    use.append(x["bits_per_second"] / 8 * x["rtt_seconds"] / x["cwnd_bytes"])
    else:
        c = o["end"]["cpu_utilization_percent"]
        snd, rcv = c["host_total"], c["remote_total"]
        for iv in o["intervals"]:
            for x in iv["streams"]:
                if not x["omitted"] and x.get("snd_cwnd") and x.get("rtt"):
                    use.append(x["bits_per_second"] / 8 * x["rtt"] / 1e6 / x["snd_cwnd"])
    got = o["end"]["sum_received"]["bits_per_second"]
    retr = o["end"]["sum_sent"]["retransmits"]
except Exception as e:
    got, retr, snd, rcv = float("nan"), "-", float("nan"), float("nan")
use = statistics.median(use) if use else float("nan")
hystart = h1("TcpExtTCPHystartTrainCwnd") + h1("TcpExtTCPHystartDelayCwnd")
b = json.load(open(f"{d}/before.json"))["result"]["ports"]
a = json.load(open(f"{d}/after.json"))["result"]["ports"]
fwd = next(i for i, p in enumerate(a) if p["from"] == "h1")
rev = next(i for i, p in enumerate(a) if p["from"] == "h2")
k = lambda i, f: a[i]["counters"][f] - b[i]["counters"][f]
dev = lambda i, f: a[i]["device"][f] - b[i]["device"][f]
cost = lambda i, f: a[i]["cost"][f] - b[i]["cost"][f]
up = a[fwd]["cost"] and (json.load(open(f"{d}/after.json"))["result"]["uptime_seconds"] - json.load(open(f"{d}/before.json"))["result"]["uptime_seconds"])
data, acks = k(fwd, "frames_in"), k(rev, "frames_in")
with open(f"{d}/rates", "a") as f:
    f.write(f"{tool} {got} {retr if retr != '-' else 'nan'} {h1('TcpRetransSegs')} {k(fwd,'drops_queue')} {use}\n")
print(f"run {rep} {tool:9}: {got/1e6:7.1f} Mbit/s {got/ceiling*100:6.2f}%  retransmits {retr} (whole run {h1('TcpRetransSegs')})  "
      f"drop queue {k(fwd,'drops_queue')} host {dev(fwd,'sender_tx_dropped')}  window use {use:.2f}  slow start left at cwnd {hystart or '-'}  "
      f"zero windows {h2('TcpExtTCPWantZeroWindowAdv')}  cpu snd/rcv {snd:.0f}/{rcv:.0f}%  "
      f"data frames {data}  ACKs per 100 {100*acks/max(data,1):.2f}  "
      f"emulator {cost(fwd,'cpu_seconds')/up:.2f}+{cost(rev,'cpu_seconds')/up:.2f} core  load {load}")
PY
  done
done
python3 - "$dir/rates" "$bits" <<'PY'
import sys, math, statistics as st
rates, runs = {}, []
for line in open(sys.argv[1]):
    t, v, retr, whole, drops, use = line.split()
    rates.setdefault(t, []).append(float(v))
    runs.append((t, float(retr), int(whole), int(drops), float(use)))
ceiling = float(sys.argv[2]) * 1448 / 1538
med = {}
for t in ("iperf3", "wirespeed"):
    v = sorted(x for x in rates.get(t, []) if not math.isnan(x))
    if not v:
        print(f"{t}: no run succeeded"); continue
    med[t] = st.median(v)
    print(f"{t:9} min/median/max {v[0]/1e6:.1f} / {med[t]/1e6:.1f} / {v[-1]/1e6:.1f} Mbit/s, median {med[t]/ceiling*100:.2f}% of the ceiling ({len(v)} runs)")
pairs = [w / i for i, w in zip(rates.get("iperf3", []), rates.get("wirespeed", [])) if i > 0 and not math.isnan(w)]
if len(med) == 2:
    print(f"wirespeed / iperf3: ratio of the medians {med['wirespeed']/med['iperf3']:.3f}, per-run ratios {', '.join(f'{p:.3f}' for p in pairs)} (median {st.median(pairs):.3f})")
def mmm(v):
    v = sorted(x for x in v if not math.isnan(x))
    return f"{v[0]:.0f} / {st.median(v):.0f} / {v[-1]:.0f}" if v else "-"
def mmm2(v):
    v = sorted(x for x in v if not math.isnan(x))
    return f"{v[0]:.2f} / {st.median(v):.2f} / {v[-1]:.2f}" if v else "-"
print("losses, min / median / max per run: retransmits (counted window) | retransmitted segments (whole run) | queue drops (whole run) | window use")
for t in ("iperf3", "wirespeed"):
    r = [x for x in runs if x[0] == t]
    print(f"{t:9} {mmm([x[1] for x in r]):>16} | {mmm([x[2] for x in r]):>16} | {mmm([x[3] for x in r]):>16} | {mmm2([x[4] for x in r])}")
print("both tools' runs by window use (rate x srtt / cwnd): runs, median retransmits (counted window) per tool")
for lo, hi in ((0, 0.5), (0.5, 0.7), (0.7, 0.85), (0.85, math.inf)):
    cell = []
    for t in ("iperf3", "wirespeed"):
        r = [x[1] for x in runs if x[0] == t and lo <= x[4] < hi and not math.isnan(x[1])]
        cell.append(f"{t} {len(r)} run(s)" + (f", median {st.median(r):.0f}" if r else ""))
    print(f"  {lo:.2f}-{hi:.2f}: " + "; ".join(cell))
PY
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
