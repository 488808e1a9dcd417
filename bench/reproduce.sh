#!/usr/bin/env bash
# Every `wirespeed reproduce` at its default size (duplex-mismatch with --runs 3), with the verdict counts and the key rows.
# The lab reproductions need root; each takes its own labs down.
#
#   bash bench/reproduce.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p wirespeed
bin=$PWD/target/release/wirespeed
summary='
import json, sys
d = json.load(sys.stdin)["result"]
print("rows %d: %d within, %d outside" % (d["rows"], d["within"], d["outside"]))
f = lambda v: "-" if v is None else "%.4g" % v
for c in d["comparisons"]:
    for r in c["rows"]:
        if r["verdict"] != "not_compared":
            print("  %-48s %-9s configured %8s  paper %8s  ours %8s  %s"
                  % (r["quantity"], r["unit"], f(r["configured"]), f(r["paper"]), f(r["ours"]), r["verdict"]))
'
for name in envelope boggs duplex-mismatch bellovin vj-buffers; do
    echo "### wirespeed reproduce $name --json"
    t0=$(date +%s.%N)
    extra=()
    # Several runs each way show the mismatch's run-to-run spread.
    [ "$name" = duplex-mismatch ] && extra=(--runs 3)
    "$bin" reproduce "$name" "${extra[@]}" --json | python3 -c "$summary"
    t1=$(date +%s.%N)
    echo "wall time: $(python3 -c "print(round($t1 - $t0, 1))") s"
    echo
done
