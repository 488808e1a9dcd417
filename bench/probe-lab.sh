#!/usr/bin/env bash
# Per-hop accuracy against the configured truth, wirespeed beside pchar (Debian package), on the
# same emulated chain (default labs/probe-chain.toml: three hops that differ in link rate,
# forwarding and answer cost). wirespeed runs `reproduce bellovin --topology FILE` (its
# calibration twin included in its wall time); pchar runs in a lab of the same file, twice: with
# about wirespeed's probe budget and with its own defaults' budget. Prints one Markdown table of
# each hop's per-byte cost out (us/byte) and one-way fixed cost (us) beside the configured values,
# and each tool's wall time. Root only; it removes the lab it brings up.
#
#   bash bench/probe-lab.sh [FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:-labs/probe-chain.toml}
command -v pchar >/dev/null || { echo "pchar not found: apt-get install pchar" >&2; exit 2; }
cargo build --release -q -p wirespeed
bin=$PWD/target/release/wirespeed
out=$(mktemp -d)
lab=""
cleanup() { [ -n "$lab" ] && "$bin" lab down "$lab" >/dev/null 2>&1 || true; rm -rf "$out"; }
trap cleanup EXIT INT TERM
now() { date +%s.%N; }

t0=$(now)
"$bin" reproduce bellovin --topology "$file" --json >"$out/ours.json"
t1=$(now)
echo "$t0 $t1" >"$out/ours.time"

lab=$("$bin" lab up "$file")
ends=$(python3 - "$file" <<'EOF'
import sys, tomllib
t = tomllib.load(open(sys.argv[1], "rb"))
print(" ".join(h["name"] for h in t["host"][:2]))
EOF
)
read -r from to <<<"$ends"
dst=$(ip netns exec "ws-$lab-$to" ip -4 -o addr show | awk '$2 != "lo" {print $4}' | cut -d/ -f1 | head -1)
# pchar: (reps, increment) = about wirespeed's budget (6 sizes x 5 per hop), then 32 x 47 sizes.
for budget in "5 256" "32 32"; do
    read -r reps incr <<<"$budget"
    t0=$(now)
    ip netns exec "ws-$lab-$from" pchar -n -p ipv4icmp -R "$reps" -I "$incr" -m 1500 -g 0 -H 8 -t 1 "$dst" \
        >"$out/pchar-$reps.txt" 2>&1 || true
    t1=$(now)
    echo "$t0 $t1" >"$out/pchar-$reps.time"
done

python3 - "$out" "$file" <<'EOF'
import json, re, sys
out, file = sys.argv[1], sys.argv[2]
doc = json.load(open(f"{out}/ours.json"))
rows = doc["result"]["comparisons"][0]["rows"]
def secs(name):
    a, b = map(float, open(f"{out}/{name}.time").read().split())
    return b - a
hops = {}
for r in rows:
    m = re.match(r"hop (\d+) \((.*)\) (per byte out|fixed)", r["quantity"])
    if not m:
        continue
    h = hops.setdefault(int(m.group(1)), {"name": m.group(2)})
    kind = "pb" if m.group(3) == "per byte out" else "fx"
    h[kind] = (r["configured"], r["ours"])
    if kind == "fx":
        raw = re.search(r"as measured: (-?[0-9.]+) us", r["why"])
        h["raw"] = float(raw.group(1)) if raw else None
def pchar(reps):
    text = open(f"{out}/pchar-{reps}.txt").read()
    got = {}
    # pchar numbers hops from 0 (the sender); "Hop char" of hop k is the link k -> k+1.
    for m in re.finditer(r"Hop char:\s+rtt = (-?[0-9.]+|--) ms, bw = (-?[0-9.]+|--) Kbps", text):
        k = len(got) + 1
        rtt, bw = m.group(1), m.group(2)
        fx = float(rtt) * 1e3 / 2 if rtt != "--" else None
        pb = 8e3 / float(bw) if bw not in ("--",) and float(bw) != 0 else None
        got[k] = (pb, fx)
    return got
p5, p32 = pchar(5), pchar(32)
def err(v, c, rel):
    if v is None:
        return "-"
    return f"{(v / c - 1) * 100:+.1f}%" if rel else f"{v - c:+.1f}"
print(f"chain {file}: per hop, one way; error = ours - configured (per byte: %, fixed: us)\n")
print("| hop | quantity | configured | wirespeed | error | wirespeed uncalibrated | error | pchar -R 5 -I 256 | error | pchar -R 32 -I 32 | error |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for k in sorted(hops):
    h = hops[k]
    c, o = h["pb"]
    a, b = p5.get(k, (None, None)), p32.get(k, (None, None))
    f = lambda v, d: "-" if v is None else f"{v:.{d}f}"
    print(f"| {k} ({h['name']}) | per byte out, us/byte | {c:.3f} | {o:.3f} | {err(o, c, True)} | - | | {f(a[0], 3)} | {err(a[0], c, True)} | {f(b[0], 3)} | {err(b[0], c, True)} |")
    c, o = h["fx"]
    print(f"| {k} ({h['name']}) | fixed, us | {c:.1f} | {o:.1f} | {err(o, c, False)} | {f(h['raw'], 1)} | {err(h['raw'], c, False)} | {f(a[1], 1)} | {err(a[1], c, False)} | {f(b[1], 1)} | {err(b[1], c, False)} |")
print()
print(f"wall time: wirespeed {secs('ours'):.1f} s (two labs brought up and down, twin and chain probed); "
      f"pchar -R 5 -I 256 {secs('pchar-5'):.1f} s, pchar -R 32 -I 32 {secs('pchar-32'):.1f} s (lab already up)")
EOF
