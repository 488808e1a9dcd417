#!/usr/bin/env bash
# One thread per offloaded direction against two, like with like (issue 20, the emulator side):
# the same lab_rates run (iperf3 cubic across a two-host lab, 1 ms each way, queue 1000, after
# slow start; no wirespeed tcp) alternating WIRESPEED_LAB_THREADS=2 (an ingress and an egress
# thread joined by a hand-off, the design before) and WIRESPEED_LAB_THREADS=1 (one thread that
# waits in one ppoll for the TAP or the next release), REPS times each, so both meet the same
# load. Each run also measures iperf3 across a plain veth pair (the machine's bound without the
# lab). Then a side-by-side table per rate and mode: iperf3's share of the envelope ceiling,
# release lateness p50/p99/max, the emulator's cores, the machine's busy cores, the lab's cores
# per Gbit/s (emulator + iperf3's own) against plain veth's, and the data direction's CPU per
# write split user/kernel: min / median / max over the runs, with the load average of each.
# With SMALL=1 the 64-byte rows (UDP 64-byte frames into 100 Mbit/s, queue 1000) run too, each
# mode alternating: forwarded share of line rate and the memory-bound refusals.
# Needs root and iperf3. Builds its own labs (namespaces ws-rates-*, ws-vb*) and removes them.
# Usage: bench/lab-threads.sh [SECONDS] [REPS] [RATES...]   (default 8 s, 3 reps, 10G)
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-8}" reps="${2:-3}"
shift $(( $# > 2 ? 2 : $# ))
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(10G)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --release -q -p wirespeed-lab --example lab_rates
command -v iperf3 >/dev/null || { echo "needs iperf3" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $reps x (threads 2, threads 1), ${secs} s, rates ${rates[*]}, spin ${WIRESPEED_LAB_SPIN_US:-adaptive}"
for rep in $(seq 1 "$reps"); do
  for threads in 2 1; do
    echo "# run $rep, WIRESPEED_LAB_THREADS=$threads, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    LAB_RATES_SUMMARY="$out" LAB_RATES_SMALL=0 WIRESPEED_LAB_THREADS=$threads \
      timeout $(( (secs + 20) * (${#rates[@]} + 1) + 60 )) \
      "$CARGO_TARGET_DIR/release/examples/lab_rates" "$secs" "${rates[@]}" >/dev/null || echo "# run failed" >&2
    if [ "${SMALL:-0}" = 1 ]; then
      LAB_RATES_SUMMARY="$out" WIRESPEED_LAB_THREADS=$threads \
        timeout 120 "$CARGO_TARGET_DIR/release/examples/lab_rates" small 3 1000 >/dev/null || echo "# small run failed" >&2
    fi
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def mmm(xs, fmt):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return "-"
    return " / ".join(fmt.format(v) for v in (xs[0], statistics.median(xs), xs[-1]))
tcp = [r for r in rows if r["kind"] == "tcp"]
print("\n| rate | threads | runs | iperf3, of the ceiling (min / median / max) | lateness p50 (us) | p99 (us) | max (us) | late > 50 us: write / behind / wait (sum) | emulator cores | machine busy (cores) | lab cores per Gbit/s | plain veth cores per Gbit/s | data direction per write, user / kernel (us, medians) | load (1 min) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for rate in dict.fromkeys(r["rate"] for r in tcp):
    for threads in ["2", "1"]:
        rs = [r for r in tcp if r["rate"] == rate and r["threads"] == threads]
        if not rs:
            continue
        late = [sum(r["late"][i] for r in rs) for i in range(3)]
        us = statistics.median(r["data_user_sys_per_write_us"][0] for r in rs)
        ks = statistics.median(r["data_user_sys_per_write_us"][1] for r in rs)
        print(f"| {rate}bit/s | {threads}{' (one_thread)' if all(r['one_thread'] for r in rs) else ''} | {len(rs)} | "
              f"{mmm([r['of_ceiling'] * 100 for r in rs], '{:.2f}%')} | "
              f"{mmm([r['lateness_us'][0] for r in rs], '{:.0f}')} | {mmm([r['lateness_us'][1] for r in rs], '{:.0f}')} | {mmm([r['lateness_us'][2] for r in rs], '{:.0f}')} | "
              f"{late[0]} / {late[1]} / {late[2]} of {sum(r['releases'] for r in rs)} | "
              f"{mmm([r['emulator_cores'] for r in rs], '{:.2f}')} | {mmm([r['machine_busy'] for r in rs], '{:.2f}')} | "
              f"{mmm([r['lab_cores_per_gbit'] for r in rs], '{:.3f}')} | {mmm([r['veth_cores_per_gbit'] for r in rs], '{:.3f}')} | "
              f"{us:.1f} / {ks:.1f} | {', '.join(r['load'] for r in rs)} |")
# Per pair (the runs of one repetition met the same minute's load): ratio one / two.
for rate in dict.fromkeys(r["rate"] for r in tcp):
    two = [r for r in tcp if r["rate"] == rate and r["threads"] == "2"]
    one = [r for r in tcp if r["rate"] == rate and r["threads"] == "1"]
    ratios = [o["of_ceiling"] / t["of_ceiling"] for t, o in zip(two, one) if t["of_ceiling"] > 0]
    cores = [o["lab_cores_per_gbit"] / t["lab_cores_per_gbit"] for t, o in zip(two, one) if t["lab_cores_per_gbit"] > 0]
    if ratios:
        print(f"\n{rate}bit/s, per pair, one thread / two: iperf3 {', '.join(f'{x:.3f}' for x in ratios)}; lab cores per Gbit/s {', '.join(f'{x:.3f}' for x in cores)}")
small = [r for r in rows if r["kind"] == "small"]
if small:
    print("\n| 64-byte into 100 Mbit/s (queue 1000) | threads | runs | forwarded, of line rate | drops memory | drops host | drops queue | lateness p99 / max (us) | emulator cores |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in dict.fromkeys((r["sender"], r["paced"]) for r in small):
        for threads in ["2", "1"]:
            rs = [r for r in small if (r["sender"], r["paced"]) == key and r["threads"] == threads]
            if not rs:
                continue
            name = f"{key[0]}, {'paced at 110%' if key[1] else 'as fast as it goes'}"
            print(f"| {name} | {threads} | {len(rs)} | {mmm([r['of_line_rate'] * 100 for r in rs], '{:.2f}%')} | "
                  f"{', '.join(str(r['drops_memory']) for r in rs)} | {', '.join(str(r['drops_host']) for r in rs)} | "
                  f"{', '.join(str(r['drops_queue']) for r in rs)} | "
                  f"{', '.join('%.0f/%.0f' % (r['lateness_us'][1], r['lateness_us'][2]) for r in rs)} | {mmm([r['emulator_cores'] for r in rs], '{:.2f}')} |")
PY
