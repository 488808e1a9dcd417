#!/usr/bin/env bash
# Benchmark of the lab's link emulator: achieved TCP rate against the configured rate at 10 and
# 100 Mbit/s (in-process TCP, and iperf3 if installed), the emulator's per-frame release
# lateness, and the highest frame rate it forwards for 64- and 1518-byte frames.
# Needs root (CAP_NET_ADMIN). Builds its own two-namespace labs (198.18.0.0/24, names ws-bench-*)
# and removes them. Prints a Markdown section for bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p wirespeed-lab --example lab_bench
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, kernel $(uname -r)"
target/release/examples/lab_bench
