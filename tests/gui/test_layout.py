#!/usr/bin/env python3
"""GUI end-to-end tests of what a new user meets first (issue 16), through the app's `state` dump:
the lower panel collapsed to its tab bar until something is selected, the GPU stream row in the
first quarter of the window even on with_stack traces (deep Python stacks start folded), the
legend beside the rows rather than over them, the initial view framing the data (not the
trailing metadata), the help overlay and a window title naming the trace.
SIGHTLINE_SHOTS=DIR keeps the screenshots (the README's come from here)."""
import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testkit import SAMPLE, SHARED, SIGHTLINE, check, failures, read_png  # noqa: E402

SHOTS = os.environ.get("SIGHTLINE_SHOTS", "")


def run(trace, lines, shot_name=None, size="1600x1000"):
    """Runs the script `lines` on `trace`, then dumps the state (and a screenshot): (state, png)."""
    with tempfile.TemporaryDirectory() as tmp:
        script, state = os.path.join(tmp, "s.txt"), os.path.join(tmp, "s.json")
        png = os.path.join(SHOTS or tmp, shot_name or "s.png")
        with open(script, "w") as f:
            f.write("\n".join(lines + ["wait 2", f"screenshot {png}", f"state {state}", "quit"]) + "\n")
        p = subprocess.run([SIGHTLINE, trace, "--script", script, "--size", size], capture_output=True, text=True, timeout=180)
        if p.returncode != 0:
            check(False, f"{os.path.basename(trace)} {lines}: exit {p.returncode}: {p.stderr.strip()}")
            return None, None
        return json.load(open(state)), read_png(png)


def data_range_ns(trace):
    """First start and last end of the trace's complete slices (ph X), relative to its earliest
    timestamp, from the JSON alone."""
    events = json.load(gzip.open(trace))["traceEvents"]
    origin = min(e["ts"] for e in events if "ts" in e and e.get("ph") != "M")
    slices = [e for e in events if e.get("ph") == "X"]
    first = min(e["ts"] for e in slices) - origin
    last = max(e["ts"] + e.get("dur", 0) for e in slices) - origin
    return first * 1000, last * 1000


def overlaps(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


traces = [(SAMPLE, "sample")]
for name in ("tl_h100_bert_small", "tl_h100_qwen15_05b"):
    path = os.path.join(SHARED, name + ".json.gz")
    if os.path.exists(path):
        traces.append((path, name))
    else:
        print(f"skipped {name}: ../shared/corpus is absent")

for trace, name in traces:
    state, shot = run(trace, ["wait 3"], f"first5_{name}.png")
    if not state:
        continue
    lay = state["layout"]
    # 1. Before any selection the panel is only its tab bar.
    check(lay["panel_collapsed"] is True, f"{name}: panel not collapsed before a selection")
    # 2. The GPU stream comes first: its row in the top quarter of the window.
    ys = [r["y"] for r in lay["gpu_rows"] if r["y"] is not None]
    check(ys and min(ys) <= lay["window_height"] / 4, f"{name}: GPU stream row at {ys} of {lay['window_height']} px")
    # 3. Deep Python stacks start folded (these traces are recorded with_stack).
    check(lay["folded_tracks"] >= 1, f"{name}: no deep stack folded")
    # 4. The legend sits in its own strip: it overlaps no slice (slices are drawn in rows_rect only).
    legend, rows = lay["legend_rect"], lay["rows_rect"]
    check(legend[2] > legend[0] and legend[3] > legend[1], f"{name}: no legend drawn {legend}")
    check(not overlaps(legend, rows), f"{name}: legend {legend} overlaps the slice area {rows}")
    # 5. The initial view frames the data: it ends within 5 % of the last slice's end.
    first, last = data_range_ns(trace)
    span = last - first
    check(abs(state["view_end_ns"] - last) <= 0.05 * span,
          f"{name}: view ends at {state['view_end_ns']:.0f} ns, last slice at {last:.0f} ns")
    check(abs(state["view_start_ns"] - first) <= 0.05 * span, f"{name}: view starts at {state['view_start_ns']:.0f} ns")
    check(abs(lay["data_end_ns"] - last) <= 1000, f"{name}: data range ends at {lay['data_end_ns']}, JSON says {last:.0f}")
    # 6. The title names the trace; the screenshot has the panel's tab bar at the bottom, not 40 %.
    check(os.path.basename(trace) in state["window_title"], f"{name}: title {state['window_title']!r}")

# A selection opens the panel again; the help overlay opens by script (as by `?`).
state, _ = run(SAMPLE, ["select ProfilerStep#6", "help on"], "first5_help.png")
if state:
    check(state["selected"] is not None, "select did not select")
    check(state["layout"]["panel_collapsed"] is False, "panel still collapsed after a selection")
    check(state["help_open"] is True, "help overlay not open")
state, _ = run(SAMPLE, ["view insights"], "first5_insights.png")
if state:
    check(state["layout"]["panel_collapsed"] is False, "panel collapsed on the Insights tab")

print("FAILED" if failures else "OK", len(failures), "failures")
sys.exit(1 if failures else 0)
