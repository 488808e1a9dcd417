#!/usr/bin/env bash
# The test binaries of wirespeed-net, wirespeed-lab, wirespeed-sim and wirespeed-report (their
# unit tests, wherever they live, and their tests/ binaries; not the end-to-end binary of
# crates/wirespeed), run as
# the README's test command runs them, one after another, at RUST_TEST_THREADS=THREADS:
# each binary's own wall ("finished in", from libtest), their sum, and the whole command's
# wall, REPS times, with the load average before each run. Needs root, as CI has (the lab's
# tests build namespaces).
#
#   sudo bash bench/test-binaries.sh THREADS [REPS]
#
# Compare builds side by side (the same load) rather than against a figure from another hour:
# the binaries are mostly waits on timers and rates on loopback, sensitive to the machine's load.
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:?usage: bench/test-binaries.sh THREADS [REPS]}
reps=${2:-1}
case "$threads$reps" in
  *[!0-9]*) echo "bench/test-binaries.sh: THREADS and REPS are whole numbers" >&2; exit 2 ;;
esac
# wirespeed-sim's and wirespeed-report's unit tests live in their own packages since session 22.
packages=()
for p in wirespeed-net wirespeed-lab wirespeed-sim wirespeed-sim-tests wirespeed-report \
  wirespeed-report-tests; do
  [ -d "crates/$p" ] && packages+=(-p "$p")
done
cargo test --release "${packages[@]}" --tests --no-run --quiet
for rep in $(seq 1 "$reps"); do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  log=$(mktemp)
  started=$(date +%s.%N)
  status=0
  RUST_TEST_THREADS=$threads cargo test --release "${packages[@]}" --tests --no-fail-fast \
    >"$log" 2>&1 || status=$?
  ended=$(date +%s.%N)
  # "Running tests/x.rs (target/...)" then, later, "test result: ... finished in 1.23s".
  awk -v rep="$rep" -v threads="$threads" -v load="$load" -v status="$status" \
    -v wall="$(echo "$ended - $started" | bc)" '
    /^ *Running / { name = $2 }
    /^test result:/ {
      s = $NF; sub(/s$/, "", s); sum += s
      printf "  %-45s %7.2f s  %s\n", name, s, $3 " " $4 " " $5 " " $6
    }
    END {
      printf "run %d: threads %s, load %s: binaries %.2f s summed, command %.1f s wall, exit %s\n",
        rep, threads, load, sum, wall, status
    }' "$log"
  grep -E "^(test .* FAILED|failures:|---- )" "$log" | head -20 || true
  rm -f "$log"
done
