#!/usr/bin/env python3
"""GUI end-to-end tests: the real app in a real window (Xvfb, Mesa llvmpipe), driven by the
automation script of shared/specs/cli.md, checked through its screenshot and state dump."""
import json
import os
import subprocess
import sys
import tempfile

from testkit import DATA, SAMPLE, SHARED, SIGHTLINE, check, failures, read_png  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))





def run(trace, script_lines, size="1280x800"):
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "script.txt")
        shot, state = os.path.join(tmp, "shot.png"), os.path.join(tmp, "state.json")
        with open(script, "w") as f:
            f.write("\n".join(script_lines + ["wait 2", f"screenshot {shot}", f"state {state}", "quit"]) + "\n")
        p = subprocess.run([SIGHTLINE, trace, "--script", script, "--size", size], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            return p.returncode, p.stderr, None, None
        return 0, p.stderr, json.load(open(state)), read_png(shot)


def count_color(rows, rgb, tolerance=12):
    return sum(1 for row in rows for px in row if all(abs(px[i] - rgb[i]) <= tolerance for i in range(3)))


# 1. The sample opens; selecting a kernel shows its launch; the screenshot has the window's size.
kernel = ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
          "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)")
rc, err, state, png = run(SAMPLE, [f"select {kernel} 3"])
check(rc == 0, f"sample run failed: {err}")
if rc == 0:
    width, height, rows = png
    check((width, height) == (1280, 800), f"screenshot size {width}x{height}")
    check(state["selected"]["gpu"] and state["selected"]["launch"] == "cudaLaunchKernel",
          f"selected kernel's launch: {state['selected']}")
    check(state["slices_drawn"] > 10, f"slices drawn: {state['slices_drawn']}")
    # The selection outline (black) and the launch arrow (vermillion #D55E00) are on screen.
    check(count_color(rows, (213, 94, 0), 30) > 50, "launch arrow colour not found")
    background = count_color(rows, (255, 255, 255), 0)
    check(background < width * height * 0.9, "screenshot is blank")

# 2. The idle overlay paints the expected gaps in a window: compare with the analysis.
# Selecting scrolls the GPU stream into view; the zoom then shows the whole run.
rc, err, state, png = run(SAMPLE, [f"select {kernel} 3", "zoom 0 10ms"])
check(rc == 0, f"zoom run failed: {err}")
if rc == 0:
    check(state["gaps_drawn"] > 0, "no idle gaps painted on the whole sample")
    check(abs(state["view_end_ns"] - 1e7) < 1, f"zoom end {state['view_end_ns']}")

