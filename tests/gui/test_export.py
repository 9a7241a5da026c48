#!/usr/bin/env python3
"""The GUI's figure export end to end (figures/README.md "Export from the GUI"): the real app under
Xvfb driven by `zoom`, `hide`, `range` and `export` script commands; the SVGs parsed with xml.etree
and compared with `sightline render` of the same range and rows and with counts from the trace JSON."""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testkit import SAMPLE, SIGHTLINE, check, failures, read_png, sample_stream7_window  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
GPU_KINDS = {"computation": (0, 114, 178), "communication": (230, 159, 0), "memory": (0, 158, 115),
             "sync": (213, 94, 0), "other GPU": (204, 121, 167)}
WIDTH = 800


def gui(trace, lines, tmp):
    """Runs the script; returns the state dump (with last_export) or None."""
    script, state = os.path.join(tmp, "s.txt"), os.path.join(tmp, "s.json")
    with open(script, "w") as f:
        f.write("\n".join(lines + [f"state {state}", "quit"]) + "\n")
    p = subprocess.run([SIGHTLINE, trace, "--script", script, "--size", "1600x1000"], capture_output=True, text=True,
                       timeout=180)
    if p.returncode != 0:
        check(False, f"{lines}: exit {p.returncode}: {p.stderr.strip()}")
        return None
    return json.load(open(state))


def render(*args):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    p = subprocess.run([SIGHTLINE, "render", *args], capture_output=True, text=True, timeout=120, env=env)
    check(p.returncode == 0, f"render {args}: {p.stderr}")
    return p


def rgb_of(style):
    m = re.search(r"fill:rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)", style or "")
    return tuple(round(float(v) * 2.55) for v in m.groups()) if m else None


def labels(root):
    return [g.get("aria-label") for g in root.iter(SVG + "g") if g.get("aria-label")]


def rects(root):
    """Filled rectangles as (colour, opacity, x, width): row order moves them only vertically."""
    out = collections.Counter()
    for el in root.iter(SVG + "path"):
        d, style = el.get("d", ""), el.get("style", "")
        if "fill:rgb" not in style or "Z" not in d or " C " in d:
            continue
        nums = [float(v) for v in re.findall(r"-?[\d.]+", d.split("Z")[0])]  # "M x y L x y L x y L x y Z M x y"
        if len(nums) != 8:
            continue
        xs = nums[0::2]
        opacity = re.search(r"fill-opacity:([\d.]+)", style)
        out[(rgb_of(style), opacity.group(1) if opacity else "1", round(min(xs), 2), round(max(xs) - min(xs), 2))] += 1
    return out


def gpu_slices(root):
    """Opaque rectangles in kernel-type colours, minus the legend's swatches (as test_render.py)."""
    opaque = [rgb_of(el.get("style", "")) for el in root.iter(SVG + "path") if "fill-opacity:1;" in el.get("style", "")]
    legend = [k for k in GPU_KINDS if k in labels(root)]
    return sum(1 for c in opaque if c in GPU_KINDS.values()) - len(legend)


UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}


def ticks_ns(root):
    """Tick labels ("1.25 ms") as ns."""
    out = []
    for text in labels(root):
        m = re.fullmatch(r"([\d.]+) (ns|µs|ms|s)", text)
        if m:
            out.append(float(m.group(1)) * UNITS[m.group(2)])
    return out


# A window where stream 7 has several slices, all wide enough not to fold at WIDTH px (computed
# from the JSON alone, as test_render.py does).
_, _, window, expected = sample_stream7_window(0.6 * WIDTH, 4)
check(window is not None, "no suitable window in the sample trace")
a, b = window
print(f"window {a}:{b} µs, {len(expected)} slices on stream 7")

