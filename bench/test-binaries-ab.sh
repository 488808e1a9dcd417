#!/usr/bin/env bash
# Two builds' test binaries side by side: runs the binaries kept under DIR_A, then those under
# DIR_B, then A again, ..., REPS rounds, each binary one after another as cargo runs them, at
# RUST_TEST_THREADS=THREADS; prints each set's summed wall (each binary's own, measured here)
# per round with the load average, and min/median/max per set. Each DIR holds one folder per
# package (wirespeed-net, wirespeed-lab, ...) with that package's test executables, copied from
# target/release/deps/ after `cargo test --release -p PACKAGE --no-run` (which names them);
# each runs in its package's folder, as under cargo. Needs root, as CI has.
#
#   sudo bash bench/test-binaries-ab.sh THREADS REPS DIR_A DIR_B
#
# Alternating the two sets gives each the same load on average: the binaries mostly wait on
# timers and loopback rates, so a figure from another hour is not comparable.
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:?usage: bench/test-binaries-ab.sh THREADS REPS DIR_A DIR_B}
reps=${2:?usage}
dirs=("${3:?usage}" "${4:?usage}")
case "$threads$reps" in
  *[!0-9]*) echo "bench/test-binaries-ab.sh: THREADS and REPS are whole numbers" >&2; exit 2 ;;
esac
root=$PWD
declare -A sums
for rep in $(seq 1 "$reps"); do
  for set in 0 1; do
    dir=${dirs[$set]}
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    total=0
    failed=0
    line=""
    for package_dir in "$dir"/*/; do
      package=$(basename "$package_dir")
      for bin in "$package_dir"*; do
        started=$(date +%s.%N)
        if ! (cd "$root/crates/$package" && RUST_TEST_THREADS=$threads timeout 600 "$bin" \
          >/tmp/test-binaries-ab.$$.log 2>&1); then
          failed=$((failed + 1))
          echo "FAILED: $bin (round $rep)"
          grep -E "^(test .* FAILED|---- )" /tmp/test-binaries-ab.$$.log | head -5 || true
        fi
        took=$(echo "$(date +%s.%N) - $started" | bc)
        total=$(echo "$total + $took" | bc)
        line="$line $(basename "$bin" | sed 's/-[0-9a-f]*$//')=$(printf '%.1f' "$took")"
      done
    done
    rm -f /tmp/test-binaries-ab.$$.log
    printf 'round %d %s: %.1f s summed, %d failed, load %s;%s\n' \
      "$rep" "$(basename "$dir")" "$total" "$failed" "$load" "$line"
    sums[$set]="${sums[$set]:-} $total"
  done
done
for set in 0 1; do
  echo "${sums[$set]}" | tr ' ' '\n' | grep . | sort -g | awk -v name="$(basename "${dirs[$set]}")" \
    '{ v[NR] = $1 } END { printf "%s: min %.1f, median %.1f, max %.1f s over %d rounds\n",
      name, v[1], (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR], NR }'
done
