#!/usr/bin/env bash
# The ingress stamps' CPU cost (issue 17): the emulator's CPU per frame offered on a two-host
# lab link (`lab status` cost.cpu_ns_per_frame of the h1 -> h2 port: its ingress and egress
# threads together) under `wirespeed udp -l 64` (small frames: the most frames per byte), with
# the link charged from the sending kernel's transmit stamps and without
# (WIRESPEED_LAB_INGRESS_STAMPS=all / 0, same lab otherwise), at each rate given. Also the
# frames the port received per second, the pairing counters and the client's send rate and
# CPU, whose kernel makes the stamped copy of every frame. REPS labs per row, alternating.
# Needs root. Labs named wl-*, removed on exit.
#
#   sudo bash bench/lab-stamp-cost.sh [REPS] [RATES...]      (default 3, 100M 1G)
#   sudo WIRESPEED_BIN=/path/to/wirespeed bash bench/lab-stamp-cost.sh ...
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
shift || true
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(100M 1G)
. bench/lib/wirespeed-bin.sh
tmp=$(mktemp -d)
lab=
agent=
cleanup() {
    [ -n "$agent" ] && kill "$agent" 2>/dev/null || true
    [ -n "$lab" ] && "$bin" lab down "$lab" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
echo "| link and offered rate | stamps | emulator CPU per frame, ns (min / median / max) | frames in per second of load | reads paired / unpaired (one stamp per read: a super-packet is one) |"
echo "|---|---|---|---|---|"
for rate in "${rates[@]}"; do
    printf '[[host]]\nname = "h1"\n[[host]]\nname = "h2"\n[[link]]\na = "h1"\nb = "h2"\nrate = "%s"\ndelay = "0"\nqueue = 1000\n' "$rate" > "$tmp/wl.toml"
    declare -A cost=() fps=() pair=() sent=()
    for ((r = 0; r < reps; r++)); do
        for stamps in all 0; do
            lab=$(WIRESPEED_LAB_INGRESS_STAMPS=$stamps "$bin" lab up "$tmp/wl.toml")
            "$bin" lab exec "$lab" h2 -- "$bin" serve -B 198.18.0.2 >/dev/null 2>&1 &
            agent=$!
            sleep 1
            "$bin" lab exec "$lab" h1 -- "$bin" udp 198.18.0.2 -b "$rate" -l 64 -t 3 --json > "$tmp/udp.json" 2>/dev/null || true
            "$bin" lab status "$lab" --json > "$tmp/status.json"
            kill "$agent" 2>/dev/null || true
            wait "$agent" 2>/dev/null || true
            agent=
            "$bin" lab down "$lab" >/dev/null
            lab=
            read -r c f p s < <(python3 - "$tmp/status.json" "$tmp/udp.json" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
ports = st.get("result", st)
ports = ports.get("ports", ports) if isinstance(ports, dict) else ports
p = next(p for p in ports if p.get("from") == "h1")
st_ = p.get("ingress_stamps") or {}
try:
    u = json.load(open(sys.argv[2]))["result"]
    sent = u.get("sender", u).get("bits_per_second") or u.get("sent_bits_per_second") or float("nan")
except Exception:
    sent = float("nan")
frames = p.get("counters", p).get("frames_in", 0)
print(f'{p["cost"]["cpu_ns_per_frame"]:.0f} {frames} {st_.get("paired", 0)}/{st_.get("unpaired", 0)} {sent / 1e6 if sent == sent else float("nan"):.1f}')
PY
)
            cost[$stamps]+="$c "
            fps[$stamps]+="$f "
            pair[$stamps]="$p"
            sent[$stamps]+="$s "
        done
    done
    for stamps in all 0; do
        stats=$(python3 -c 'import sys,statistics as s; v=sorted(float(x) for x in sys.argv[1:]); print(f"{v[0]:.0f} / {s.median(v):.0f} / {v[-1]:.0f}")' ${cost[$stamps]})
        frames=$(python3 -c 'import sys,statistics as s; print(f"{s.median(float(x) for x in sys.argv[1:]) / 3:.0f}")' ${fps[$stamps]})
        mbit=$(python3 -c 'import sys,statistics as s; print(f"{s.median(float(x) for x in sys.argv[1:]):.1f}")' ${sent[$stamps]})
        echo "| $rate, udp -b $rate -l 64 | $([ "$stamps" = all ] && echo on || echo off) | $stats | $frames | ${pair[$stamps]} |"
    done
    unset cost fps pair sent
done
