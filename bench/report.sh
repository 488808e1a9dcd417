#!/usr/bin/env bash
# Benchmark of `wirespeed report`: render time (process start included) and page size for
# N saved documents, N = 1, 10, 100, 1000. The documents are real: a 1 s loopback TCP run
# (-P 2), a small `sim csma` series and an `envelope`, copied round-robin into a directory.
# Prints the figures bench/RESULTS.md quotes.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p wirespeed
bin=$PWD/target/release/wirespeed
work=$(mktemp -d /tmp/wirespeed-report-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$bin" tcp -t 1 -P 2 --json > "$work/tcp.json"
"$bin" sim csma --hosts 1,2,4,8,16,24 -l 64,512,1536 -t 200ms --json > "$work/sim.json"
"$bin" envelope --rate 1G --json > "$work/envelope.json"
python3 - "$bin" "$work" <<'PY'
import os, shutil, subprocess, sys, time
bin, work = sys.argv[1], sys.argv[2]
kinds = ["tcp", "sim", "envelope"]
print(f"{'documents':>9}  {'best of 5':>10}  {'per document':>12}  {'page':>9}  {'per document':>12}  plots")
for n in (1, 10, 100, 1000):
    d = os.path.join(work, f"n{n}")
    os.makedirs(d)
    for i in range(n):
        k = kinds[i % len(kinds)]
        shutil.copy(os.path.join(work, f"{k}.json"), os.path.join(d, f"{i:05d}-{k}.json"))
    page = os.path.join(work, f"n{n}.html")
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        out = subprocess.run([bin, "report", d, "-o", page], check=True, capture_output=True, text=True)
        best = min(best, time.perf_counter() - t0)
    size = os.path.getsize(page)
    plots = open(page).read().count('<svg class="plot"')
    print(f"{n:>9}  {best*1e3:>8.1f} ms  {best*1e3/n:>9.2f} ms  {size/1024:>6.0f} KiB  {size/1024/n:>8.1f} KiB  {plots}")
PY
