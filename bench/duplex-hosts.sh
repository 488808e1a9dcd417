#!/usr/bin/env bash
# TCP each way across a duplex-mismatch lab, RUNS times, with this repository's `wirespeed tcp`
# and `serve`: the rates and whether a transfer finished. For the lab files `reproduce
# duplex-mismatch` does not run (labs/duplex-mismatch-1990s-hosts.toml, whose slow direction
# stalls for tens of seconds per run). Root; brings up and takes down only its own lab.
#
#   RUNS=3 BYTES=1MB bash bench/duplex-hosts.sh labs/duplex-mismatch-1990s-hosts.toml
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:-labs/duplex-mismatch-1990s-hosts.toml}
runs=${RUNS:-3}
bytes=${BYTES:-1MB}
cargo build --release -q -p wirespeed
bin=$PWD/target/release/wirespeed
lab=$("$bin" lab up "$file")
trap '"$bin" lab down "$lab" >/dev/null' EXIT
half=$("$bin" lab status "$lab" --json | python3 -c 'import json,sys; n=json.load(sys.stdin)["result"]["lab"]["nodes"]; print([a.split()[1].split("/")[0] for x in n if x["name"]=="half" for a in x["addresses"] if ":" not in a.split()[1]][0])')
full=$("$bin" lab status "$lab" --json | python3 -c 'import json,sys; n=json.load(sys.stdin)["result"]["lab"]["nodes"]; print([a.split()[1].split("/")[0] for x in n if x["name"]=="full" for a in x["addresses"] if ":" not in a.split()[1]][0])')
one() { # FROM TO ADDRESS-OF-TO
    local out; out=$(mktemp)
    "$bin" lab exec "$lab" "$2" -- "$bin" serve -1 -p 0 -B "$3" >"$out" 2>/dev/null &
    local serve=$!
    for _ in $(seq 50); do grep -q "$3:" "$out" && break; sleep 0.1; done
    local at; at=$(grep -o "$3:[0-9]*" "$out" | head -1)
    timeout 150 "$bin" lab exec "$lab" "$1" -- "$bin" tcp "$at" -n "$bytes" -i 0 --json |
        python3 -c "import json,sys; e=json.load(sys.stdin)['result']['end']; r=e['sum_received']; print('%s -> %s: %.1f KiB/s, %d bytes in %.1f s, %s retransmits' % ('$1', '$2', r['bits_per_second']/8/1024, r['bytes'], r['seconds'], e['sum_sent']['retransmits']))"
    wait "$serve" 2>/dev/null || true
    rm -f "$out"
}
echo "# $file, $runs runs of $bytes each way, $(date -u +%FT%RZ), $(uname -r)"
for r in $(seq "$runs"); do
    one half full "$full"
    one full half "$half"
done
"$bin" lab status "$lab" | sed -n '/duplex/,$p'
