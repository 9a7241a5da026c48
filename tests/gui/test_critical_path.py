#!/usr/bin/env python3
"""GUI end-to-end test of the critical path (issue 13): the real app under Xvfb, driven by the
`critical_path` script command. The overlay must outline exactly the path's slices, checked
against `sightline report --only critical_path --format json` (its critical_path_edges table), and
the screenshot must show the outlines; the Critical path view's numbers equal the report's; a
trace without ProfilerStep gets the whole trace's path and a note. SIGHTLINE_KEEP_SHOTS=DIR keeps
the screenshots."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testkit import DATA, SIGHTLINE, SAMPLE, check, check_script_errors, failures, run_app  # noqa: E402

OUTLINE = (200, 0, 90)  # core/present/critical_path_palette.cpp: critical_path_outline_rgb


KEEP = os.environ.get("SIGHTLINE_KEEP_SHOTS", "")


def run(trace, lines, shot_name=None):
    if KEEP and shot_name:
        os.makedirs(KEEP, exist_ok=True)
    return run_app(trace, lines, keep_as=os.path.join(KEEP, shot_name) if KEEP and shot_name else None)


def report(trace, *extra):
    out = subprocess.run([SIGHTLINE, "report", trace, "--only", "critical_path", "--format", "json", *extra],
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def outline_pixels(png):
    _, _, rows = png
    return sum(1 for row in rows for px in row if px == OUTLINE)


def path_slices_of(rep):
    """(name, start_ns) of every event on the report's path: both nodes of every edge."""
    out = set()
    for e in rep["critical_path_edges"]:
        out.add((e["from"], round(e["from_start_us"] * 1000)))
        out.add((e["to"], round(e["to_start_us"] * 1000)))
    return out


# 1. The sample trace (one ProfilerStep): overlay on, framed on the iteration.
rep = report(SAMPLE)
cp = rep["critical_path"][0]
zoom = f"zoom {cp['start_us']}us {cp['end_us']}us"
state, png = run(SAMPLE, ["critical_path on", zoom], "critical_path_on.png")
if state:
    shown = {(p["name"], p["start_ns"]) for p in state["path_slices"]}
    expected = path_slices_of(rep)
    check(len(expected) > 10, f"sample: only {len(expected)} slices on the report's path")
    check(shown == expected, f"sample: overlay slices differ from the report's path: {len(shown - expected)} extra, "
                             f"{len(expected - shown)} missing")
    check(state["path_outlined"] > 0 and state["path_links_drawn"] > 0,
          f"sample: nothing drawn: {state['path_outlined']} outlines, {state['path_links_drawn']} links")
    view = state["view"]["critical_path"]
    check(view["overlay"] and view["valid"], f"sample: view state {view}")
    check(abs(view["length_ns"] - cp["length_us"] * 1000) <= 1, f"sample: length {view['length_ns']} vs {cp['length_us']} µs")
    summary = {s["bound_by"]: (s["sum_us"], s["count"]) for s in rep["critical_path_summary"]}
    mine = {s["bound_by"]: (s["sum_ns"] / 1000, s["count"]) for s in view["summary"]}
    check(mine.keys() == summary.keys() and all(abs(mine[k][0] - summary[k][0]) < 0.002 and mine[k][1] == summary[k][1] for k in mine),
          f"sample: summary {mine} vs report {summary}")
    on = outline_pixels(png)
    check(on > 200, f"sample: screenshot shows {on} outline pixels")
    # Contributors: longest first, each inside the path's span, together no more than the path.
    times = [c["time_ns"] for c in view["contributors"]]
    check(times == sorted(times, reverse=True) and sum(times) <= view["length_ns"], f"sample: contributor times {times[:5]}")
    check(all(c["start_ns"] <= cp["end_us"] * 1000 + 1 for c in view["contributors"]), "sample: a contributor after the path")

# 2. Off again: no overlay, no outline pixels.
state, png = run(SAMPLE, ["critical_path on", "critical_path off", zoom])
if state:
    check(state["path_slices"] == [] and state["path_outlined"] == 0, "sample: overlay still on after off")
    check(outline_pixels(png) == 0, f"sample: {outline_pixels(png)} outline pixels with the overlay off")

