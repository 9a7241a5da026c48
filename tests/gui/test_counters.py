#!/usr/bin/env python3
"""GUI end-to-end test of the Counters view (views/cupti_counters_view.h): the real app under
Xvfb, driven by `view counters` and `counters kernel|point|operator N` (the calls a click on a
row or a roofline point makes), checked against the trace JSON and the app's state dump."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testkit import DATA, SHARED, check, check_script_errors, failures, run_app  # noqa: E402

TRACE = os.path.join(DATA, "cupti_roofline_handmade.json")
# Where to keep the screenshots for a person to look at (unset: they are only checked).
KEEP = os.environ.get("SIGHTLINE_KEEP_SCREENSHOTS", "")


def run(trace, lines, name):
    return run_app(trace, lines, os.path.join(KEEP, f"counters_{name}.png") if KEEP else None, wait=3)


def expected_kernels():
    """(kernel, operator, FLOPs or None) per profiled kernel, from the JSON: i-th range ↔ i-th launch."""
    events = json.load(open(TRACE))["traceEvents"]
    ops = [e["name"] for e in sorted((e for e in events if e.get("cat") == "cpu_op"), key=lambda e: e["ts"])]
    ranges = sorted((e for e in events if e.get("cat") == "cuda_profiler_range"), key=lambda e: e["ts"])
    out = []
    for op, r in zip(ops, ranges):
        flops = sum(v * (2 if "fma" in k else 1) for k, v in r["args"].items() if k.startswith("smsp__sass"))
        out.append((r["name"], op, flops, r))
    return out


def not_blank(png, name):
    width, height, rows = png
    right = [px for row in rows[int(height * 0.6):] for px in row[width // 2:]]
    check(len(set(right)) > 8, f"{name}: the lower right of the window looks blank")


kernels = expected_kernels()
with_points = [k for k in kernels if k[2] > 0]

# 1. The view lists every kernel and operator, and one roofline point per kernel with FLOPs.
state, png = run(TRACE, ["view counters"], "handmade")
state_points = [p for p in state["view"]["counters"]["points"] if "x" in p] if state else []
if state:
    c = state["view"]["counters"]
    check(state["view"]["active"] == "counters", f"active view {state['view']['active']}")
    check([r["kernel"] for r in c["kernel_rows"]] == [k[0] for k in kernels], f"kernel rows {c['kernel_rows']}")
    check([r["operator"] for r in c["kernel_rows"]] == [k[1] for k in kernels], "kernel operators")
    check([r["flops"] for r in c["kernel_rows"]] == [k[2] for k in kernels], "kernel FLOPs")
    check(sorted(r["operator"] for r in c["operator_rows"]) == sorted({k[1] for k in kernels}), "operator rows")
    check([p["name"] for p in c["points"]] == [k[0] for k in with_points], f"points {[p['name'] for p in c['points']]}")
    for p, k in zip(c["points"], with_points):
        args = k[3]["args"]
        nbytes = args["dram__bytes_read.sum"] + args["dram__bytes_write.sum"]
        check(abs(p["intensity"] - k[2] / nbytes) < 1e-9 * k[2] / nbytes, f"{k[0]}: intensity {p['intensity']}")
        want = k[2] / (args["gpu__time_duration.sum"] * 1e-9)
        check(abs(p["flops_per_s"] - want) < 1e-9 * want, f"{k[0]}: FLOP/s {p['flops_per_s']} vs {want}")
        check("x" in p and "y" in p, f"{k[0]}: point not drawn")
    check(abs(c["peak"]["fp32_flops"] - 108 * 64 * 2 * 1.41e9) < 1, f"FP32 peak {c['peak']['fp32_flops']}")
    check(abs(c["peak"]["bytes_per_s"] - 2 * 1.215e9 * 5120 / 8) < 1, f"DRAM peak {c['peak']['bytes_per_s']}")
    drawn = [p for p in c["points"] if "x" in p]
    if len(drawn) == len(with_points):
        # Screen positions follow the values: more FLOP/s is higher, more intensity further right.
        by_int = sorted(drawn, key=lambda p: p["intensity"])
        check(all(a["x"] <= b["x"] for a, b in zip(by_int, by_int[1:])), "points not ordered by intensity on x")
        by_rate = sorted(drawn, key=lambda p: p["flops_per_s"])
        check(all(a["y"] >= b["y"] for a, b in zip(by_rate, by_rate[1:])), "points not ordered by FLOP/s on y")
    not_blank(png, "handmade")

# 2. A point, as clicked: the timeline selects that kernel's range and frames it.
for n in [0, 4]:
    state, _ = run(TRACE, [f"counters point {n}"], f"point{n}")
    if state:
        sel, k = state["selected"], with_points[n]
        check(sel is not None and sel["name"] == k[0], f"point {n}: selected {sel and sel['name']}, expected {k[0]}")
        if sel:
            check(sel["gpu"], f"point {n}: the selection is not on a GPU row")
            check(state["view_start_ns"] <= sel["start_ns"] and sel["start_ns"] + sel["dur_ns"] <= state["view_end_ns"],
                  f"point {n}: the kernel is not framed")
            check(state["view"]["counters"]["selected_kernel"] == kernels.index(k), "selected kernel row")

# 2b. A click at a point's drawn position (window pixels from the state above; the layout is the
# same at the same size) goes through the mouse's hit test to the same selection.
if state_points:
    target = state_points[2]
    state, _ = run(TRACE, ["view counters", "wait 3", f"counters click {target['x'] + 2} {target['y'] - 1}"], "click")
    if state:
        check(state["selected"] and state["selected"]["name"] == target["name"], f"click: selected {state['selected']}")

# 3. A kernel row and an operator row: the operator's kernels are highlighted, the first selected.
state, _ = run(TRACE, ["counters kernel 7"], "kernel7")
if state:
    check(state["selected"] and state["selected"]["name"] == kernels[7][0], f"kernel 7: {state['selected']}")
state, png = run(TRACE, ["counters operator 0"], "operator0")
if state:
    c = state["view"]["counters"]
    op = c["operator_rows"][0]["operator"]
    names = sorted(h["name"] for h in state["highlighted"])
    check(names == sorted(k[0] for k in kernels if k[1] == op), f"operator {op}: highlighted {names}")
    check(c["tab"] == "operators", f"tab {c['tab']}")

# 3b. File > Export figure... offers the roofline while the Counters tab is open; the script's
# export writes it (as `render --view roofline`).
with tempfile.TemporaryDirectory() as tmp:
    svg = os.path.join(tmp, "roof.svg")
    state, _ = run(TRACE, ["view counters", f"export {svg} roofline"], "export")
    check(state is not None and os.path.exists(svg) and b"<svg" in open(svg, "rb").read(400), "export roofline: no SVG written")

# 4. The corpus trace: 77 kernels and their counters, no point (no DRAM bytes), and why.
corpus = os.path.join(SHARED, "hta_cupti_profiler_a100.json.gz")
if os.path.exists(corpus):
    state, png = run(corpus, ["view counters", "counters kernel 5"], "corpus")
    if state:
        c = state["view"]["counters"]
        check(len(c["kernel_rows"]) == 77 and not c["points"], f"corpus: {len(c['kernel_rows'])} rows, {len(c['points'])} points")
        check(c["roofline_note"].startswith("77 of 77 kernels have no point"), f"corpus note: {c['roofline_note']}")
        check("no clockRate" in c["peak"]["compute_note"], f"corpus peak: {c['peak']}")
        width, height, rows = png
        check(len({px for row in rows[int(height * 0.7):] for px in row[width // 2:]}) > 8, "corpus: roofline pane blank")
        check(state["selected"] and state["selected"]["name"] == c["kernel_rows"][5]["kernel"], "corpus: kernel 5 not selected")
else:
    print("skipped corpus trace: ../shared is absent")

# 5. A trace without counters: a note, not an empty view.
state, png = run(os.path.join(DATA, "hta_cp_simple_add_input.json.gz"), ["view counters"], "none")
if state:
    c = state["view"]["counters"]
    check(c["kernels"] == 0 and "no cuda_profiler_range events" in c["note"], f"no counters: {c['note']}")
    width, height, rows = png
    # The note's lines, just under the panel's tab bar (at 1600x1000: 64-72% of the height).
    dark = sum(1 for row in rows[int(height * 0.64):int(height * 0.72)] for px in row[: width // 2] if sum(px) < 300)
    check(dark > 200, f"no counters: the note is not drawn ({dark} dark pixels)")

# Bad commands are clear errors.
check_script_errors(TRACE, [(bad, 1) for bad in ["counters point 99", "counters nonsense 1", "view counters\nwait 3\ncounters click 3 3"]])

print("FAILED" if failures else "OK", len(failures), "failures")
sys.exit(1 if failures else 0)
