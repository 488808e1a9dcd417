#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer's coverage instrumentation using plain cargo (no
# cargo-fuzz needed) and runs each for N seconds (default 60) over its committed corpus:
#   bash fuzz/run.sh [SECONDS] [TARGET...]     (default: every target)
# New inputs land in fuzz/corpus/TARGET; commit the interesting ones (small). A crash leaves
# crash-* in fuzz/ and stops the script with libFuzzer's status.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode icmp_parse load_datagram datagrams http_head iperf3_control handshake)
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# --target keeps the instrumentation out of build scripts (as cargo-fuzz does).
target=$(rustc -vV | sed -n "s/^host: //p")
for t in "${targets[@]}"; do
    cargo build --release --bin "$t" --target "$target"
done
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    echo "== $t: ${secs} s"
    ./target/"$target"/release/"$t" -max_total_time="$secs" -max_len=4096 -print_final_stats=1 "corpus/$t"
done
