#!/usr/bin/env python3
"""Per-test times of the end-to-end test binary, run by run, as a Markdown table.

Each RUN is libtest's JSON report of one run of the binary (crates/wirespeed/tests/main.rs),
taken with

    cd crates/wirespeed && WIRESPEED_LANE_LOG=/tmp/lanes-1.tsv RUSTC_BOOTSTRAP=1 \\
        ../../target/release/deps/main-HASH -Z unstable-options --report-time --format json \\
        > /tmp/run-1.json

(RUSTC_BOOTSTRAP only unlocks libtest's report flags; the tests are the same). A lane log
(`RUN.json` beside `RUN.lanes.tsv`, or --lanes FILE for one run) is the lab lane's own record
(crates/wirespeed/tests/lab.rs, `LaneHold`): one line per hold, test, kind, asked (Unix s),
wait s, hold s. With it the table also lists the longest waits for the lane and the longest
holds of it alone.

    bench/e2e-test-times.py [--top N] RUN.json [RUN.json ...]
"""

import json
import statistics
import sys
from pathlib import Path


def read_run(path):
    tests, suite, failed = {}, None, []
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        if ev.get("type") == "test" and ev.get("event") in ("ok", "failed"):
            tests[ev["name"]] = float(ev.get("exec_time", 0.0))
            if ev["event"] == "failed":
                failed.append(ev["name"])
        elif ev.get("type") == "suite" and ev.get("event") in ("ok", "failed"):
            suite = ev
    return tests, suite, failed


def read_lanes(path):
    rows = []
    if not path or not Path(path).exists():
        return rows
    for line in Path(path).read_text().splitlines():
        parts = line.split("\t")
        if len(parts) != 5:
            continue
        test, kind, asked, wait, hold = parts
        rows.append((test, kind, float(asked), float(wait), float(hold)))
    return rows


def main(argv):
    top = 20
    lanes_arg = None
    runs = []
    i = 0
    while i < len(argv):
        if argv[i] == "--top":
            top = int(argv[i + 1])
            i += 2
        elif argv[i] == "--lanes":
            lanes_arg = argv[i + 1]
            i += 2
        else:
            runs.append(argv[i])
            i += 1
    if not runs:
        print(__doc__, file=sys.stderr)
        return 2
    data = [read_run(r) for r in runs]
    names = {}
    for tests, _, _ in data:
        for name, t in tests.items():
            names.setdefault(name, []).append(t)
    order = sorted(names, key=lambda n: -statistics.median(names[n]))[:top]
    head = "| test | " + " | ".join(f"run {k + 1}" for k in range(len(runs)))
    print(head + " | median |")
    print("|---|" + "---:|" * (len(runs) + 1))
    for n in order:
        cells = [f"{d[0][n]:.1f}" if n in d[0] else "-" for d in data]
        print(f"| {n} | " + " | ".join(cells) + f" | {statistics.median(names[n]):.1f} |")
    walls = [f"{d[1]['exec_time']:.1f}" if d[1] else "-" for d in data]
    sums = [f"{sum(d[0].values()):.1f}" for d in data]
    counts = [f"{len(d[0]) - len(d[2])}/{len(d[2])}" for d in data]
    print("| **binary wall** | " + " | ".join(walls) + " | |")
    print("| sum of test times | " + " | ".join(sums) + " | |")
    print("| passed/failed | " + " | ".join(counts) + " | |")
    for k, d in enumerate(data):
        for f in d[2]:
            print(f"\nrun {k + 1} failed: {f}")

    for k, run in enumerate(runs):
        lanes = lanes_arg if (lanes_arg and len(runs) == 1) else str(Path(run).with_suffix(".lanes.tsv"))
        rows = read_lanes(lanes)
        if not rows:
            continue
        print(f"\nRun {k + 1}'s lab lane ({len(rows)} holds; waits and holds in s):\n")
        print("| test | kind | wait | hold |\n|---|---|---:|---:|")
        for test, kind, _, wait, hold in sorted(rows, key=lambda r: -r[3])[:top]:
            print(f"| {test} | {kind} | {wait:.1f} | {hold:.1f} |")
        alone = sum(r[4] for r in rows if r[1] == "alone")
        waits = sum(r[3] for r in rows)
        print(f"| **all holds alone, together** | alone | | {alone:.1f} |")
        print(f"| **all waits, together** | | {waits:.1f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