# 2b. In a window that holds exactly ten gaps, all wide enough to see, exactly ten are painted.
import gzip
events = json.load(gzip.open(SAMPLE))["traceEvents"]
origin = min(float(e["ts"]) for e in events if "ts" in e and e.get("ph") != "M")
acts = sorted((float(e["ts"]) - origin, float(e["ts"]) - origin + float(e.get("dur", 0))) for e in events
              if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
gaps, end = [], acts[0][1]
for i in range(1, len(acts)):
    if acts[i][0] > end:
        gaps.append((end, acts[i][0], i))
    end = max(end, acts[i][1])
for k in range(len(gaps) - 10):
    run10 = gaps[k:k + 10]
    a_kernel, b_kernel = acts[run10[0][2] - 1], acts[run10[-1][2]]
    lo, hi = (a_kernel[0] + a_kernel[1]) / 2, (b_kernel[0] + b_kernel[1]) / 2
    if min(g[1] - g[0] for g in run10) > (hi - lo) / 800 * 4 and all(g[0] > lo and g[1] < hi for g in run10):
        break
rc, err, state, png = run(SAMPLE, [f"select {kernel} 3", f"zoom {lo:.3f} {hi:.3f}"])
check(rc == 0 and state["gaps_drawn"] == 10, f"gaps painted in a ten-gap window: {state and state['gaps_drawn']}")

# 3. Find highlights every match and selects the first.
rc, err, state, png = run(SAMPLE, ["find cudaLaunchKernel"])
check(rc == 0, f"find run failed: {err}")
if rc == 0:
    expected = sum(1 for e in events if e.get("ph") == "X" and "cudalaunchkernel" in e.get("name", "").lower())
    check(state["highlights"] == expected, f"cudaLaunchKernel matches: {state['highlights']}, expected {expected}")
    check(state["selected"]["name"] == "cudaLaunchKernel", "find did not select the first match")
    check(state["selected"]["activities"] == 1, "a launch should link to its kernel")

# 4. A broken file exits non-zero with the loader's message; nothing crashes. (A file cut after
# some complete events opens with a banner instead: test_truncated.py.)
rc, err, state, png = run(os.path.join(HERE, "..", "golden", "inputs", "cut_before_events.json"), [])
check(rc == 1 and "unexpected end of file" in err, f"truncated trace: rc={rc} {err}")

# 5. A large corpus trace (when ../shared is there) loads and draws with folding.
big = os.path.join(SHARED, "hta_trace_diff_control_a100.json.gz")
if os.path.exists(big):
    rc, err, state, png = run(big, [])
    check(rc == 0 and state["folded_blocks"] > 0, f"large trace: rc={rc} state={state}")
else:
    print("skipped: ../shared is absent, large-trace check not run")

# 6. A CUDA graph's launch (vLLM, 421 kernels, each also an ac2g flow): zoomed in on kernels far
# into the graph, the arrows go to the kernels in view (and the nearest one on each side), where
# the first 256 of them (all out of view) used to be drawn, piled at the view's left edge.
graph = os.path.join(SHARED, "tl_vllm_graph_exec_full.json.gz")
if os.path.exists(graph):
    import gzip
    events = json.load(gzip.open(graph))["traceEvents"]
    origin = min(float(e["ts"]) for e in events if "ts" in e and e.get("ph") != "M")
    launch = next(e for e in events if e.get("name") == "hipGraphLaunch")
    corr = launch["args"]["correlation"]
    kernels = [float(e["ts"]) - origin for e in events if e.get("ph") == "X" and e is not launch
               and e.get("args", {}).get("correlation") == corr]
    lo, hi = 17000, 17200  # µs from the trace start
    in_view = sum(1 for k in kernels if lo <= k <= hi)
    rc, err, state, png = run(graph, ["select hipGraphLaunch", f"zoom {lo}us {hi}us"])
    check(rc == 0, f"graph launch: rc={rc} {err}")
    if rc == 0:
        sel = state["selected"] or {}
        check(len(kernels) == 421 and sel.get("links") == len(kernels), f"graph launch: {sel}, {len(kernels)} kernels")
        check(in_view >= 10 and in_view <= state["flow_links_drawn"] <= in_view + 2,
              f"graph launch: {state['flow_links_drawn']} arrows drawn, {in_view} kernels in view")
else:
    print("skipped: ../shared is absent, CUDA graph launch arrows not checked")

# 7. The import-issues badge alarms only on issues worth a look, as `info` counts them: a trace
# with only Kineto's half launch flows reads "import: normal".
for trace, label in ((os.path.join(HERE, "..", "data", "kin_docs_after_fix_h100.json.gz"), "import: normal"),
                     (SAMPLE, None)):
    info = json.loads(subprocess.run([SIGHTLINE, "info", trace, "--format", "json"], capture_output=True, text=True,
                                     check=True).stdout)
    rc, err, state, png = run(trace, [])
    badge = state and state.get("import_badge")
    check(rc == 0 and badge is not None, f"no import badge state: rc={rc} {err}")
    if badge:
        check(badge["attention"] == info["issues_attention"], f"badge attention {badge}, info {info['issues_attention']}")
        want = label or (f"{info['issues_attention']} import issues" if info["issues_attention"] else "import: normal")
        check(badge["label"] == want, f"badge label {badge['label']!r}, wanted {want!r}")

print(f"gui: {len(failures)} failed checks" if failures else "gui: all checks passed")
sys.exit(1 if failures else 0)
