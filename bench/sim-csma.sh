#!/usr/bin/env bash
# Benchmark of `wirespeed sim csma`: the seed's whole series (its nine packet lengths x 1..24
# hosts x 10 s simulated each, seed 000 §3.5) on two worker threads, then the criterion
# micro-benchmark of simulated events per second. Prints the figures bench/RESULTS.md quotes.
# Optional: with Debian's libns3-dev installed, the same 24-host 64-byte scenario in ns-3's
# CSMA model (bench/ns3-csma.cc), as simulated frames per wall second.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p wirespeed
bin=target/release/wirespeed
echo "== seed 000 series: 9 lengths x 24 host counts x 10 s, 2 threads"
start=$(date +%s.%N)
"$bin" sim csma -t 10s --threads 2 -J > /tmp/wirespeed-sim-series.json
end=$(date +%s.%N)
python3 - "$start" "$end" <<'PY'
import json, sys
d = json.load(open("/tmp/wirespeed-sim-series.json"))
r = d["result"]
wall = float(sys.argv[2]) - float(sys.argv[1])
frames = sum(p["packets_per_second"]["mean"] * d["parameters"]["measured_seconds"] for p in r["points"])
print(f"points {len(r['points'])}, events {r['events']:,}, wall {wall:.1f} s (in-process {r['wall_seconds']:.1f} s), "
      f"{r['events_per_second']/1e6:.1f} M events/s, {frames/r['wall_seconds']/1e6:.2f} M frames sent per wall second")
PY
echo "== one 24-host 64-byte test, 10 s simulated, one thread"
"$bin" sim csma --hosts 24 -l 64 -t 10s --threads 1 | tail -n 4 | head -n 3
echo "== criterion: events per second"
cargo bench -q --manifest-path crates/wirespeed-sim/bench/Cargo.toml --bench events -- --warm-up-time 1 --measurement-time 5 2>/dev/null \
    | grep -E "^csma|thrpt" || true
if pkg-config --exists libns3.37-csma 2>/dev/null || ls /usr/lib/x86_64-linux-gnu/libns3*-csma* >/dev/null 2>&1; then
    echo "== ns-3 CSMA model (no collisions modelled), 24 hosts x 64 bytes, 10 s"
    bash bench/ns3-csma.sh
fi
