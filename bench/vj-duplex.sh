#!/usr/bin/env bash
# Seed 004, issue 21 item 4: is the 3/60 lab's shortfall (plateau under the seed's 91%) and its
# sag from 7 packets the hosts' cost or the half-duplex medium? The same lab
# (labs/seed-004-sun3.toml: 784 ns per byte each way, 1990s TCP) once half duplex, once full
# duplex; send = receive buffer K packets, 1 MB per transfer, REPS transfers per K; then the
# emulator's collision counters. Needs root (network namespaces); every lab is named ws-...,
# brought up and taken down by `wirespeed lab run`. About a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p wirespeed
W="${CARGO_TARGET_DIR:-target}/release/wirespeed"
W="$(cd "$(dirname "$W")" && pwd)/wirespeed"
KS="${KS:-4 6 8 10 12}"
REPS="${REPS:-3}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cat > "$dir/run.sh" <<INNER
#!/usr/bin/env bash
set -u
# sweep writes a results file in its working directory: keep it out of the repository.
cd "$dir"
"$W" lab exec "\$WIRESPEED_LAB" sun2 -- "$W" serve -p 5299 >/dev/null 2>&1 &
spid=\$!
sleep 1
hd=""; [ "\$DUPLEX" = half ] && hd="--half-duplex"
for k in $KS; do
  for rep in \$(seq $REPS); do
    "$W" lab exec "\$WIRESPEED_LAB" sun1 -- "$W" sweep 198.18.0.2:5299 --snd \$k --rcv \$k --reps 1 \\
      -n 1000000B -M 1460 --link-rate 10M \$hd --json > "$dir/r.json" 2>/dev/null
    python3 "$dir/rate.py" "$dir/r.json" "\$DUPLEX K=\$k rep=\$rep"
  done
done
"$W" lab status "\$WIRESPEED_LAB" --json > "$dir/status-\$DUPLEX.json"
kill \$spid 2>/dev/null
wait
INNER
chmod +x "$dir/run.sh"
cat > "$dir/rate.py" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["result"]["runs"][0]
print(sys.argv[2], round(r["bytes"] / r["seconds"] / 1024, 1), "KiB/s")
PY
for d in half full; do
  sed -e "s/^name = \"seed-004\"/name = \"vj$d\"/" -e "s/^duplex = \"half\"/duplex = \"$d\"/" \
    labs/seed-004-sun3.toml > "$dir/vj-$d.toml"
  DUPLEX=$d "$W" lab run "$dir/vj-$d.toml" -- "$dir/run.sh"
  python3 - "$dir/status-$d.json" "$d" <<'PY'
import json, sys
ports = json.load(open(sys.argv[1]))["result"]["ports"]
c = [p["counters"] for p in ports]
print(f"{sys.argv[2]}: frames out {c[0]['frames_out']} / {c[1]['frames_out']}, collisions {c[0]['collisions']} "
      f"({c[0]['collisions'] / max(1, c[1]['frames_out']):.2f} per ACK frame)")
PY
done
