#!/usr/bin/env bash
# `wirespeed mesh` over 16 agents (issue 19): 240 ordered pairs in 30 slots of 8 tests. Checks
# that the whole mesh finishes within the schedule's predicted time + 10% and, from the
# recorded start and end of every test, that no agent was ever in two tests at once. Prints a
# Markdown row for bench/RESULTS.md ("mesh: 16 agents").
#
#   bash bench/mesh.sh
#   N=16 SECS=0.5 PROBES=5 BIN=/path/to/wirespeed bash bench/mesh.sh
#
# Loopback only (127.0.0.1): N `wirespeed serve` agents started here on port 0 with one key,
# stopped by PID on exit. The mesh is bounded: N(N-1) tests of SECS each.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-16}
SECS=${SECS:-0.5}
PROBES=${PROBES:-5}
BIN=${BIN:-target/release/wirespeed}
TMP=$(mktemp -d /tmp/ws-bench-mesh.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$TMP"
}
trap cleanup EXIT

[[ -x "$BIN" ]] || cargo build --release -q -p wirespeed
head -c 32 /dev/urandom | base64 > "$TMP/key"
AGENTS=""
for i in $(seq "$N"); do
    : >"$TMP/out$i"   # before the agent opens it: sed must find it at once
    "$BIN" serve -B 127.0.0.1 -p 0 --auth-key-file "$TMP/key" >"$TMP/out$i" 2>"$TMP/err$i" &
    PIDS+=($!)
    PORT=""
    for _ in $(seq 100); do
        PORT=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/out$i")
        [[ -n "$PORT" ]] && break
        sleep 0.05
    done
    [[ -n "$PORT" ]] || { echo "agent $i did not start" >&2; exit 1; }
    AGENTS="${AGENTS:+$AGENTS,}127.0.0.1:$PORT"
done

/usr/bin/time -f "%M" -o "$TMP/rss" timeout 600 "$BIN" mesh --agents "$AGENTS" -t "$SECS" --probes "$PROBES" \
    --auth-key-file "$TMP/key" --json >"$TMP/mesh.json" || true

python3 - "$TMP/mesh.json" "$N" "$SECS" "$PROBES" "$TMP/rss" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "bench", "lib"))
from mesh_schedule import schedule_figures
doc = json.load(open(sys.argv[1]))
rss_mib = int(open(sys.argv[5]).read().split()[-1]) / 1024
n, secs, probes = int(sys.argv[2]), sys.argv[3], sys.argv[4]
f = schedule_figures(doc, n)
r, tests, overlaps, rates, longest = f["r"], f["tests"], f["overlaps"], f["rates"], f["longest"]
ratio, in_tests, ok = f["ratio"], f["in_tests"], f["ok"]
print(f"| {n} | {secs} s, {probes} probes | {len(tests)} | {r['slots']} | {r['predicted_seconds']:.1f} s | "
      f"{r['elapsed_seconds']:.1f} s ({100 * (ratio - 1):+.1f}%) | {longest:.2f} s | {100 * in_tests:.1f}% | {overlaps} | "
      f"{rates[0] / 1e9:.2f}-{rates[-1] / 1e9:.2f} Gbit/s | {len(r['analysis']['findings'])} | {rss_mib:.1f} MiB | {'ok' if ok else 'FAILED'} |")
sys.exit(0 if ok else 1)
PY