with tempfile.TemporaryDirectory() as tmp:
    # 1. What is on screen: the same rectangles as `render` of the same range, and ticks inside it.
    screen = os.path.join(tmp, "screen.svg")
    state = gui(SAMPLE, [f"zoom {a}us {b}us", f"export {screen} width={WIDTH}"], tmp)
    ref = os.path.join(tmp, "render.svg")
    p = render(SAMPLE, "-o", ref, "--range", f"{a}:{b}", "--width", str(WIDTH))
    if state:
        last = state["last_export"]
        check(last and last["ok"], f"export failed: {last}")
        check(last["start_ns"] == a * 1000 and last["end_ns"] == b * 1000, f"range {last['start_ns']}–{last['end_ns']}")
        check("stream 7" in last["rows"], f"rows {last['rows']}")
        root, ref_root = ET.parse(screen).getroot(), ET.parse(ref).getroot()
        mine, theirs = rects(root), rects(ref_root)
        # Same rectangles, only moved vertically (pinned GPU streams come first in the GUI; an
        # extra group header that this ordering may open has no fill in the paper theme).
        diff_gui, diff_ref = mine - theirs, theirs - mine
        check(sum(diff_ref.values()) == 0, f"rectangles render drew and the export did not: {diff_ref}")
        check(sum(diff_gui.values()) == 0, f"rectangles only in the export: {diff_gui}")
        check(sum(theirs.values()) > last["slices"], f"only {sum(theirs.values())} rectangles in render's figure")
        m = re.search(r"(\d+) slices, (\d+) folded", p.stderr)
        check(m and int(m.group(1)) == last["slices"] and int(m.group(2)) == last["folded"],
              f"render says {p.stderr.strip()}, the export {last['slices']} slices {last['folded']} folded")
        ticks = ticks_ns(root)
        check(len(ticks) >= 3, f"only {len(ticks)} tick labels")
        outside = [t for t in ticks if not (a * 1000 - 1 <= t <= b * 1000 + 1)]
        check(not outside, f"tick labels outside {a}–{b} µs: {outside}")
        check(any(t.startswith("sample_bert_h100") for t in labels(root)), "title missing")
        all_gpu = gpu_slices(root)

        # 2. A hidden row is absent; the GPU rectangles lost are stream 7's slices in the JSON.
        hidden = os.path.join(tmp, "hidden.svg")
        state = gui(SAMPLE, [f"zoom {a}us {b}us", "hide stream 7", f"export {hidden} width={WIDTH}"], tmp)
        if state:
            last = state["last_export"]
            check("stream 7" not in last["rows"], f"hidden row exported: {last['rows']}")
            root = ET.parse(hidden).getroot()
            check("stream 7" not in labels(root), "the hidden row's label is in the figure")
            lost = all_gpu - gpu_slices(root)
            check(lost == len(expected), f"hiding stream 7 removed {lost} GPU slices, the JSON has {len(expected)}")

    # 3. PNG: width × scale pixels.
    png = os.path.join(tmp, "screen.png")
    state = gui(SAMPLE, [f"zoom {a}us {b}us", f"export {png} width=400 scale=2"], tmp)
    if state and os.path.exists(png):
        w, h, _ = read_png(png)
        check(w == 800, f"PNG width {w}, wanted 400 × 2")
        check(abs(h - round(state["last_export"]["height"] * 2)) <= 1, f"PNG height {h}")

    # 4. The selected range instead of the screen.
    sel = os.path.join(tmp, "selection.svg")
    lo, hi = a + 50, a + 150
    state = gui(SAMPLE, ["zoom 0 3ms", f"range {lo}us {hi}us", f"export {sel} selection width={WIDTH}"], tmp)
    if state:
        last = state["last_export"]
        check(last["what"] == "selection" and last["start_ns"] == lo * 1000 and last["end_ns"] == hi * 1000,
              f"selection export: {last}")
        ticks = ticks_ns(ET.parse(sel).getroot())
        check(ticks and all(lo * 1000 - 1 <= t <= hi * 1000 + 1 for t in ticks), f"selection ticks {ticks}")

    # 5. The launch-latency view: a histogram, the same as render's.
    lat, ref = os.path.join(tmp, "latency.svg"), os.path.join(tmp, "render_latency.svg")
    state = gui(SAMPLE, ["view latency", f"export {lat} latency width={WIDTH}"], tmp)
    render(SAMPLE, "-o", ref, "--view", "histogram", "--width", str(WIDTH))
    if state:
        check(state["last_export"]["what"] == "latency", f"what {state['last_export']['what']}")
        texts = labels(ET.parse(lat).getroot())
        check("launches" in texts and any(t.startswith("median ") for t in texts), f"no histogram: {texts[:20]}")
        check(texts == labels(ET.parse(ref).getroot()), "the exported histogram differs from render's")
    for what in ("breakdown", "idle"):
        out = os.path.join(tmp, f"{what}.pdf")
        state = gui(SAMPLE, [f"export {out} {what}"], tmp)
        check(state and state["last_export"]["ok"] and open(out, "rb").read(5) == b"%PDF-", f"{what} export")

    # 6. Errors are reported, not crashed on: exit 1 with the message.
    script = os.path.join(tmp, "bad.txt")
    for line, needle in ((f"export {tmp}/x.gif", ".svg, .pdf or .png"), (f"export {tmp}/x.svg selection", "no range"),
                         ("hide no such row", "no row")):
        with open(script, "w") as f:
            f.write(line + "\nquit\n")
        p = subprocess.run([SIGHTLINE, SAMPLE, "--script", script], capture_output=True, text=True, timeout=120)
        check(p.returncode == 1 and needle in p.stderr, f"'{line}': exit {p.returncode}, {p.stderr.strip()}")

print("export: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
