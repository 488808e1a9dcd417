#!/usr/bin/env bash
# The lab at today's link rates (issue 20), like with like: iperf3 TCP across a two-host lab
# (1 ms each way) at 1 and 10 Gbit/s against the envelope ceiling (1448/1538 of the rate),
# measured after slow start (iperf3 -O 2); the emulator's release lateness p50/p99/max, its CPU
# per frame and the frames lost on the host side of the TAPs; then UDP 64-byte frames offered
# at 100 Mbit/s line rate (148,809 frames/s) by sendmmsg and by UDP GSO (64 segments of 18
# bytes per send, examples/common/blast.rs), each as fast as it goes, and GSO paced at 110%.
# Needs root and iperf3. Builds its own labs (198.18.0.0/24, names ws-rates-*) and removes them.
# Usage: bench/lab-rates.sh [SECONDS] [RATES...]   (default 10 s, 1G 10G)
#        bench/lab-rates.sh small [SECONDS] [QUEUE...]   only the 64-byte rows (default 3 s,
#        queue 1000 frames), once per queue limit: offered, read, forwarded against 148,809
#        frames/s (whole run and middle half), drops by place, received.
# WIRESPEED_LAB_OFFLOAD=0 runs it without super-packets (one TAP read and write per frame).
# SPINS="adaptive 100 0" REPS=3 runs every timer strategy (WIRESPEED_LAB_SPIN_US: the spin
# before each release, adaptive or fixed microseconds) REPS times, interleaved, each run
# printing: the plain-veth iperf3 bound of the machine (no lab), then per rate iperf3 and
# wirespeed tcp against the ceiling, lateness p50/p99/max, drops, super-packets, and the
# emulator's CPU per frame and per super-packet in each stage (ingress, egress, spin).
# Then, per rate, the emulator's columns of the issue's Must show: the data direction's
# threads per write split into user and kernel time (the kernel's: the TAP read's and write's
# copies, the receiving stack a TAP write runs, wake-ups), the releases more than 50 us late
# by cause (the previous write ran past them / the thread came past due otherwise / its wait
# returned late), the cores of the emulator and of iperf3's own processes, the machine's busy
# cores (all processes: 2.00 means no core was left for another TAP queue's thread), the lab's
# cores per Gbit/s against plain veth's (iperf3's own), and the rate two whole cores could
# carry at the lab's cost (an upper bound: time spent outside these processes is not in it).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --release -q -p wirespeed-lab --example lab_rates
cargo build --release -q -p wirespeed --bin wirespeed
# wirespeed tcp runs across the same labs after iperf3 (both cubic, both -O 2, the same counted
# window: iperf3 -t S+2 -O 2 against wirespeed tcp -t S+4 -O 2), and the table gives its ratio to
# iperf3, with each tool's ACK frames per 100 data frames and the emulator's ACK-direction CPU.
# bench/lab-tcp-tools.sh compares the two tools alone, several times, through one lab.
export WIRESPEED="${WIRESPEED:-$CARGO_TARGET_DIR/release/wirespeed}"
# THREADS="2 1" alternates the emulator's two threads per offloaded direction and one
# (WIRESPEED_LAB_THREADS; unset, "default": two) in every
# repetition and ends with the two side by side (bench/lib/lab-threads-table.py;
# bench/lab-threads.sh does the same without wirespeed tcp).
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
for rep in $(seq 1 "${REPS:-1}"); do
  for spin in ${SPINS:-adaptive}; do
    for threads in ${THREADS:-default}; do
      echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, kernel $(uname -r), sched_rt_runtime_us $(cat /proc/sys/kernel/sched_rt_runtime_us), load $(cut -d' ' -f1-3 /proc/loadavg), offloads ${WIRESPEED_LAB_OFFLOAD:-1}, spin $spin, threads per direction $threads, run $rep"
      env LAB_RATES_SUMMARY="$summary" LAB_MODE="$threads" ${THREADS:+WIRESPEED_LAB_THREADS=$threads} \
        WIRESPEED_LAB_SPIN_US="$spin" "$CARGO_TARGET_DIR/release/examples/lab_rates" "$@"
      echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
    done
  done
done
if [ "$(echo ${THREADS:-default} | wc -w)" -gt 1 ]; then
  python3 bench/lib/lab-threads-table.py "$summary"
fi
