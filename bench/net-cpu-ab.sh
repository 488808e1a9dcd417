#!/usr/bin/env bash
# Two builds of wirespeed side by side on loopback, by CPU per gigabyte rather than by rate: a
# change that could add a call on the per-packet path (a library function made public, say)
# shows as more CPU for the same bytes, and CPU time is less at the mercy of a shared machine's
# load than a rate is. Each repetition runs A then B (B then A on even ones) for a TCP test of
# a fixed byte count and a UDP test of a fixed byte count, both ends in the one process, and
# takes user + sys of the whole process from /usr/bin/time. The table gives each case's median
# CPU seconds per GB per binary and the ratio B/A of each repetition's pair (min/median/max).
#
#   A=/tmp/before/target/release/wirespeed B=target/release/wirespeed REPS=7 bash bench/net-cpu-ab.sh
#
# Traffic goes to 127.0.0.1 only; every run is bounded by its byte count and by `timeout 120`.
set -euo pipefail
cd "$(dirname "$0")/.."

A=${A:?A=path of the first wirespeed binary}
B=${B:?B=path of the second wirespeed binary}
REPS=${REPS:-7}
TCP_BYTES=${TCP_BYTES:-4G}
UDP_BYTES=${UDP_BYTES:-1G}
for bin in "$A" "$B"; do
    [ -x "$bin" ] || { echo "net-cpu-ab: $bin is not an executable; build it first" >&2; exit 2; }
done
case $REPS in '' | *[!0-9]* | 0) echo "net-cpu-ab: REPS=$REPS: give a count from 1 to 50" >&2; exit 2 ;; esac
[ "$REPS" -le 50 ] || { echo "net-cpu-ab: REPS=$REPS: give a count from 1 to 50" >&2; exit 2; }

TMP=$(mktemp -d /tmp/ws-net-cpu-ab.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# One run: prints "cpu_seconds bytes" (bytes as the receiver counted them).
run() {
    local bin=$1 kind=$2
    local args=(tcp -n "$TCP_BYTES")
    [ "$kind" = udp ] && args=(udp -n "$UDP_BYTES" -b 0 -l 1400)
    timeout 120 /usr/bin/time -f "%U %S" -o "$TMP/time" "$bin" "${args[@]}" -i 0 -J > "$TMP/out.json"
    python3 - "$TMP/time" "$TMP/out.json" <<'PY'
import json, sys
u, s = open(sys.argv[1]).read().split()[-2:]
doc = json.load(open(sys.argv[2]))
print(float(u) + float(s), doc["result"]["end"]["sum_received"]["bytes"])
PY
}

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), REPS=$REPS tcp $TCP_BYTES udp $UDP_BYTES"
echo "# A=$A"
echo "# B=$B"
for rep in $(seq 1 "$REPS"); do
    order="A B"
    [ $((rep % 2)) = 0 ] && order="B A"
    for c in tcp udp; do
        for which in $order; do
            bin=$A
            [ "$which" = B ] && bin=$B
            v=$(run "$bin" "$c") || { echo "net-cpu-ab: $c failed with $bin" >&2; exit 1; }
            echo "$rep $c $which $v" >> "$TMP/runs"
        done
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$TMP/runs" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    rep, case, which, cpu, nbytes = line.split()
    runs.setdefault(case, {}).setdefault(int(rep), {})[which] = float(cpu) / (float(nbytes) / 1e9)
print("| case | A CPU s/GB median | B CPU s/GB median | B/A min | B/A median | B/A max | reps |")
print("|---|---:|---:|---:|---:|---:|---:|")
for case, reps in runs.items():
    a = [r["A"] for r in reps.values()]
    b = [r["B"] for r in reps.values()]
    ratios = [r["B"] / r["A"] for r in reps.values()]
    print(f"| {case} | {statistics.median(a):.3f} | {statistics.median(b):.3f} "
          f"| {min(ratios):.3f} | {statistics.median(ratios):.3f} | {max(ratios):.3f} | {len(ratios)} |")
PY
