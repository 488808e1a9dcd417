#!/usr/bin/env bash
# wirespeed tcp against iperf3 through one two-host lab (issue 20, the tool side): the same
# lab (RATE, 1 ms each way, queue 1000 frames), the same congestion control (cubic), the same
# -t and -O 2, the same default buffers (kernel autotuning), client in h1 sending to a server in
# h2 (iperf3 -s -1, wirespeed serve -1), the two tools alternately REPS times. Prints each run's
# received rate against the envelope ceiling (1448/1538 of the rate), then min/median/max per
# tool and the ratio of the medians, wirespeed / iperf3, with the load average before and after.
# Needs root and iperf3. Builds its own lab (198.18.0.0/24, name ws-tt-*) and removes it.
# Usage: bench/lab-tcp-tools.sh [SECONDS] [REPS] [RATE]   (default 8 s, 3 reps, 10G)
# WIRESPEED_ARGS adds flags to wirespeed tcp (e.g. "-l 64KiB"); IPERF3_ARGS to iperf3's client.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-8}" reps="${2:-3}" rate="${3:-10G}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
W="${WIRESPEED:-$CARGO_TARGET_DIR/release/wirespeed}"
[ -n "${WIRESPEED:-}" ] || cargo build --release -q -p wirespeed --bin wirespeed
dir=$(mktemp -d)
cat >"$dir/tt.toml" <<TOML
[[host]]
name = "h1"
[[host]]
name = "h2"
[[link]]
a = "h1"
b = "h2"
rate = "$rate"
delay = "1ms"
queue = 1000
ipv6 = false
TOML
name=$("$W" lab up "$dir/tt.toml")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  "$W" lab down "$name" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
ex() { local host=$1; shift; "$W" lab exec "$name" "$host" -- "$@"; }
# The ceiling: 1448 payload bytes per 1538 wire bytes (timestamps, FCS, preamble, gap).
bits=$(awk -v r="$rate" 'BEGIN{m=1; if (r ~ /G$/) m=1e9; else if (r ~ /M$/) m=1e6; sub(/[GM]$/,"",r); print r*m}')
ceiling=$(awk -v b="$bits" 'BEGIN{print b*1448/1538}')
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, kernel $(uname -r), lab $name ($rate, 1 ms each way), -t $secs -O 2 -C cubic, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# ceiling $(awk -v c="$ceiling" 'BEGIN{printf "%.1f", c/1e6}') Mbit/s; wirespeed ${WIRESPEED_ARGS:-} / iperf3 ${IPERF3_ARGS:-}"
t=$((secs + 2))
ip_all=() ws_all=()
for rep in $(seq 1 "$reps"); do
  ex h2 iperf3 -s -1 -B 198.18.0.2 -p 5298 >/dev/null 2>&1 & pids+=($!)
  sleep 0.4
  # shellcheck disable=SC2086
  ip=$(ex h1 timeout $((t + 20)) iperf3 -c 198.18.0.2 -p 5298 -J -t "$t" -O 2 -C cubic ${IPERF3_ARGS:-} \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])' || echo nan)
  wait "${pids[-1]}" 2>/dev/null || true
  ex h2 "$W" serve -1 -B 198.18.0.2 -p 5299 >/dev/null 2>&1 & pids+=($!)
  sleep 0.4
  # shellcheck disable=SC2086
  ws=$(ex h1 timeout $((t + 20)) "$W" tcp 198.18.0.2 -p 5299 --json -i 0 -t "$t" -O 2 -C cubic ${WIRESPEED_ARGS:-} \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["end"]["sum_received"]["bits_per_second"])' || echo nan)
  wait "${pids[-1]}" 2>/dev/null || true
  ip_all+=("$ip") ws_all+=("$ws")
  awk -v i="$ip" -v w="$ws" -v c="$ceiling" -v r="$rep" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
    'BEGIN{printf "run %d: iperf3 %.1f Mbit/s (%.2f%%), wirespeed tcp %.1f Mbit/s (%.2f%%), ratio %.3f, load %s\n", r, i/1e6, i/c*100, w/1e6, w/c*100, w/i, l}'
done
stats() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f / %.1f / %.1f", a[1]/1e6, m/1e6, a[NR]/1e6}'; }
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
echo "iperf3 min/median/max Mbit/s: $(stats "${ip_all[@]}")"
echo "wirespeed tcp min/median/max Mbit/s: $(stats "${ws_all[@]}")"
awk -v i="$(med "${ip_all[@]}")" -v w="$(med "${ws_all[@]}")" -v c="$ceiling" \
  'BEGIN{printf "medians of the ceiling: iperf3 %.2f%%, wirespeed tcp %.2f%%; wirespeed / iperf3 %.3f\n", i/c*100, w/c*100, w/i}'
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
