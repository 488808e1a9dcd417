#!/usr/bin/env bash
# Two builds of wirespeed side by side, for a change of the release profile (per-package
# opt-level): loopback TCP and UDP throughput, TCP across a 1 Gbit/s lab (the emulator's
# forwarding), the HTML report of a large saved file, a CSMA/CD simulation and a mesh of
# local agents. The two binaries alternate in every repetition (A then B, then B then A), so
# both see the same load; the table gives each case's median per binary and the ratio B/A of
# each repetition's pair (min/median/max). A ratio near 1 is no change; under a shared
# machine's load the spread of the ratios, not one figure, is the measurement.
#
#   A=/tmp/before/target/release/wirespeed B=target/release/wirespeed REPS=5 bash bench/profile-compare.sh
#   (CASES="lab" ... for only some of the cases)
#
# The lab row needs root (it is skipped otherwise); it builds its own lab (198.18.0.0/24,
# named ws-cmp-*) through `lab run`, which removes it. Traffic goes to 127.0.0.1 and the lab.
set -euo pipefail
cd "$(dirname "$0")/.."

A=${A:?A=path of the first wirespeed binary}
B=${B:?B=path of the second wirespeed binary}
REPS=${REPS:-5}
SECS=${SECS:-2}
for bin in "$A" "$B"; do
    [ -x "$bin" ] || { echo "profile-compare: $bin is not an executable; build it first" >&2; exit 2; }
done
case $REPS in '' | *[!0-9]* | 0) echo "profile-compare: REPS=$REPS: give a count from 1 to 50" >&2; exit 2 ;; esac
[ "$REPS" -le 50 ] || { echo "profile-compare: REPS=$REPS: give a count from 1 to 50" >&2; exit 2; }

TMP=$(mktemp -d /tmp/ws-profile-compare.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# The report's input: the iperf3 example with its intervals repeated to about 16 MB.
python3 - "$TMP/big.json" <<'PY'
import json, sys
doc = json.load(open("examples/iperf3-tcp.json"))
one = doc["intervals"]
doc["intervals"] = [one[i % len(one)] for i in range(12000)]
json.dump(doc, open(sys.argv[1], "w"), indent=1)
PY

cat > "$TMP/fast.toml" <<'EOF'
name = "ws-cmp"

[[host]]
name = "h1"

[[host]]
name = "h2"

[[link]]
a = "h1"
b = "h2"
rate = "1G"
queue = 1000
EOF

now() { date +%s.%N; }
json_bps() { python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["end"]["sum_received"]["bits_per_second"])'; }

# Each case prints one figure: a rate (higher is better) or seconds (lower is better).
case_tcp() { "$1" tcp -t "$SECS" -i 0 -J | json_bps; }
case_udp() { "$1" udp -t "$SECS" -b 0 -l 1400 -i 0 -J | json_bps; }
case_lab() {
    "$1" lab run "$TMP/fast.toml" -- sh -c '"$0" lab exec "$WIRESPEED_LAB" h2 -- "$0" serve -B 198.18.0.2 >/dev/null 2>&1 & a=$!; sleep 1; "$0" lab exec "$WIRESPEED_LAB" h1 -- "$0" tcp 198.18.0.2 -t "$1" -O 1 -i 0 -J; s=$?; kill $a; exit $s' "$1" "$((SECS + 1))" | json_bps
}
case_report() { local t0; t0=$(now); "$1" report "$TMP/big.json" -o "$TMP/page.html" >/dev/null; python3 -c "print($(now) - $t0)"; }
case_sim() { local t0; t0=$(now); "$1" sim csma --hosts 1,4,16 -l 64,1536 --replications 1 >/dev/null 2>&1; python3 -c "print($(now) - $t0)"; }
case_mesh() { local t0; t0=$(now); "$1" mesh --local 3 -t 0.2 --probes 2 >/dev/null; python3 -c "print($(now) - $t0)"; }

cases="tcp udp report sim mesh"
if [ "$(id -u)" = 0 ]; then cases="$cases lab"; else echo "# not root: the lab row is skipped"; fi
# CASES="lab" (any of the names above) runs only those, e.g. for a change of the emulator alone.
if [ -n "${CASES:-}" ]; then
    for c in $CASES; do
        case " $cases " in *" $c "*) ;; *) echo "profile-compare: CASES: $c is not one of: $cases" >&2; exit 2 ;; esac
    done
    cases=$CASES
fi
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), REPS=$REPS SECS=$SECS"
echo "# A=$A"
echo "# B=$B"
for rep in $(seq 1 "$REPS"); do
    order="A B"
    [ $((rep % 2)) = 0 ] && order="B A"
    for c in $cases; do
        for which in $order; do
            bin=$A
            [ "$which" = B ] && bin=$B
            v=$("case_$c" "$bin") || { echo "profile-compare: case $c failed with $bin" >&2; exit 1; }
            echo "$rep $c $which $v" >> "$TMP/runs"
        done
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$TMP/runs" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    rep, case, which, v = line.split()
    runs.setdefault(case, {}).setdefault(int(rep), {})[which] = float(v)
unit = {"tcp": "Gbit/s", "udp": "Gbit/s", "lab": "Gbit/s", "report": "s", "sim": "s", "mesh": "s"}
print(f"| case | better | A median | B median | B/A min | B/A median | B/A max | reps |")
print(f"|---|---|---:|---:|---:|---:|---:|---:|")
for case, reps in runs.items():
    a = [r["A"] for r in reps.values()]
    b = [r["B"] for r in reps.values()]
    ratios = [r["B"] / r["A"] for r in reps.values()]
    scale = 1e9 if unit[case] == "Gbit/s" else 1
    better = "higher" if unit[case] == "Gbit/s" else "lower"
    print(f"| {case} ({unit[case]}) | {better} | {statistics.median(a)/scale:.3f} | {statistics.median(b)/scale:.3f} "
          f"| {min(ratios):.3f} | {statistics.median(ratios):.3f} | {max(ratios):.3f} | {len(ratios)} |")
PY
