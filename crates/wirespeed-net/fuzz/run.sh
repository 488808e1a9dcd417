#!/usr/bin/env bash
# Builds the decode fuzz target with libFuzzer's coverage instrumentation using plain cargo
# (no cargo-fuzz needed) and runs it for N seconds (default 60) over the committed corpus.
# New inputs land in fuzz/corpus/decode; commit the interesting ones.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-60}
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# --target keeps the instrumentation out of build scripts (as cargo-fuzz does).
target=$(rustc -vV | sed -n "s/^host: //p")
cargo build --release --bin decode --target "$target"
./target/"$target"/release/decode -max_total_time="$secs" -max_len=4096 corpus/decode