# 3. The view: a click on the longest contributor selects and frames it.
state, png = run(SAMPLE, ["critical_path on", "critical_path contributor 0"], "critical_path_view.png")
if state:
    view = state["view"]["critical_path"]
    top = view["contributors"][0] if view["contributors"] else None
    check(state["view"]["active"] == "critical-path", f"sample: active tab {state['view']['active']}")
    check(top is not None and state["selected"] is not None and state["selected"]["name"] == top["name"]
          and state["selected"]["start_ns"] == top["start_ns"], f"sample: selected {state['selected']} vs {top}")
    if state["selected"]:
        check(state["view_start_ns"] <= state["selected"]["start_ns"] <= state["view_end_ns"], "sample: contributor not in view")
    check(view["opened"] == 0, "sample: contributor 0 not marked opened")
    ops = view["ops"]
    check(len(ops) > 0 and all(ops[i]["time_ns"] >= ops[i + 1]["time_ns"] for i in range(len(ops) - 1)), "sample: ops not by time")

# 3b. Export… offers the figure: the Critical path tab's figure through the `export` command.
with tempfile.TemporaryDirectory() as out:
    fig = os.path.join(out, "cp.svg")
    state, _ = run(SAMPLE, ["view critical-path", f"export {fig} critical-path"])
    if state:
        last = state.get("last_export") or {}
        check(last.get("ok") and last.get("what") == "critical-path" and os.path.getsize(fig) > 1000,
              f"sample: export critical-path: {last}")
        check(abs(last.get("start_ns", 0) - cp["start_us"] * 1000) <= 1 and abs(last.get("end_ns", 0) - cp["end_us"] * 1000) <= 1,
              f"sample: exported range {last.get('start_ns')}..{last.get('end_ns')} is not the path's")

# 4. Picking an instance: a hand-made trace with two ProfilerSteps, each a CPU op launching a
# kernel; instance 1 equals `report --instance 1` and differs from instance 0.
def X(cat, name, pid, tid, ts, dur, args=None):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args or {}}


def step_events(n, t0, op_us, kernel_us):
    corr = 100 + n
    return [X("user_annotation", f"ProfilerStep#{n}", 1, 1, t0, 400), X("cpu_op", f"op{n}", 1, 1, t0 + 10, op_us),
            X("cuda_runtime", "cudaLaunchKernel", 1, 1, t0 + 20, 5, {"correlation": corr}),
            X("kernel", f"k{n}", 0, 7, t0 + 30, kernel_us, {"device": 0, "stream": 7, "correlation": corr})]


with tempfile.TemporaryDirectory() as tmp:
    two = os.path.join(tmp, "two_steps.json")
    json.dump({"traceEvents": step_events(0, 0, 50, 20) + step_events(1, 400, 40, 200)}, open(two, "w"))
    rep0, rep1 = report(two), report(two, "--instance", "1")
    state, _ = run(two, ["critical_path instance 1", "critical_path on"])
    if state and rep1.get("critical_path"):
        view = state["view"]["critical_path"]
        check(view["instance"] == 1 and view["instances"] == 2, f"two steps: instance {view['instance']} of {view['instances']}")
        check(abs(view["length_ns"] - rep1["critical_path"][0]["length_us"] * 1000) <= 1, "two steps: instance 1 length differs")
        check(view["length_ns"] != rep0["critical_path"][0]["length_us"] * 1000, "two steps: instance 1 has instance 0's length")
        shown = {(p["name"], p["start_ns"]) for p in state["path_slices"]}
        check(shown == path_slices_of(rep1), f"two steps: overlay slices {shown} vs {path_slices_of(rep1)}")
        check(("k1", 430000) in shown, "two steps: the long kernel k1 is not on instance 1's path")
    else:
        check(False, f"two steps: no critical path for instance 1: {rep1.get('notes')}")

# 5. No ProfilerStep: the whole trace is the one instance, with a note saying so (§10).
plain = os.path.join(DATA, "hta_cp_simple_add_input.json.gz")
state, png = run(plain, ["view critical-path", "critical_path on"], "critical_path_whole.png")
if state:
    view = state["view"]["critical_path"]
    check(view["valid"] and view["instances"] == 0 and "whole trace" in view["note"], f"plain: view state {view}")
    check(state["path_slices"] != [], "plain: the whole trace's path has no slices on the overlay")

# Bad arguments are clear errors.
check_script_errors(SAMPLE, [(bad, 1) for bad in ["critical_path instance 99", "critical_path sideways", "critical_path contributor 999999"]])

print("FAILED" if failures else "OK", len(failures), "failures")
sys.exit(1 if failures else 0)
