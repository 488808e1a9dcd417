#!/usr/bin/env bash
# Two test executables side by side, alternated round by round (A, B, A, B, ...), each run in
# its package's folder at RUST_TEST_THREADS=THREADS: prints each run's wall and CPU (user +
# sys, /usr/bin/time) with the load average, then min/median/max of each. For comparing one
# package's tests before and after a change of how they are built (a unit-test binary of a
# library against the same tests in a package of their own), where a figure from another
# minute is not comparable on a shared machine. Needs root if the tests do (as CI has).
#
#   bash bench/test-binary-cpu-ab.sh THREADS REPS BIN_A DIR_A BIN_B DIR_B
#
# DIR_x is the folder the binary runs in (cargo runs a test binary in its package's folder).
set -euo pipefail
usage="usage: bench/test-binary-cpu-ab.sh THREADS REPS BIN_A DIR_A BIN_B DIR_B"
threads=${1:?$usage}
reps=${2:?$usage}
bins=("${3:?$usage}" "${5:?$usage}")
dirs=("${4:?$usage}" "${6:?$usage}")
case "$threads$reps" in
  *[!0-9]*) echo "bench/test-binary-cpu-ab.sh: THREADS and REPS are whole numbers" >&2; exit 2 ;;
esac
for i in 0 1; do
  [ -x "${bins[$i]}" ] || { echo "bench/test-binary-cpu-ab.sh: ${bins[$i]} is not an executable" >&2; exit 2; }
  [ -d "${dirs[$i]}" ] || { echo "bench/test-binary-cpu-ab.sh: ${dirs[$i]} is not a folder" >&2; exit 2; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for rep in $(seq 1 "$reps"); do
  for i in 0 1; do
    name=$([ "$i" = 0 ] && echo A || echo B)
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    if ! (cd "${dirs[$i]}" && RUST_TEST_THREADS=$threads timeout 600 \
      /usr/bin/time -o "$out/time" -f "%e %U %S" "${bins[$i]}" >"$out/log" 2>&1); then
      echo "FAILED: $name round $rep"
      grep -E "^(test .* FAILED|---- )" "$out/log" | head -5 || true
    fi
    read -r wall user sys < <(tail -1 "$out/time")
    cpu=$(echo "$user + $sys" | bc)
    summary=$(grep -E "^test result" "$out/log" | tail -1)
    printf 'round %d %s: %.2f s wall, %.2f s CPU, load %s; %s\n' "$rep" "$name" "$wall" "$cpu" "$load" "$summary"
    echo "$wall" >>"$out/wall.$i"
    echo "$cpu" >>"$out/cpu.$i"
  done
done
stats() {
  sort -g "$1" | awk '{ v[NR] = $1 } END { printf "min %.2f, median %.2f, max %.2f", v[1],
    (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR] }'
}
for i in 0 1; do
  name=$([ "$i" = 0 ] && echo A || echo B)
  echo "$name (${bins[$i]}): wall $(stats "$out/wall.$i") s; CPU $(stats "$out/cpu.$i") s over $reps rounds"
done
