#!/usr/bin/env python3
"""What each end-to-end test asks of the machine: its wall and its CPU, one test at a time.

Runs the end-to-end test binary (crates/wirespeed/tests/main.rs) with one test thread inside a
cpuacct cgroup of its own (cgroup v1 at /sys/fs/cgroup/cpuacct, or v2's cpu.stat at
/sys/fs/cgroup/unified or /sys/fs/cgroup; needs root) and reads the cgroup's CPU at each test's
start and end from libtest's JSON events. A cgroup counts every process the test starts, also
the ones that leave their parent (a lab's emulator, an agent daemon), which getrusage's
RUSAGE_CHILDREN and /usr/bin/time miss. Containers that podman puts in cgroups of their own are
not counted (container_fleet's agents).

    cd crates/wirespeed && python3 ../../bench/e2e-test-cpu.py ../../target/release/deps/main-HASH \\
        [libtest filters and flags ...] > /tmp/cpu.tsv

Prints one line per test: name, wall s, CPU s (user+sys), CPU as a share of one core over its
wall, and the lane the test declares (crates/wirespeed/tests/lane.rs) when the binary's lane
log names it. The light/one-core line is 15% of one core; see docs of the lanes.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_cgroup():
    name = f"ws-e2e-cpu-{os.getpid()}"
    for root, reader in (
        ("/sys/fs/cgroup/cpuacct", read_v1),
        ("/sys/fs/cgroup/unified", read_v2),
        ("/sys/fs/cgroup", read_v2),
    ):
        base = Path(root)
        if not base.is_dir():
            continue
        path = base / name
        try:
            path.mkdir()
        except OSError:
            continue
        try:
            (path / "cgroup.procs").write_text(f"{os.getpid()}\n")
            reader(path)
        except OSError:
            path.rmdir()
            continue
        return base, path, reader
    sys.exit("e2e-test-cpu: cannot make a cgroup to count CPU in (run as root on a host with cgroups)")


def read_v1(path):
    return int((path / "cpuacct.usage").read_text()) / 1e9


def read_v2(path):
    for line in (path / "cpu.stat").read_text().splitlines():
        key, value = line.split()
        if key == "usage_usec":
            return int(value) / 1e6
    raise OSError("no usage_usec")


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    base, path, reader = make_cgroup()
    lanes = Path(tempfile.mkstemp(prefix="ws-e2e-cpu-lanes-", suffix=".tsv")[1])
    env = dict(os.environ, RUSTC_BOOTSTRAP="1", WIRESPEED_LANE_LOG=str(lanes))
    cmd = [argv[0], *argv[1:], "--test-threads", "1", "-Z", "unstable-options", "--format", "json"]
    started, rows = {}, []
    total_start = time.monotonic()
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env, text=True) as proc:
        for line in proc.stdout:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                continue
            if ev.get("type") != "test":
                continue
            name, event = ev.get("name"), ev.get("event")
            if event == "started":
                started[name] = (time.monotonic(), reader(path))
            elif event in ("ok", "failed") and name in started:
                t0, c0 = started.pop(name)
                wall, cpu = time.monotonic() - t0, reader(path) - c0
                rows.append((name, wall, cpu, event))
        rc = proc.wait()
    total = time.monotonic() - total_start
    # Move out before removing: a cgroup with a process in it cannot be removed.
    (base / "cgroup.procs").write_text(f"{os.getpid()}\n")
    try:
        path.rmdir()
    except OSError as e:
        print(f"e2e-test-cpu: cgroup {path} left: {e}", file=sys.stderr)
    kinds = {}
    for line in lanes.read_text().splitlines() if lanes.exists() else []:
        parts = line.split("\t")
        if len(parts) >= 2:
            kinds[parts[0]] = parts[1]
    lanes.unlink(missing_ok=True)
    print("test\twall_s\tcpu_s\tcpu_share\tlane\tresult")
    for name, wall, cpu, event in sorted(rows, key=lambda r: -r[1]):
        share = cpu / wall if wall > 0 else 0.0
        print(f"{name}\t{wall:.2f}\t{cpu:.2f}\t{share:.3f}\t{kinds.get(name, '-')}\t{event}")
    print(f"# {len(rows)} tests, {total:.1f} s wall, exit {rc}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
