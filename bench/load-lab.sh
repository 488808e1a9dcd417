#!/usr/bin/env bash
# Benchmark of `wirespeed load --raw` on an emulated shared 10 Mbit/s segment (needs root).
# (1) The full bit-rate-vs-N curve of seed 000 figure 3-3's experiment on labs/boggs-24.toml
#     beside wirespeed-sim for the same segment: `wirespeed reproduce boggs --lab`.
# (2) What it costs and where frames wait: N agents (`serve` in each station's namespace), one
#     `load --raw` series per frame length; the emulator's CPU time (utime+stime of its process)
#     per frame it carried, the frames each station's TAP refused (tx_dropped: the generators'
#     ENOBUFS), and the generators' rates.
# Tears down only the lab it brought up; stops only the agents it started.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p wirespeed
bin=$PWD/target/release/wirespeed
source bench/lib/boggs24-agents.sh
secs=${SECS:-2}

echo "== (1) reproduce boggs --lab -t ${secs}s (hosts 1,2,4,8,16,24; 512 and 1514 B)"
"$bin" reproduce boggs --lab -t "${secs}s" | sed -n '/^Lab:/,/^note/p'

echo "== (2) cost per frame: load --raw on labs/boggs-24.toml, --transmit $((secs + 1))s --measure ${secs}s"
tmp=$(mktemp -d)
pids=()
cleanup() {
    boggs24_down
    rm -rf "$tmp"
}
trap cleanup EXIT
boggs24_up "$tmp"
for len in 64 512 1514; do
    for n in 1 4 24; do
        t0=$(ticks); d0=$(dropped)
        "$bin" lab status "$lab" --json > "$tmp/s0"
        ip netns exec "ws-$lab-s1" "$bin" load --raw "${agents[@]:0:$((2 * n))}" --hosts "$n" --lengths "$len" \
            --settle 0.5s --transmit "$((secs + 1))s" --measure "${secs}s" --cooldown 1s --no-model --json > "$tmp/load"
        "$bin" lab status "$lab" --json > "$tmp/s1"
        t1=$(ticks); d1=$(dropped)
        python3 - "$tmp/s0" "$tmp/s1" "$tmp/load" "$len" "$n" "$((t1 - t0))" "$((d1 - d0))" <<'PY'
import json, sys
s0, s1, load = (json.load(open(p)) for p in sys.argv[1:4])
length, n, ticks, refused = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
tot = lambda s, k: sum(p["counters"][k] for p in s["result"]["ports"])
frames = tot(s1, "frames_out") - tot(s0, "frames_out")
given_up = tot(s1, "excessive_collisions") - tot(s0, "excessive_collisions")
row = load["result"]["rows"][0]
m = row["measured"]
errors = sum(h["send_errors"] or 0 for h in row["per_host"])
print("%5d B N=%-2d agents %.3f Mbit/s %6.0f pkt/s delay %.1f us | medium carried %d frames, gave up %d;"
      " emulator %.1f us CPU/frame; TAPs refused %d frames (generators' ENOBUFS %d)"
      % (length, n, m["bits_per_second"] / 1e6, m["packets_per_second"], m["delay_mean_seconds"] * 1e6,
         frames, given_up, ticks * 1e4 / max(frames, 1), refused, errors))
PY
    done
done
