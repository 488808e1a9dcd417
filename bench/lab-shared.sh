#!/usr/bin/env bash
# Benchmark of the lab's shared media (needs root): (1) TCP throughput each way across the
# 10 Mbit/s duplex-mismatch pair and the matched (half/half) pair, with iperf3, beside seed 003
# Table 7; (2) collisions per frame on the 24-station hub with N saturated UDP senders, beside
# `wirespeed sim csma` for the same N, frame size and cable (200 m, stations evenly spread,
# velocity 0.66, no interrupt latency: a station's next frame is always queued).
# (3) The hub's 64-byte series (issue 20, issue 21 item 5): labs/boggs-24.toml, N stations each
# with a `wirespeed serve` agent, one `wirespeed load --raw --lengths 64` run per N, the agents'
# bit rate beside `wirespeed sim csma` for the same segment (914.4 m, 0.77 c, even, 15 buffers,
# no interrupt latency, 16 collisions give a frame up; sim figure = sent + given-up bits, what a
# host's device took), the emulator's CPU share over the test and the frames the stations' TAPs
# refused (the generators' ENOBUFS).
# Prints the figures bench/RESULTS.md quotes. Tears down only the labs it brought up.
# Usage: bench/lab-shared.sh [PARTS]   PARTS: any of duplex hub hub64 (default: all three);
# RUNS, SECS (duplex and hub), HUB64_SECS (default 2), HUB64_HOSTS (default "1 2 4 8 16 24").
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --release -q -p wirespeed
bin=$CARGO_TARGET_DIR/release/wirespeed
source bench/lib/boggs24-agents.sh
runs=${RUNS:-3}
secs=${SECS:-5}
parts=${*:-duplex hub hub64}
want() { [[ " $parts " == *" $1 "* ]]; }
py=$(mktemp -d)
trap 'rm -rf "$py"' EXIT
cat > "$py/ends.py" <<'PY'
import json, sys
for p in json.load(sys.stdin)["result"]["ports"]:
    c = p["counters"]
    print("  %4s end (%s): sent %d, received %d, collisions %d, late %d, late aborts %d, FCS errors %d, runts %d"
          % (p["from"], p["medium"], c["frames_out"], c["frames_received"], c["collisions"], c["late_collisions"],
             c["drops_medium"] - c["excessive_collisions"], c["fcs_errors"], c["runts"]))
PY
cat > "$py/hub.py" <<'PY'
import json, sys
n = int(sys.argv[1])
ports = json.load(sys.stdin)["result"]["ports"][:n]
total = lambda k: sum(p["counters"][k] for p in ports)
sent, coll = total("frames_out"), total("collisions")
print("lab N=%d: frames sent %d, collisions %d (%.3f per frame), excessive %d, late %d"
      % (n, sent, coll, coll / max(sent, 1), total("excessive_collisions"), total("late_collisions")))
PY
cat > "$py/sim.py" <<'PY'
import json, sys
p = json.load(sys.stdin)["result"]["points"][0]
print("sim N=%d: %.3f collisions per frame, %.2f Mbit/s, dropped %d, late %d"
      % (p["hosts"], p["collisions_per_packet"]["mean"], p["bits_per_second"]["mean"] / 1e6, p["dropped"], p["late_collisions"]))
PY

if want duplex; then
echo "== TCP across the duplex pairs: iperf3 -t $secs, $runs runs each way (receiver Mbit/s)"
for file in duplex-matched duplex-mismatch; do
    lab=$("$bin" lab up "labs/$file.toml")
    trap '"$bin" lab down "$lab" >/dev/null; rm -rf "$py"' EXIT
    for dir in half-to-full full-to-half; do
        flag=""; [ "$dir" = full-to-half ] && flag="-R"
        rates=()
        for r in $(seq "$runs"); do
            port=$((5400 + r))
            "$bin" lab exec "$lab" full -- iperf3 -s -1 -D -p "$port"
            sleep 0.3
            rate=$(timeout $((secs + 15)) "$bin" lab exec "$lab" half -- \
                iperf3 -c 198.18.0.2 -p "$port" -t "$secs" $flag -J \
                | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e6, 2))')
            rates+=("$rate")
        done
        echo "$file $dir: ${rates[*]}"
    done
    "$bin" lab status "$lab" --json | python3 "$py/ends.py"
    "$bin" lab down "$lab" >/dev/null
    trap 'rm -rf "$py"' EXIT
