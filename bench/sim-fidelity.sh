#!/usr/bin/env bash
# Seed 000 fidelity (issue 21): the sensitivity of the 24-host figures of Boggs, Mogul and Kent
# to each candidate cause, one change at a time from the simulator's default, with the mean
# over replications (seeds 1..R) and its 95% Student-t half-width. Prints the tables that
# bench/RESULTS.md quotes ("Seed 000 fidelity (issue 21)"). Deterministic: the same arguments
# give the same tables. Arguments: measured seconds per run (default 2), replications
# (default 5). About 1 minute of CPU at the defaults, on two threads.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-2}"
reps="${2:-5}"
cargo run --release -q -p wirespeed-sim --example boggs_fidelity -- "$secs" "$reps"
