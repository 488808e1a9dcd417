#!/usr/bin/env python3
"""Side-by-side table of lab_rates runs (LAB_RATES_SUMMARY lines) by mode: min / median / max
per mode, and each mode against the first per pair of runs (bench/lab-threads.sh,
bench/lab-rates.sh with THREADS)."""
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for r in rows:
    r["mode"] = r.get("mode") or r["threads"]
modes = list(dict.fromkeys(r["mode"] for r in rows))
def mmm(xs, fmt):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return "-"
    return " / ".join(fmt.format(v) for v in (xs[0], statistics.median(xs), xs[-1]))
tcp = [r for r in rows if r["kind"] == "tcp"]
print("\n| rate | mode (threads[@CPUs]) | runs | iperf3, of the ceiling (min / median / max) | lateness p50 (us) | p99 (us) | max (us) | late > 50 us: write / behind / wait (sum) | emulator cores | machine busy (cores) | lab cores per Gbit/s | plain veth cores per Gbit/s | data direction per write, user / kernel (us, medians) | load (1 min) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for rate in dict.fromkeys(r["rate"] for r in tcp):
    for threads in modes:
        rs = [r for r in tcp if r["rate"] == rate and r["mode"] == threads]
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
# Per pair (the runs of one repetition met the same minute's load): each mode against the first.
for rate in dict.fromkeys(r["rate"] for r in tcp):
    base = [r for r in tcp if r["rate"] == rate and r["mode"] == modes[0]]
    for mode in modes[1:]:
        other = [r for r in tcp if r["rate"] == rate and r["mode"] == mode]
        ratios = [o["of_ceiling"] / t["of_ceiling"] for t, o in zip(base, other) if t["of_ceiling"] > 0]
        cores = [o["lab_cores_per_gbit"] / t["lab_cores_per_gbit"] for t, o in zip(base, other) if t["lab_cores_per_gbit"] > 0]
        if ratios:
            print(f"\n{rate}bit/s, per pair, mode {mode} / mode {modes[0]}: iperf3 {', '.join(f'{x:.3f}' for x in ratios)}; lab cores per Gbit/s {', '.join(f'{x:.3f}' for x in cores)}")
small = [r for r in rows if r["kind"] == "small"]
if small:
    print("\n| 64-byte into 100 Mbit/s (queue 1000) | mode | runs | forwarded, of line rate | drops memory | drops host | drops queue | lateness p99 / max (us) | emulator cores |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in dict.fromkeys((r["sender"], r["paced"]) for r in small):
        for threads in modes:
            rs = [r for r in small if (r["sender"], r["paced"]) == key and r["mode"] == threads]
            if not rs:
                continue
            name = f"{key[0]}, {'paced at 110%' if key[1] else 'as fast as it goes'}"
            print(f"| {name} | {threads} | {len(rs)} | {mmm([r['of_line_rate'] * 100 for r in rs], '{:.2f}%')} | "
                  f"{', '.join(str(r['drops_memory']) for r in rs)} | {', '.join(str(r['drops_host']) for r in rs)} | "
                  f"{', '.join(str(r['drops_queue']) for r in rs)} | "
                  f"{', '.join('%.0f/%.0f' % (r['lateness_us'][1], r['lateness_us'][2]) for r in rs)} | {mmm([r['emulator_cores'] for r in rs], '{:.2f}')} |")
