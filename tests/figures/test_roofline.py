#!/usr/bin/env python3
"""`sightline render TRACE --view roofline` with no DISPLAY: the SVG's texts (roof values, decade
ticks, legend) and points (one circle per kernel, on log-log axes: positions checked against
intensities and FLOP/s computed here from the trace JSON alone), the PNG's colours, and clear
errors for traces that cannot be plotted."""
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gui"))
from testkit import DATA, SHARED, SIGHTLINE, check, failures, read_png  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
TRACE = os.path.join(DATA, "cupti_roofline_handmade.json")
OKABE_ITO = [(0, 114, 178), (230, 159, 0), (0, 158, 115), (213, 94, 0), (204, 121, 167), (86, 180, 233), (0, 0, 0)]


def render(*args):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    return subprocess.run([SIGHTLINE, "render", *args], capture_output=True, text=True, timeout=120, env=env)


def expected_points():
    """(operator, intensity, FLOP/s) per kernel with FP work, from the JSON: FMA = 2 FLOP."""
    events = json.load(open(TRACE))["traceEvents"]
    ops = [e["name"] for e in events if e.get("cat") == "cpu_op"]
    ranges = sorted((e for e in events if e.get("cat") == "cuda_profiler_range"), key=lambda e: e["ts"])
    out = []
    for op, r in zip(ops, ranges):
        a = r["args"]
        flops = sum(v * (2 if "fma" in k else 1) for k, v in a.items() if k.startswith("smsp__sass_thread_inst_executed_op_"))
        if flops == 0:
            continue
        nbytes = a["dram__bytes_read.sum"] + a["dram__bytes_write.sum"]
        out.append((op, flops / nbytes, flops / (a["gpu__time_duration.sum"] * 1e-9)))
    return out


def circles(root):
    """Centres and fill colours of the SVG paths Cairo writes for arcs (curves only, no lines)."""
    out = []
    for el in root.iter(SVG + "path"):
        d, style = el.get("d", ""), el.get("style", "")
        m = re.search(r"fill:rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)", style)
        if " C " not in d or " L " in d or not m:
            continue
        nums = [float(v) for v in re.findall(r"-?[\d.]+", d)]
        xs, ys = nums[0::2], nums[1::2]
        out.append(((min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2, tuple(round(float(v) * 2.55) for v in m.groups())))
    return out


points = expected_points()
check(len(points) == 7, f"hand-made trace: {len(points)} kernels with FLOPs, expected 7")

with tempfile.TemporaryDirectory() as tmp:
    # 1. SVG: roof labels with the values derived from deviceProperties, decade ticks, legend.
    svg = os.path.join(tmp, "roof.svg")
    p = render(TRACE, "--view", "roofline", "-o", svg)
    check(p.returncode == 0, f"svg render failed: {p.stderr}")
    check("7 points, 4 roofs" in p.stderr, f"render report: {p.stderr.strip()}")
    root = ET.parse(svg).getroot()
    labels = [g.get("aria-label") for g in root.iter(SVG + "g") if g.get("aria-label")]
    for want in ["FP32 peak 19.5 TFLOP/s", "FP64 peak 9.75 TFLOP/s", "FP16 peak 78.0 TFLOP/s", "DRAM 1.56 TB/s", "0.01", "0.1", "1", "10", "100",
                 "100 G", "1 T", "10 T", "100 T", "aten::addmm (2)", "aten::relu (1)",
                 "arithmetic intensity (FLOP per DRAM byte)", "achieved FLOP/s",
                 "Handmade A100-SXM4-40GB · 7 of 8 profiled kernels"]:
        check(want in labels, f"svg lacks the text '{want}'")
    check(any(t.startswith("1 of 8 kernels have no point") for t in labels), "the left-out kernel is not mentioned")
    notes = " ".join(labels)  # the notes wrap onto several lines
    check("Roofs from deviceProperties: 108 SMs, compute capability 8.0, clockRate 1.41 GHz; DRAM from memoryClockRate"
          in notes, f"no roof sources: {labels}")

    # 2. Points: 7 circles; x linear in log10(intensity), y linear in log10(FLOP/s).
    found = [c for c in circles(root) if c[2] in OKABE_ITO]
    check(len(found) == 7, f"{len(found)} point circles, expected 7")
    if len(found) == 7:
        by_x = sorted(found)
        want = sorted(points, key=lambda p: p[1])
        lx = [math.log10(p[1]) for p in want]
        ax = (by_x[-1][0] - by_x[0][0]) / (lx[-1] - lx[0])
        for (x, _, _), l in zip(by_x, lx):
            check(abs(by_x[0][0] + ax * (l - lx[0]) - x) < 0.5, f"point at x={x:.1f} is not at log10 intensity {l:.3f}")
        by_y = sorted(found, key=lambda c: -c[1])  # screen y grows down: lowest FLOP/s first
        want_y = sorted(points, key=lambda p: p[2])
        ly = [math.log10(p[2]) for p in want_y]
        ay = (by_y[-1][1] - by_y[0][1]) / (ly[-1] - ly[0])
        for (_, y, _), l in zip(by_y, ly):
            check(abs(by_y[0][1] + ay * (l - ly[0]) - y) < 0.5, f"point at y={y:.1f} is not at log10 FLOP/s {l:.3f}")
        # Colour by operator: the two addmm kernels share the first colour, the others differ.
        colors = [c[2] for c in found]
        check(colors.count(OKABE_ITO[0]) == 2 and len(set(colors)) == 6, f"point colours by operator: {colors}")

    # 3. PNG: the points' colours are there; PDF is written.
    png = os.path.join(tmp, "roof.png")
    p = render(TRACE, "--view", "roofline", "-o", png, "--scale", "2")
    check(p.returncode == 0, f"png render failed: {p.stderr}")
    if p.returncode == 0:
        width, height, rows = read_png(png)
        check(width == 1280, f"png width {width}")
        seen = {px for row in rows for px in row}
        check(OKABE_ITO[0] in seen and OKABE_ITO[1] in seen, "png lacks the point colours")
    pdf = os.path.join(tmp, "roof.pdf")
    p = render(TRACE, "--view", "roofline", "-o", pdf)
    check(p.returncode == 0 and open(pdf, "rb").read(5) == b"%PDF-", f"pdf render failed: {p.stderr}")

    # 4. Traces that cannot be plotted: a clear error, exit 1, no file.
    none = os.path.join(tmp, "none.svg")
    p = render(os.path.join(DATA, "hta_cp_simple_add_input.json.gz"), "--view", "roofline", "-o", none)
    check(p.returncode == 1 and "no cuda_profiler_range events" in p.stderr and not os.path.exists(none),
          f"no counters: exit {p.returncode}, {p.stderr.strip()}")
    corpus = os.path.join(SHARED, "hta_cupti_profiler_a100.json.gz")
    if os.path.exists(corpus):
        p = render(corpus, "--view", "roofline", "-o", none)
        check(p.returncode == 1 and "no kernel can be placed on a roofline: 77 of 77 kernels have no point" in p.stderr,
              f"corpus counters without DRAM bytes: exit {p.returncode}, {p.stderr.strip()}")
    else:
        print("skipped corpus trace: ../shared is absent")

print("FAILED" if failures else "OK", len(failures), "failures")
sys.exit(1 if failures else 0)
