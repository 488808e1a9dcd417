#!/usr/bin/env bash
# The probe scorecard of bench/harness-probe.sh again, without labs: every run it saved in
# CORPUS_DIR (seed-NNN.json, the probe's whole --json document with every sample, and
# seed-NNN.toml, the lab) re-analysed from its samples with the current analysis code
# (wirespeed_model::bestcase::analyze) and judged against the lab's configured chain. Prints
# the scorecard, with the step verdicts the runs printed beside the current ones; with OUT_DIR,
# also writes OUT_DIR/probe-replay.md. Needs no root and no lab; a run still writing the corpus
# shows the labs it finished.
#
#   bash bench/harness-probe-replay.sh CORPUS_DIR [OUT_DIR]
#
# WIRESPEED_HARNESS_REPLAY_PROBES=N keeps only the first N probes of each size at each hop
# (N = the runs' -c: their first round alone, what a run without --until-stable measured).
# WIRESPEED_HARNESS_REPLAY_AGENT=0 leaves out the agent's series at the destination (runs of
# `probe --hops --udp`): the same runs as ICMP alone would have judged them.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: bash bench/harness-probe-replay.sh CORPUS_DIR [OUT_DIR] (CORPUS_DIR: the OUT_DIR of bench/harness-probe.sh)" >&2
  exit 2
fi
CORPUS=$(cd "$1" && pwd)
if [ $# -ge 2 ]; then
  mkdir -p "$2"
  export WIRESPEED_HARNESS_OUT=$(cd "$2" && pwd)
fi
WIRESPEED_HARNESS_CORPUS=$CORPUS \
  cargo test --release -p wirespeed --test main harness::probe::probe_replay -- \
  --ignored --nocapture --test-threads 1
