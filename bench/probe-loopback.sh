#!/usr/bin/env bash
# Minimum round trip on loopback: `wirespeed probe` (kernel timestamps, and CLOCK_MONOTONIC
# around the syscalls) against iputils `ping`, same packet size (84-byte IP packets: ping -s 56),
# same count and interval, several repetitions. Prints min/median/max over the repetitions of
# each tool's minimum RTT, in microseconds, as a Markdown table.
#
#   bash bench/probe-loopback.sh [REPS] [COUNT]      (root, or ping sockets allowed)
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-7}
count=${2:-500}
cargo build --release -q -p wirespeed
bin=target/release/wirespeed
command -v ping >/dev/null || { echo "ping not found: bash scripts/install-deps.sh" >&2; exit 2; }

kernel=() user=() pings=() wtime=() ptime=()
for ((r = 0; r < reps; r++)); do
    t0=$(date +%s.%N)
    doc=$("$bin" probe 127.0.0.1 --sizes 84 -c "$count" --gap 2ms --seed "$r" --json)
    t1=$(date +%s.%N)
    kernel+=("$(python3 -c 'import json,sys; d=json.load(sys.stdin); s=[x["rtt_kernel_ns"] for x in d["result"]["samples"] if x["rtt_kernel_ns"] is not None]; print(min(s)/1000 if s else "nan")' <<<"$doc")")
    user+=("$(python3 -c 'import json,sys; d=json.load(sys.stdin); s=[x["rtt_user_ns"] for x in d["result"]["samples"] if x["rtt_user_ns"] is not None]; print(min(s)/1000)' <<<"$doc")")
    wtime+=("$(python3 -c "print($t1 - $t0)")")
    t0=$(date +%s.%N)
    out=$(ping -n -q -c "$count" -i 0.002 -s 56 127.0.0.1)
    t1=$(date +%s.%N)
    pings+=("$(sed -n 's|.*= \([0-9.]*\)/.*|\1|p' <<<"$out" | python3 -c 'import sys; print(float(sys.stdin.read())*1000)')")
    ptime+=("$(python3 -c "print($t1 - $t0)")")
done

stats() { python3 -c 'import sys,statistics as s; v=sorted(float(x) for x in sys.argv[1:]); print(f"{v[0]:.2f} | {s.median(v):.2f} | {v[-1]:.2f}")' "$@"; }
echo "| tool (min RTT of $count probes, 84-byte IP packets, $reps runs) | min us | median us | max us |"
echo "|---|---|---|---|"
echo "| wirespeed probe, kernel software timestamps | $(stats "${kernel[@]}") |"
echo "| wirespeed probe, CLOCK_MONOTONIC around the syscalls | $(stats "${user[@]}") |"
echo "| ping (iputils $(ping -V | sed -n 's/.*iputils \([0-9]*\).*/\1/p')) | $(stats "${pings[@]}") |"
echo
echo "wall time per run, seconds: wirespeed $(stats "${wtime[@]}"); ping $(stats "${ptime[@]}") (min | median | max)"
