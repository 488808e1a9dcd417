#!/usr/bin/env bash
# One screenshot per command of `wirespeed report`'s page, as a reader at 1280 pixels sees it:
# docs/screenshots/report-<command>.png, linked from docs/report.md.
#
#   scripts/report-screenshots.sh          # from the report's saved documents
#   scripts/report-screenshots.sh --fresh  # from documents made now on loopback
#
# The saved documents are the ones the browser test and the view tests read
# (crates/wirespeed/testdata/report/); --fresh makes new ones on 127.0.0.1 with short runs
# (as root for `probe`'s ICMP and `load --local`) in a scratch directory. Needs Debian's
# chromium and pngquant (scripts/install-deps.sh) and a release build. Each Chromium runs in a
# scratch profile that is removed, bounded by `timeout`.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${WIRESPEED:-$root/target/release/wirespeed}
pages=$root/crates/wirespeed/testdata/report
shots=$root/docs/screenshots
chromium=${WIRESPEED_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -x "$bin" ] || { echo "no $bin: cargo build --release -p wirespeed first" >&2; exit 2; }
[ -n "$chromium" ] || { echo "no chromium: apt-get install chromium (scripts/install-deps.sh)" >&2; exit 2; }

scratch=$(mktemp -d /tmp/ws-screenshots.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

if [ "${1:-}" = "--fresh" ]; then
    pages=$scratch/documents
    mkdir -p "$pages"
    "$bin" tcp -t 2 -i 0.5 -P 2 --json > "$pages/tcp.json"
    "$bin" udp -t 1 -i 0.5 -b 200M --json > "$pages/udp.json"
    "$bin" latency --idle 1s -t 3s -P 1 --json > "$pages/latency-clock.json"
    "$bin" latency --rr -t 1s --request 64 --response 64 --json > "$pages/latency-rr.json"
    "$bin" sweep --snd 1,4,16,64 --reps 1 -n 1MiB --json > "$pages/sweep.json"
    "$bin" probe 127.0.0.1 -c 8 --sizes 28..1500:368 --json > "$pages/probe.json"
    "$bin" load --local 2 --lengths 64,512 --settle 0.2s --transmit 0.6s --measure 0.3s \
        --cooldown 0.1s --sink 1 --json > "$pages/load.json"
    "$bin" mesh --local 3 -t 0.2 --probes 2 --json > "$pages/mesh.json"
    cp "$root/crates/wirespeed/testdata/report/"{sim,reproduce,autoneg,envelope,iperf3-tcp}.json "$pages/"
fi

# command -> the document its screenshot shows, and the window's height in pixels.
shots_of=(
    "tcp $pages/tcp.json 1900"
    "udp $pages/udp.json 1700"
    "latency $pages/latency-clock.json 2700"
    "latency-rr $pages/latency-rr.json 900"
    "sweep $pages/sweep.json 2700"
    "probe $pages/probe.json 1500"
    "load $pages/load.json 1500"
    "mesh $pages/mesh.json 1900"
    "sim $pages/sim.json 1500"
    "reproduce $pages/reproduce.json 1500"
    "autoneg $pages/autoneg.json 1000"
    "envelope $pages/envelope.json 1300"
    "iperf3 $pages/iperf3-tcp.json 1700"
)
mkdir -p "$shots"
for entry in "${shots_of[@]}"; do
    read -r command document height <<< "$entry"
    # From the document's directory, so that the page names the file, not this machine's path.
    (cd "$(dirname "$document")" && "$bin" report "$(basename "$document")" -o "$scratch/$command.html" > /dev/null)
    out=$shots/report-$command.png
    timeout 120 "$chromium" --headless --disable-gpu --no-first-run --hide-scrollbars \
        --no-sandbox --user-data-dir="$scratch/profile" --window-size=1280,"$height" \
        --screenshot="$out" "file://$scratch/$command.html" > /dev/null 2>&1
    rm -rf "$scratch/profile"
    # Few colours say what a plot says: 64 keep the files small enough for the repository.
    if command -v pngquant > /dev/null; then
        pngquant --force --strip --quality 60-90 64 --output "$out" -- "$out"
    fi
    echo "$out: $(( $(stat -c %s "$out") / 1024 )) KiB"
done
