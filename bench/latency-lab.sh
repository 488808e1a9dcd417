#!/usr/bin/env bash
# Latency under load on one emulated link, wirespeed against the tools people combine by hand
# (needs root). The link: 10 Mbit/s, 10 ms each way, a drop-tail queue of 100 frames (ground
# truth: 2 x 10 ms + serialization idle; up to 100 x 1538 B x 8 / 10 Mbit/s = 123 ms of queue
# more when it is full). Like with like, on the same link, alternating, REPS times:
#   wirespeed: `latency --idle 3s -t 10s -P 1 --direction up -C cubic` (UDP echo probes every
#              40 ms, one cubic upload);
#   by hand:   irtt (UDP probes every 40 ms, 3 s alone, then 10 s beside) + iperf3 (-C cubic,
#              one upload, 10 s), started together as flent's tcp_1up does.
# Prints each tool's idle and loaded UDP round trip (p50, p99, ms) and the upload's rate,
# min | median | max over the repetitions, as Markdown. flent itself needs netperf, which Debian
# does not ship, so its rrul/tcp_nup cannot run here.
#
#   sudo bash bench/latency-lab.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
cargo build --release -q -p wirespeed
bin=$PWD/target/release/wirespeed
for tool in irtt iperf3; do
    command -v "$tool" >/dev/null || { echo "$tool not found: bash scripts/install-deps.sh" >&2; exit 2; }
done
tmp=$(mktemp -d)
cat > "$tmp/link.toml" <<'EOF'
[[host]]
name = "h1"
[[host]]
name = "h2"
[[link]]
a = "h1"
b = "h2"
rate = "10M"
delay = "10ms"
queue = 100
EOF
lab=$("$bin" lab up "$tmp/link.toml")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    "$bin" lab down "$lab" >/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
in_h1() { "$bin" lab exec "$lab" h1 -- "$@"; }
in_h2() { "$bin" lab exec "$lab" h2 -- "$@"; }
# Ports inside the lab's own namespaces are the lab's alone.
in_h2 "$bin" serve -B 198.18.0.2 -p 5210 >/dev/null 2>&1 & pids+=($!)
in_h2 iperf3 -s -B 198.18.0.2 -p 5201 >/dev/null 2>&1 & pids+=($!)
in_h2 irtt server -b 198.18.0.2:2112 >/dev/null 2>&1 & pids+=($!)
sleep 1

# irtt's JSON: every round trip's rtt in ns (lost ones have none) -> p50, p99 in ms.
irtt_stats() {
    python3 - "$1" <<'PY'
import json, sys
rt = [r["delay"]["rtt"] / 1e6 for r in json.load(open(sys.argv[1]))["round_trips"] if "delay" in r and "rtt" in r["delay"]]
rt.sort()
q = lambda p: rt[min(len(rt) - 1, int(p * len(rt)))]
print(f"{q(0.5):.2f} {q(0.99):.2f}")
PY
}

w_idle50=() w_idle99=() w_load50=() w_load99=() w_rate=()
h_idle50=() h_idle99=() h_load50=() h_load99=() h_rate=()
for ((r = 0; r < reps; r++)); do
    in_h1 "$bin" latency 198.18.0.2 -p 5210 --idle 3s -t 10s -P 1 --direction up -C cubic --json > "$tmp/w.json"
    read -r a b c d e < <(python3 - "$tmp/w.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["result"]
k = next(k for k in d["kinds"] if k["kind"] == "udp_echo")
print(k["idle"]["p50_ms"], k["idle"]["p99_ms"], k["loaded"]["p50_ms"], k["loaded"]["p99_ms"], d["upload_bits_per_second"] / 1e6)
PY
)
    w_idle50+=("$a"); w_idle99+=("$b"); w_load50+=("$c"); w_load99+=("$d"); w_rate+=("$e")

    in_h1 irtt client -Q -i 40ms -d 3s -o "$tmp/idle.json" 198.18.0.2:2112
    in_h1 iperf3 -c 198.18.0.2 -p 5201 -C cubic -t 10 -J > "$tmp/iperf3.json" &
    load=$!
    in_h1 irtt client -Q -i 40ms -d 10s -o "$tmp/loaded.json" 198.18.0.2:2112
    wait "$load"
    read -r a b < <(irtt_stats "$tmp/idle.json")
    read -r c d < <(irtt_stats "$tmp/loaded.json")
    e=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e6)' "$tmp/iperf3.json")
    h_idle50+=("$a"); h_idle99+=("$b"); h_load50+=("$c"); h_load99+=("$d"); h_rate+=("$e")
done

stats() { python3 -c 'import sys,statistics as s; v=sorted(float(x) for x in sys.argv[1:]); print(f"{v[0]:.2f} / {s.median(v):.2f} / {v[-1]:.2f}")' "$@"; }
echo "| tool ($reps runs; min / median / max) | idle p50 ms | idle p99 ms | loaded p50 ms | loaded p99 ms | upload Mbit/s |"
echo "|---|---|---|---|---|---|"
echo "| wirespeed latency (UDP echo, cubic upload) | $(stats "${w_idle50[@]}") | $(stats "${w_idle99[@]}") | $(stats "${w_load50[@]}") | $(stats "${w_load99[@]}") | $(stats "${w_rate[@]}") |"
echo "| irtt $(irtt version 2>/dev/null | awk '/irtt version/ {print $3}' | head -1) + iperf3 $(iperf3 --version | awk 'NR==1 {print $2}') -C cubic | $(stats "${h_idle50[@]}") | $(stats "${h_idle99[@]}") | $(stats "${h_load50[@]}") | $(stats "${h_load99[@]}") | $(stats "${h_rate[@]}") |"
