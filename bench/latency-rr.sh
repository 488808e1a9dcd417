#!/usr/bin/env bash
# TCP request/response on loopback: `wirespeed latency --rr` against `sockperf ping-pong
# --tcp`, like with like: the same message size both ways (14 bytes, sockperf's smallest), one
# connection, back-to-back transactions, the same duration, several repetitions, alternating.
# sockperf reports half the round trip; it is doubled here. Prints min | median | max over the
# repetitions of each tool's transactions per second and median round trip, as Markdown.
#
#   bash bench/latency-rr.sh [REPS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
secs=${2:-3}
cargo build --release -q -p wirespeed
bin=target/release/wirespeed
command -v sockperf >/dev/null || { echo "sockperf not found: bash scripts/install-deps.sh" >&2; exit 2; }

port=$((20000 + RANDOM % 20000))
sockperf server --tcp -i 127.0.0.1 -p "$port" >/dev/null 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
sleep 1

w_tps=() w_p50=() s_tps=() s_p50=()
for ((r = 0; r < reps; r++)); do
    doc=$("$bin" latency --rr --request 14 --response 14 -t "${secs}s" --json)
    w_tps+=("$(python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["transactions_per_second"])' <<<"$doc")")
    w_p50+=("$(python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["round_trip"]["p50_ms"]*1000)' <<<"$doc")")
    out=$(sockperf ping-pong --tcp -i 127.0.0.1 -p "$port" -t "$secs" -m 14 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
    # Its valid window (the run less warm-up and tail): received messages over that time.
    s_tps+=("$(sed -n 's/.*\[Valid Duration\] RunTime=\([0-9.]*\) sec;.*ReceivedMessages=\([0-9]*\).*/\2 \1/p' <<<"$out" | python3 -c 'import sys; n, t = sys.stdin.read().split(); print(int(n) / float(t))')")
    s_p50+=("$(sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' <<<"$out" | python3 -c 'import sys; print(float(sys.stdin.read()) * 2)')")
done

stats() { python3 -c 'import sys,statistics as s; v=sorted(float(x) for x in sys.argv[1:]); print(f"{v[0]:.1f} | {s.median(v):.1f} | {v[-1]:.1f}")' "$@"; }
echo "| tool (TCP, 14 B each way, ${secs} s, $reps runs) | transactions/s min | median | max | median round trip us min | median | max |"
echo "|---|---|---|---|---|---|---|"
echo "| wirespeed latency --rr | $(stats "${w_tps[@]}") | $(stats "${w_p50[@]}") |"
echo "| sockperf $(sockperf --version 2>&1 | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -1) ping-pong --tcp | $(stats "${s_tps[@]}") | $(stats "${s_p50[@]}") |"
