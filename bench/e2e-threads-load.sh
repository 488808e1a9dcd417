#!/usr/bin/env bash
# The end-to-end test binary (crates/wirespeed/tests/main.rs) at N test threads beside BUSY
# bounded busy loops, RUNS times: each run's wall, the load average before and after, the
# passed/failed counts and the failed tests' names, one line per run, and each run's libtest
# JSON (for bench/e2e-test-times.py) and stderr under OUT.
#
#   bench/e2e-threads-load.sh THREADS RUNS [BUSY] [OUT]
#
# Build the binary first (cargo test --release -p wirespeed --test main --no-run); the newest
# target/release/deps/main-HASH that is an executable is run from crates/wirespeed, as
# bench/e2e-test-times.py's doc says. Every busy loop is bounded by `timeout` and killed by its
# PID when the run ends; the test binary is bounded by `timeout` too (900 s).
set -u
threads=${1:?THREADS}
runs=${2:?RUNS}
busy=${3:-2}
out=${4:-/tmp/e2e-threads}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
bin=$(ls -t "$root"/target/release/deps/main-* 2>/dev/null | grep -v '\.d$' | while read -r f; do
    [ -x "$f" ] && { echo "$f"; break; }; done)
[ -n "$bin" ] || { echo "no built e2e binary under target/release/deps: build it first" >&2; exit 2; }
commit=$(git -C "$root" rev-parse --short HEAD)
echo "# $(date -u +%FT%TZ) commit $commit binary $(basename "$bin") threads $threads busy $busy"
for i in $(seq 1 "$runs"); do
    pids=()
    for _ in $(seq 1 "$busy"); do
        timeout 900 sh -c 'while :; do :; done' &
        pids+=($!)
    done
    load0=$(cut -d' ' -f1-3 /proc/loadavg)
    tag="t$threads-b$busy-$commit-$i"
    t0=$(date +%s.%N)
    (cd "$root/crates/wirespeed" && RUSTC_BOOTSTRAP=1 WIRESPEED_LANE_LOG="$out/$tag.lanes.tsv" \
        timeout 900 "$bin" --test-threads="$threads" -Z unstable-options --report-time \
        --format json >"$out/$tag.json" 2>"$out/$tag.stderr")
    rc=$?
    t1=$(date +%s.%N)
    load1=$(cut -d' ' -f1-3 /proc/loadavg)
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait "${pids[@]}" 2>/dev/null
    counts=$(python3 - "$out/$tag.json" <<'PY'
import json, sys
ok, failed = 0, []
for line in open(sys.argv[1], errors="replace"):
    try:
        ev = json.loads(line)
    except ValueError:
        continue
    if ev.get("type") == "test" and ev.get("event") == "ok":
        ok += 1
    elif ev.get("type") == "test" and ev.get("event") == "failed":
        failed.append(ev["name"])
print(ok, len(failed), " ".join(failed))
PY
)
    printf 'run %s threads %s busy %s rc %s wall %.1f s load %s -> %s passed/failed/names %s\n' \
        "$i" "$threads" "$busy" "$rc" "$(echo "$t1 - $t0" | bc)" "$load0" "$load1" "$counts"
done
