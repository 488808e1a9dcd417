#!/usr/bin/env bash
# diagnose --peer across labs/duplex-mismatch.toml and labs/duplex-matched.toml (needs root):
# an agent in "full", `diagnose eth0 --peer` in "half", RUNS times each, -t SECONDS each way.
# Prints one line per run: lab, to-peer and from-peer bit/s, retransmits, ratio, findings.
# Labs get unique names and are removed.
set -euo pipefail
W=${WIRESPEED:-target/release/wirespeed}
RUNS=${RUNS:-3}
SECS=${SECS:-3s}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for file in duplex-mismatch duplex-matched; do
  sed "0,/^name = .*/s//name = \"bdp$$\"/" "labs/$file.toml" >"$tmp/$file.toml"
  for i in $(seq 1 "$RUNS"); do
    lab=$("$W" lab up "$tmp/$file.toml")
    "$W" lab exec "$lab" full -- "$W" serve -B 198.18.0.2 -p 5210 >/dev/null 2>&1 &
    agent=$!
    sleep 2
    "$W" lab exec "$lab" half -- "$W" diagnose eth0 --peer 198.18.0.2 -t "$SECS" --json >"$tmp/d.json" 2>"$tmp/d.err" || cat "$tmp/d.err" >&2
    kill "$agent" 2>/dev/null || true
    "$W" lab down "$lab" >/dev/null
    python3 - "$file" "$tmp/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))["result"]["peer"]
t, f = d["to_peer"], d["from_peer"]
r = max(t["bits_per_second"], f["bits_per_second"]) / max(min(t["bits_per_second"], f["bits_per_second"]), 1)
kinds = ",".join(x["severity"] for x in d["findings"]) or "none"
print(f'{sys.argv[1]:16} to {t["bits_per_second"]/1e6:6.3f} Mb/s ({t["retransmits"]} retx)  from {f["bits_per_second"]/1e6:6.3f} Mb/s ({f["retransmits"]} retx)  ratio {r:4.1f}  finding {kinds}')
PY
  done
done
