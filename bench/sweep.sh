#!/usr/bin/env bash
# The socket-buffer sweep on loopback (seed 004's experiment on this host), with cubic for
# every run: the matrix, its collapses, and the cost of one run.
# Usage: bash bench/sweep.sh [REPS] [BYTES]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
bytes=${2:-4MiB}
cargo build --release -q
bin=target/release/wirespeed
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "== matrix: send 16KiB..1MiB x receive 16KiB..1MiB, $reps reps of $bytes, cubic"
start=$(date +%s.%N)
"$bin" sweep --snd 16KiB..1MiB:x4 --reps "$reps" -n "$bytes" -C cubic --seed 1 \
    --results "$out/runs.jsonl" -f m
end=$(date +%s.%N)
runs=$(($(wc -l < "$out/runs.jsonl") - 1))
echo "== $runs runs in $(echo "$end - $start" | bc) s wall"
echo "== per-run overhead: 20 runs of 64 KiB at 1 MiB buffers"
start=$(date +%s.%N)
"$bin" sweep --snd 1MiB --reps 20 -n 64KiB -C cubic --seed 1 --results "$out/small.jsonl" --json > /dev/null
end=$(date +%s.%N)
echo "   $(echo "($end - $start) / 20 * 1000" | bc -l | cut -c1-6) ms per run (agent session, connect, transfer, both reports)"