done
fi

if want hub; then
echo "== hub: N saturated senders, 1000-byte UDP payloads (1046-byte frames), 4 s"
for n in 2 4 8 16 24; do
    lab=$("$bin" lab up labs/shared-24.toml)
    trap '"$bin" lab down "$lab" >/dev/null; rm -rf "$py"' EXIT
    pids=()
    for i in $(seq "$n"); do
        to=$(( i % 24 + 1 ))
        ns="ws-$lab-s$i"
        timeout 10 ip netns exec "$ns" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.monotonic() + 4
payload = bytes(1000)
while time.monotonic() < end:
    try:
        s.sendto(payload, (sys.argv[1], 9))
    except OSError:
        time.sleep(0.0005)
' "198.18.0.$to" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || true; done
    sleep 0.5
    "$bin" lab status "$lab" --json | python3 "$py/hub.py" "$n"
    "$bin" lab down "$lab" >/dev/null
    trap 'rm -rf "$py"' EXIT
    "$bin" sim csma --hosts "$n" -l 1046 --cable 200m --even --velocity 0.66 --interrupt-latency 0us -t 4s --json \
        | python3 "$py/sim.py"
done
fi

if want hub64; then
h64secs=${HUB64_SECS:-2}
echo "== hub 64-byte series: labs/boggs-24.toml, load --raw --lengths 64, --measure ${h64secs}s, load $(cut -d' ' -f1-3 /proc/loadavg)"
pids=()
cleanup64() {
    boggs24_down
    rm -rf "$py"
}
trap cleanup64 EXIT
boggs24_up "$py"
echo "| N | lab agents (Mbit/s) | sim sent + given up (Mbit/s) | lab - sim | medium carried | emulator CPU (share of a core) | TAP refusals | load average |"
echo "|---|---|---|---|---|---|---|---|"
for n in ${HUB64_HOSTS:-1 2 4 8 16 24}; do
    t0=$(ticks); d0=$(dropped); w0=$(date +%s.%N)
    "$bin" lab status "$lab" --json > "$py/s0"
    ip netns exec "ws-$lab-s1" "$bin" load --raw "${agents[@]:0:$((2 * n))}" --hosts "$n" --lengths 64 \
        --settle 0.5s --transmit "$((h64secs + 1))s" --measure "${h64secs}s" --cooldown 1s --no-model --json > "$py/load"
    "$bin" lab status "$lab" --json > "$py/s1"
    t1=$(ticks); d1=$(dropped); w1=$(date +%s.%N)
    "$bin" sim csma --hosts "$n" -l 64 --cable 914.4m --even --velocity 0.77 --interrupt-latency 0us \
        --cycle-time 0ns --discard-excessive --buffers 15 -t "${h64secs}s" --json > "$py/sim"
    python3 - "$py/s0" "$py/s1" "$py/load" "$py/sim" "$n" "$((t1 - t0))" "$((d1 - d0))" "$w0" "$w1" "$h64secs" <<'PY'
import json, sys
s0, s1, load, sim = (json.load(open(p)) for p in sys.argv[1:5])
n, ticks, refused, w0, w1, secs = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]), float(sys.argv[8]), float(sys.argv[9]), float(sys.argv[10])
tot = lambda s, k: sum(p["counters"][k] for p in s["result"]["ports"])
frames = tot(s1, "frames_out") - tot(s0, "frames_out")
m = load["result"]["rows"][0]["measured"]
p = sim["result"]["points"][0]
expected = p["bits_per_second"]["mean"] + p["dropped"] * (64 + 24) * 8 / secs
lab = m["bits_per_second"]
print("| %d | %.3f | %.3f | %+.1f%% | %d | %.2f | %d | %s |"
      % (n, lab / 1e6, expected / 1e6, (lab / expected - 1) * 100, frames, ticks / 100 / (w1 - w0), refused,
         open("/proc/loadavg").read().split()[0]))
PY
done
fi
