#!/usr/bin/env bash
# Benchmark of the lab's shared media (needs root): (1) TCP throughput each way across the
# 10 Mbit/s duplex-mismatch pair and the matched (half/half) pair, with iperf3, beside seed 003
# Table 7; (2) collisions per frame on the 24-station hub with N saturated UDP senders, beside
# `wirespeed sim csma` for the same N, frame size and cable (200 m, stations evenly spread,
# velocity 0.66, no interrupt latency: a station's next frame is always queued).
# Prints the figures bench/RESULTS.md quotes. Tears down only the labs it brought up.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p wirespeed
bin=target/release/wirespeed
runs=${RUNS:-3}
secs=${SECS:-5}
py=$(mktemp -d)
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

echo "== TCP across the duplex pairs: iperf3 -t $secs, $runs runs each way (receiver Mbit/s)"
for file in duplex-matched duplex-mismatch; do
    lab=$("$bin" lab up "labs/$file.toml")
    trap '"$bin" lab down "$lab" >/dev/null' EXIT
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
    trap - EXIT
done

echo "== hub: N saturated senders, 1000-byte UDP payloads (1046-byte frames), 4 s"
for n in 2 4 8 16 24; do
    lab=$("$bin" lab up labs/shared-24.toml)
    trap '"$bin" lab down "$lab" >/dev/null' EXIT
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
    trap - EXIT
    "$bin" sim csma --hosts "$n" -l 1046 --cable 200m --even --velocity 0.66 --interrupt-latency 0us -t 4s --json \
        | python3 "$py/sim.py"
done
