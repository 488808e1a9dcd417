"""What bench/mesh.sh and bench/mesh-lab.sh both read from a `wirespeed mesh --json` document:
overlaps between tests sharing an agent (from the recorded times), the TCP rates, the longest
test, elapsed against predicted, and the share of the time spent in tests."""


def schedule_figures(doc, n):
    r = doc["result"]
    tests = r["tests"]
    overlaps = 0
    for i, a in enumerate(tests):
        for b in tests[i + 1:]:
            if {a["source"], a["destination"]} & {b["source"], b["destination"]}:
                if not (a["end_seconds"] <= b["start_seconds"] or b["end_seconds"] <= a["start_seconds"]):
                    overlaps += 1
    rates = sorted(t["result"]["tcp_bits_per_second"] for t in tests
                   if t["result"] and t["result"]["tcp_bits_per_second"])
    longest = max(t["end_seconds"] - t["start_seconds"] for t in tests)
    ratio = r["elapsed_seconds"] / r["predicted_seconds"]
    # The schedule's own cost: each slot lasts its longest test; what the slots' longest tests
    # add up to against the elapsed time is the share of the time spent in tests.
    slot_max = {}
    for t in tests:
        slot_max[t["slot"]] = max(slot_max.get(t["slot"], 0.0), t["end_seconds"] - t["start_seconds"])
    in_tests = sum(slot_max.values()) / r["elapsed_seconds"]
    ok = len(tests) == n * (n - 1) and overlaps == 0 and ratio <= 1.10
    return dict(r=r, tests=tests, overlaps=overlaps, rates=rates, longest=longest, ratio=ratio,
                in_tests=in_tests, ok=ok)
