#!/usr/bin/env bash
# `wirespeed mesh` over N agents in one lab (issue 19): N hosts behind one router on RATE links,
# an agent in each host's namespace, the controller in the router's. Prints the same row as
# bench/mesh.sh: predicted and actual time, the longest test, overlaps (from the recorded
# times), the rates, the findings and the controller's peak memory.
#
#   sudo bash bench/mesh-lab.sh
#   sudo N=16 RATE=10M SECS=0.5 PROBES=5 BIN=/path/to/wirespeed bash bench/mesh-lab.sh
#   sudo KEEP=mesh.json bash bench/mesh-lab.sh    # also keep the mesh's --json document
#
# Then, on stderr, where each test's time went (medians over the tests, seconds, from the
# controller's and the source agent's clocks, one host): reaching the source and the
# destination's consent, the probes and the TCP test at the source, the result's way back.
# The load average is the host's one-minute figure at the end (other engineers' builds share
# the cores).
#
# Needs root (CAP_NET_ADMIN). Everything runs inside `wirespeed lab run`, which takes the lab
# (namespaces ws-meshlab-*, addresses 198.18.0.0/15) down on every exit; the agents are
# stopped by PID before it does.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-16}
RATE=${RATE:-10M}
SECS=${SECS:-0.5}
PROBES=${PROBES:-5}
BIN=$(realpath "${BIN:-target/release/wirespeed}")
TMP=$(mktemp -d /tmp/ws-bench-mesh-lab.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

{
    echo 'name = "meshlab"'
    for i in $(seq "$N"); do printf '[[host]]\nname = "h%d"\n' "$i"; done
    printf '[[router]]\nname = "r1"\n'
    for i in $(seq "$N"); do
        printf '[[link]]\na = "h%d"\nb = "r1"\nrate = "%s"\nipv6 = false\n' "$i" "$RATE"
    done
} >"$TMP/lab.toml"
head -c 32 /dev/urandom | base64 >"$TMP/key"
for i in $(seq "$N"); do echo "h$i 198.18.$((i - 1)).1:5210"; done >"$TMP/agents"

cat >"$TMP/run.sh" <<SH
set -u
W="$BIN"; L="\$WIRESPEED_LAB"; PIDS=""
for i in \$(seq $N); do
    "\$W" lab exec "\$L" h\$i -- "\$W" serve -B 198.18.\$((i - 1)).1 -p 5210 \
        --auth-key-file "$TMP/key" --allow-destination 198.18.0.0/15 >/dev/null 2>&1 &
    PIDS="\$PIDS \$!"
done
sleep 2
/usr/bin/time -f "%M" -o "$TMP/rss" timeout 900 "\$W" lab exec "\$L" r1 -- "\$W" mesh \
    --agents-file "$TMP/agents" -t $SECS --probes $PROBES --auth-key-file "$TMP/key" --json \
    >"$TMP/mesh.json" 2>"$TMP/mesh.err"
for p in \$PIDS; do kill \$p 2>/dev/null; done
for p in \$PIDS; do wait \$p 2>/dev/null; done
exit 0
SH
"$BIN" lab run "$TMP/lab.toml" -- sh "$TMP/run.sh"
if [ -n "${KEEP:-}" ]; then cp "$TMP/mesh.json" "$KEEP"; fi

python3 - "$TMP/mesh.json" "$N" "$SECS" "$PROBES" "$TMP/rss" "$RATE" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "bench", "lib"))
from mesh_schedule import schedule_figures
doc = json.load(open(sys.argv[1]))
n, secs, probes, rate = int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[6]
rss_mib = int(open(sys.argv[5]).read().split()[-1]) / 1024
f = schedule_figures(doc, n)
r, tests, overlaps, rates, longest = f["r"], f["tests"], f["overlaps"], f["rates"], f["longest"]
ratio, in_tests, ok = f["ratio"], f["in_tests"], f["ok"]
def med(v):
    v = sorted(v)
    return v[len(v) // 2] if v else float("nan")
done = [t for t in tests if t["result"]]
reach = med([t["result"]["started_unix_seconds"] - t["start_unix_seconds"] for t in done])
at_source = med([t["result"]["ended_unix_seconds"] - t["result"]["started_unix_seconds"] for t in done])
back = med([t["end_unix_seconds"] - t["result"]["ended_unix_seconds"] for t in done])
whole = med([t["end_seconds"] - t["start_seconds"] for t in tests])
stamped = [t["result"] for t in done if t["result"].get("tcp_started_unix_seconds")]
probes_part = med([r["tcp_started_unix_seconds"] - r["started_unix_seconds"] for r in stamped])
tcp_part = med([r["tcp_ended_unix_seconds"] - r["tcp_started_unix_seconds"] for r in stamped])
tcp_time = med([t["result"]["tcp_seconds"] for t in done if t["result"].get("tcp_seconds")])
load = open("/proc/loadavg").read().split()[0]
print(f"per test (median): {whole:.3f} s = reach and consent {reach:.3f} + at the source {at_source:.3f} "
      f"(probes' session {probes_part:.3f}, tcp session {tcp_part:.3f} of which the receiver's time {tcp_time:.3f}) "
      f"+ result back {back:.3f}; load average {load}", file=sys.stderr)
print(f"| {n} lab hosts, {rate} | {secs} s, {probes} probes | {len(tests)} | {r['slots']} | {r['predicted_seconds']:.1f} s | "
      f"{r['elapsed_seconds']:.1f} s ({100 * (ratio - 1):+.1f}%) | {longest:.2f} s | {100 * in_tests:.1f}% | {overlaps} | "
      f"{rates[0] / 1e6:.2f}-{rates[-1] / 1e6:.2f} Mbit/s | {len(r['analysis']['findings'])} | {rss_mib:.1f} MiB | {'ok' if ok else 'FAILED'} |")
sys.exit(0 if ok else 1)
PY
