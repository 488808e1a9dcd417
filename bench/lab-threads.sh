#!/usr/bin/env bash
# One thread per offloaded direction against two, like with like (issue 20, the emulator side):
# the same lab_rates run (iperf3 cubic across a two-host lab, 1 ms each way, queue 1000, after
# slow start; no wirespeed tcp) alternating WIRESPEED_LAB_THREADS=2 (an ingress and an egress
# thread joined by a hand-off, the design before) and WIRESPEED_LAB_THREADS=1 (one thread that
# waits in one ppoll for the TAP or the next release), REPS times each, so both meet the same
# load. Each run also measures iperf3 across a plain veth pair (the machine's bound without the
# lab). Then a side-by-side table per rate and mode: iperf3's share of the envelope ceiling,
# release lateness p50/p99/max, the emulator's cores, the machine's busy cores, the lab's cores
# per Gbit/s (emulator + iperf3's own) against plain veth's, and the data direction's CPU per
# write split user/kernel: min / median / max over the runs, with the load average of each.
# With SMALL=1 the 64-byte rows (UDP 64-byte frames into 100 Mbit/s, queue 1000) run too, each
# mode alternating: forwarded share of line rate and the memory-bound refusals.
# MODES="2 1 1@0,1 1@1,1" compares other set-ups the same way: each mode is a thread count
# (WIRESPEED_LAB_THREADS), optionally with @CPUS binding the directions' threads to CPUs in port
# order (WIRESPEED_LAB_CPUS: 0,1 puts the data direction on CPU 0 and the ACKs on CPU 1).
# Needs root and iperf3. Builds its own labs (namespaces ws-rates-*, ws-vb*) and removes them.
# Usage: bench/lab-threads.sh [SECONDS] [REPS] [RATES...]   (default 8 s, 3 reps, 10G)
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-8}" reps="${2:-3}"
shift $(( $# > 2 ? 2 : $# ))
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(10G)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --release -q -p wirespeed-lab --example lab_rates
command -v iperf3 >/dev/null || { echo "needs iperf3" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
modes=(${MODES:-2 1})
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $reps x (modes ${modes[*]}), ${secs} s, rates ${rates[*]}, spin ${WIRESPEED_LAB_SPIN_US:-adaptive}"
for rep in $(seq 1 "$reps"); do
  for mode in "${modes[@]}"; do
    threads=${mode%%@*}
    cpus=""
    [ "$mode" = "$threads" ] || cpus=${mode#*@}
    echo "# run $rep, mode $mode, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    env LAB_RATES_SUMMARY="$out" LAB_MODE="$mode" LAB_RATES_SMALL=0 WIRESPEED_LAB_THREADS="$threads" \
      ${cpus:+WIRESPEED_LAB_CPUS=$cpus} timeout $(( (secs + 20) * (${#rates[@]} + 1) + 60 )) \
      "$CARGO_TARGET_DIR/release/examples/lab_rates" "$secs" "${rates[@]}" >/dev/null || echo "# run failed" >&2
    if [ "${SMALL:-0}" = 1 ]; then
      env LAB_RATES_SUMMARY="$out" LAB_MODE="$mode" WIRESPEED_LAB_THREADS="$threads" \
        ${cpus:+WIRESPEED_LAB_CPUS=$cpus} timeout 120 "$CARGO_TARGET_DIR/release/examples/lab_rates" small 3 1000 >/dev/null || echo "# small run failed" >&2
    fi
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/lib/lab-threads-table.py "$out"
