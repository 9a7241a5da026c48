#!/usr/bin/env python3
"""`sightline render TRACE --view critical-path` with no DISPLAY: SVG parsed as XML (title with the
path length of `report --only critical_path`, a legend entry per bound_by category), PNG decoded
(the categories' colours drawn), PDF written; a trace without ProfilerStep is drawn whole, and
an --annotation it lacks is a clear error."""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gui"))
from testkit import DATA, SAMPLE, SIGHTLINE, check, failures, read_png  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
# core/present/critical_path_palette.cpp, by bound_by name
COLORS = {"cpu_bound": (0, 114, 178), "gpu_compute_bound": (0, 158, 115), "gpu_communication_bound": (213, 94, 0),
          "gpu_kernel_launch_overhead": (204, 121, 167), "gpu_kernel_kernel_overhead": (153, 153, 51)}
LABELS = {"cpu_bound": "CPU", "gpu_compute_bound": "GPU compute", "gpu_communication_bound": "GPU communication",
          "gpu_kernel_launch_overhead": "launch overhead", "gpu_kernel_kernel_overhead": "kernel-kernel overhead"}


def render(*args):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    return subprocess.run([SIGHTLINE, "render", *args], capture_output=True, text=True, timeout=120, env=env)


out = subprocess.run([SIGHTLINE, "report", SAMPLE, "--only", "critical_path", "--format", "json"], capture_output=True, text=True)
rep = json.loads(out.stdout)
length_ms = rep["critical_path"][0]["length_us"] / 1000
shares = [s for s in rep["critical_path_summary"] if s["bound_by"] and s["sum_us"] > 0]

with tempfile.TemporaryDirectory() as tmp:
    svg = os.path.join(tmp, "cp.svg")
    p = render(SAMPLE, "--view", "critical-path", "-o", svg)
    check(p.returncode == 0, f"svg: {p.stderr}")
    if p.returncode == 0:
        labels = [g.get("aria-label") for g in ET.parse(svg).getroot().iter(SVG + "g") if g.get("aria-label")]
        text = " ".join(labels)
        check(f"{length_ms:.3f}"[:4] in text.replace(" ", ""), f"svg: path length {length_ms} ms not in the title")
        for s in shares:
            check(any(l.startswith(LABELS[s["bound_by"]]) for l in labels), f"svg: no legend entry for {s['bound_by']}")
        check("critical path" in labels, "svg: no 'critical path' strip label")

    png = os.path.join(tmp, "cp.png")
    p = render(SAMPLE, "--view", "critical-path", "-o", png, "--scale", "2")
    check(p.returncode == 0, f"png: {p.stderr}")
    if p.returncode == 0:
        width, height, rows = read_png(png)
        check(width == 1280 and height > 300, f"png: {width}×{height}")
        seen = {px for row in rows for px in row}
        for s in shares:
            if s["pct"] >= 1:
                check(COLORS[s["bound_by"]] in seen, f"png: colour of {s['bound_by']} ({s['pct']:.1f}%) not drawn")

    pdf = os.path.join(tmp, "cp.pdf")
    p = render(SAMPLE, "--view", "critical-path", "-o", pdf, "--theme", "light")
    check(p.returncode == 0 and open(pdf, "rb").read(5) == b"%PDF-", f"pdf: {p.stderr}")

    # Another instance of a trace with several, and errors.
    # Two hand-made steps, each an op launching a kernel: instance 1's kernel (200 µs) is its path.
    def X(cat, name, pid, tid, ts, dur, args=None):
        return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args or {}}
    events = []
    for n, (t0, kernel_us) in enumerate([(0, 20), (400, 200)]):
        events += [X("user_annotation", f"ProfilerStep#{n}", 1, 1, t0, 400), X("cpu_op", f"op{n}", 1, 1, t0 + 10, 40),
                   X("cuda_runtime", "cudaLaunchKernel", 1, 1, t0 + 20, 5, {"correlation": n + 1}),
                   X("kernel", f"k{n}", 0, 7, t0 + 30, kernel_us, {"device": 0, "stream": 7, "correlation": n + 1})]
    two = os.path.join(tmp, "two.json")
    json.dump({"traceEvents": events}, open(two, "w"))
    p = render(two, "--view", "critical-path", "--instance", "1", "-o", os.path.join(tmp, "m.svg"))
    check(p.returncode == 0, f"two steps, instance 1: {p.stderr}")
    if p.returncode == 0:
        labels = [g.get("aria-label") for g in ET.parse(os.path.join(tmp, "m.svg")).getroot().iter(SVG + "g") if g.get("aria-label")]
        check(any("ProfilerStep#1" in l for l in labels), f"two steps: the title does not name ProfilerStep#1: {labels[:3]}")
        check("k1" in labels, f"two steps: kernel k1 not drawn on the path: {labels}")
    # No ProfilerStep: the whole trace is the one instance (§10); a name the user gives must be there.
    plain = os.path.join(DATA, "hta_cp_simple_add_input.json.gz")
    p = render(plain, "--view", "critical-path", "-o", os.path.join(tmp, "n.svg"))
    check(p.returncode == 0, f"no ProfilerStep: exit {p.returncode}, {p.stderr.strip()}")
    if p.returncode == 0:
        labels = [g.get("aria-label") for g in ET.parse(os.path.join(tmp, "n.svg")).getroot().iter(SVG + "g") if g.get("aria-label")]
        check(any("whole trace" in l for l in labels), f"no ProfilerStep: the title does not name the whole trace: {labels[:3]}")
    p = render(plain, "--view", "critical-path", "--annotation", "ProfilerStep", "-o", os.path.join(tmp, "n2.svg"))
    check(p.returncode == 1 and "ProfilerStep" in p.stderr, f"--annotation ProfilerStep, none: exit {p.returncode}, {p.stderr.strip()}")
    p = render(SAMPLE, "--view", "critical-path", "--instance", "5", "-o", os.path.join(tmp, "o.svg"))
    check(p.returncode == 1 and "out of range" in p.stderr, f"instance 5: exit {p.returncode}, {p.stderr.strip()}")
    p = render(SAMPLE, "--instance", "1", "-o", os.path.join(tmp, "t.svg"))
    check(p.returncode == 2, f"--instance without --view critical-path: exit {p.returncode}")

print("FAILED" if failures else "OK", len(failures), "failures")
sys.exit(1 if failures else 0)
