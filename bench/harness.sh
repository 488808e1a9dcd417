#!/usr/bin/env bash
# The harness of random labs (issue 31): draws path labs and fleets from seeds, measures them
# with `wirespeed tcp` and `wirespeed mesh`, compares every verdict with the configured truth
# (wirespeed_lab::truth) and writes a scorecard.
#
#   sudo bash bench/harness.sh [LABS] [FLEETS] [FIRST_SEED] [OUT_DIR]
#
# Defaults: 100 path labs, 10 fleets, seed 31, /tmp/ws-harness. The scorecard is
# OUT_DIR/scorecard.md; the lab file of every disagreement is kept beside it, so that one
# disagreement is rebuilt with `wirespeed lab up OUT_DIR/NAME.toml` (or drawn again from its
# seed: the draws depend on the seed alone). About 10 s per path lab and a minute per fleet
# on a quiet 2-core machine. Needs root (labs).
set -euo pipefail
cd "$(dirname "$0")/.."
LABS=${1:-100}
FLEETS=${2:-10}
SEED=${3:-31}
OUT=${4:-/tmp/ws-harness}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WIRESPEED_HARNESS_LABS=$LABS WIRESPEED_HARNESS_FLEETS=$FLEETS WIRESPEED_HARNESS_SEED=$SEED \
  WIRESPEED_HARNESS_OUT=$OUT \
  cargo test --release -p wirespeed --test main harness::random_labs_scorecard -- \
  --ignored --nocapture --test-threads 1
