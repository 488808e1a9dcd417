#!/usr/bin/env bash
# The heavy tier of the test suite: the tests marked
# `#[ignore = "heavy tier: run by bench/heavy-tests.sh"]`, left out of the README's test
# command to keep it within its time budget. Minutes of labs (AQM and loaded latency, the
# per-hop chain, seed 003's 1990s hosts, a two-fault fleet, the lab side of seed 000) and the
# heavy engines (a kubelet node, a kube-apiserver; the podman fleet runs in the default tier). Run one at a
# time, since the labs share the CPU with what they measure. Needs root, as CI has.
#
#   sudo bash bench/heavy-tests.sh [FILTER...]
#
# With no FILTER every heavy test runs; the 100-lab scorecard (bench/harness.sh), the probe
# labs' scorecard (bench/harness-probe.sh), its replay of a saved corpus
# (bench/harness-probe-replay.sh) and the FQ-CoDel cost measurement stay separate.
# Prints each test's time; exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
  echo "bench/heavy-tests.sh: the heavy tier builds labs and containers; run it as root" >&2
  exit 2
fi
cargo build --release -p wirespeed --tests --quiet
started=$(date +%s)
# libtest prints each test's time with --report-time, an option stable Rust keeps behind -Z.
RUSTC_BOOTSTRAP=1 cargo test --release -p wirespeed --test main -- \
  --ignored --test-threads 1 --skip harness::random_labs_scorecard --skip harness::probe::probe_scorecard \
  --skip harness::probe::probe_replay \
  -Z unstable-options --report-time "$@"
echo "heavy tier: $(( $(date +%s) - started )) s wall"
