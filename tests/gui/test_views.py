#!/usr/bin/env python3
"""GUI end-to-end tests of the linked analysis views (views/README.md): the real app under Xvfb,
driven by `view`, `brush`, `pattern`, `idle` and `insight` script commands, checked against
`sightline report --format json` and the app's own state dump."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testkit import DATA, SAMPLE, SHARED, SIGHTLINE, check, check_script_errors, failures, run_app  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))




def run(trace, lines, size="1600x1000", shot=True):
    return run_app(trace, lines, size=size)


def report(trace):
    out = subprocess.run([SIGHTLINE, "report", trace, "--format", "json"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


traces = [os.path.join(DATA, "hta_cp_simple_add_input.json.gz"), SAMPLE]
corpus = os.path.join(SHARED, "hta_nccl_data_a100.json.gz")
if os.path.exists(corpus):
    traces.append(corpus)
else:
    print("skipped corpus trace: ../shared is absent")

for trace in traces:
    name = os.path.basename(trace)
    rep = report(trace)

    # 1. Every view opens, and its screenshot is not blank.
    for view in ["timeline", "latency", "patterns", "idle", "breakdown", "insights"]:
        state, png = run(trace, [f"view {view}"])
        if not state:
            continue
        check(state["view"]["active"] == view, f"{name}: view {view} shows {state['view']['active']}")
        width, height, rows = png
        lower = [px for row in rows[int(height * 0.6):] for px in row]
        white = sum(1 for px in lower if px == (255, 255, 255))
        check(white < len(lower) * 0.97, f"{name}: view {view} looks blank")

    # 2. Brushing GPU-duration bins highlights exactly the kernels the analysis puts there.
    hist = next(h for h in rep["launch_histograms"] if h["quantity"] == "gpu_duration")
    edges, counts = hist["edges_us"], hist["counts"]
    n = len(counts)
    first, last = n // 4, (3 * n) // 4
    while first < last and counts[first] == 0:
        first += 1
    lo, hi = (edges[first] + edges[first + 1]) / 2, (edges[last] + edges[last + 1]) / 2
    state, _ = run(trace, [f"brush gpu_duration {lo}us {hi}us"], shot=False)
    if state:
        lat = state["view"]["latency"]
        expected = int(sum(counts[first:last + 1]))
        check(lat["brushed_bins"] == [first, last], f"{name}: brushed bins {lat['brushed_bins']} != {[first, last]}")
        check(lat["counts"] == counts, f"{name}: view's bins differ from the report's")
        check(state["highlights"] == expected, f"{name}: {state['highlights']} highlighted, analysis has {expected} in bins")
        check(len(state["highlighted"]) == expected, f"{name}: highlighted list size")
        # Independently: each highlighted slice's own duration lies inside the brushed range.
        lo_ns, hi_ns = edges[first] * 1000, edges[last + 1] * 1000
        outside = [h for h in state["highlighted"] if not (lo_ns - 1 <= h["dur_ns"] <= hi_ns + 1)]
        check(not outside, f"{name}: {len(outside)} highlighted kernels outside [{lo_ns}, {hi_ns}] ns")

    # 3. Selecting a fusion candidate highlights all its occurrences; next moves to the second.
    fusion = rep["fusion_candidates"]
    if fusion:
        state, _ = run(trace, ["pattern fusion 0", "pattern next"], shot=False)
        if state:
            pat = state["view"]["patterns"]
            count = fusion[0]["count"]
            check(pat["occurrences"] == count, f"{name}: {pat['occurrences']} occurrences, report says {count}")
            check(pat["highlighted_kernels"] == state["highlights"], f"{name}: highlighted kernels vs timeline")
            check(state["highlights"] <= count * len(fusion[0]["chain"]), f"{name}: too many highlighted")
            names = {h["name"] for h in state["highlighted"]}
            check(names == set(fusion[0]["chain"]), f"{name}: highlighted names are not the chain's")
            check(pat["occurrence"] == (1 if count > 1 else 0), f"{name}: next did not step: {pat['occurrence']}")
            a, b = pat["occurrence_span_ns"]
            check(state["view_start_ns"] <= a and state["view_end_ns"] >= b, f"{name}: occurrence not in view")

    # 4. Clicking an insight moves the timeline there.
    before, _ = run(trace, ["view insights"], shot=False)
    after, _ = run(trace, ["insight 0"], shot=False)
    if before and after:
        findings = after["view"]["insights"]["findings"]
        check(len(findings) > 0, f"{name}: no insights")
        if findings:
            f = findings[0]
            check(after["view"]["insights"]["opened"] == 0, f"{name}: insight not opened")
            check(after["view_start_ns"] <= f["t0_ns"] and after["view_end_ns"] >= f["t1_ns"], f"{name}: insight range not in view")
            check((after["view_start_ns"], after["view_end_ns"]) != (before["view_start_ns"], before["view_end_ns"]),
                  f"{name}: timeline did not move")

    # 5. Clicking an idle cause shows its longest gap first.
    cause = max(rep["idle_causes"], key=lambda r: r["idle_us"]) if rep["idle_causes"] else None
    if cause:
        state, _ = run(trace, [f"idle {cause['stream']} {cause['cause']}"], shot=False)
        if state:
            idle = state["view"]["idle"]
            check(idle["picked"] and idle["gaps"] == cause["count"], f"{name}: idle gaps {idle} vs {cause}")
            check(idle["gap"] == 0, f"{name}: not the first gap")
            check(state["view_start_ns"] <= idle["gap_start_ns"] and state["view_end_ns"] >= idle["gap_end_ns"],
                  f"{name}: gap not in view")

# Bad commands are clear errors, not crashes.
check_script_errors(SAMPLE, [("view nonsense", 2), ("pattern fusion 999999", 1), ("brush latency x y", 1), ("insight 999", 1)])

print("FAILED" if failures else "OK", len(failures), "failures")
sys.exit(1 if failures else 0)
