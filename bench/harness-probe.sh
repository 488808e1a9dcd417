#!/usr/bin/env bash
# Per-hop figures of `wirespeed probe --hops` on random multi-hop labs (issue 31): each hop's
# own fixed cost, per byte and router answer per byte against the configured chain
# (wirespeed_lab::truth::chain) within 30 us / 2% / 5%, whether the printed 95% bootstrap and
# split-half intervals cover the configured line, and every step verdict (none of these labs
# configures a step, so each is a false positive). Writes a scorecard.
#
#   sudo bash bench/harness-probe.sh [LABS] [FIRST_SEED] [OUT_DIR] [PROBES_PER_SIZE] [BUDGET] [AGENT]
#
# AGENT (default 1): h2 runs `wirespeed serve` and the probe is `probe --hops --udp`, so the
# destination is also timed by the agent's whole echoes and short replies (its per byte sent
# and returned apart); 0 probes with ICMP alone, as before session 21.
# Defaults: 50 labs, seed 31, /tmp/ws-harness-probe, -c 32 (the probe's default), one round
# (BUDGET, e.g. 60s: `probe --until-stable BUDGET`, rounds until every separable own cost is
# within its tolerance or the budget would be passed; the scorecard counts what stopped them). The
# scorecard is OUT_DIR/probe-scorecard.md; every lab is kept beside it as a corpus:
# OUT_DIR/seed-NNN.toml (`wirespeed lab up` rebuilds it; the draw depends on the seed alone)
# and OUT_DIR/seed-NNN.json (the probe's whole --json document, every sample in it), each
# written whole (write, then rename). bench/harness-probe-replay.sh re-analyses the corpus with
# the current analysis, without labs. Labs are full-duplex chains of 1-4 routers, 2 Mbit/s to
# 1 Gbit/s, delays up to 2 ms, their routers without the kernel's ICMP rate limit (each lost
# answer cost a 1 s timeout: 350-420 s a run with it, 20-47 s without). Needs root (labs).
# WIRESPEED_HARNESS_BIN=PATH probes (and runs the agent) with another build of wirespeed, e.g. a
# copy of main's target/release/wirespeed: two commits judged by one scorecard on the same
# seeds (the labs are brought up by this build either way).
set -euo pipefail
cd "$(dirname "$0")/.."
LABS=${1:-50}
SEED=${2:-31}
OUT=${3:-/tmp/ws-harness-probe}
COUNT=${4:-32}
BUDGET=${5:-0}
AGENT=${6:-1}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WIRESPEED_HARNESS_PROBE_LABS=$LABS WIRESPEED_HARNESS_SEED=$SEED WIRESPEED_HARNESS_OUT=$OUT \
  WIRESPEED_HARNESS_PROBE_COUNT=$COUNT WIRESPEED_HARNESS_PROBE_BUDGET=$BUDGET \
  WIRESPEED_HARNESS_PROBE_AGENT=$AGENT \
  cargo test --release -p wirespeed --test main harness::probe::probe_scorecard -- \
  --ignored --nocapture --test-threads 1
