#!/usr/bin/env python3
"""`sightline render` end to end, with no DISPLAY: SVG parsed as XML with the slice count computed
independently from the trace JSON, PNG decoded (size and colours), PDF read by pdfinfo/pdftotext."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gui"))
SVG = "{http://www.w3.org/2000/svg}"
COMPUTATION, MEMORY, OTHER_GPU = (0, 114, 178), (0, 158, 115), (204, 121, 167)

from testkit import DATA, SAMPLE, SHARED, SIGHTLINE, check, failures, read_png  # noqa: E402





def render(*args):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    return subprocess.run([SIGHTLINE, "render", *args], capture_output=True, text=True, timeout=120, env=env)


def rgb_of(style):
    m = re.search(r"fill:rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)", style)
    return tuple(round(float(v) * 2.55) for v in m.groups()) if m else None


# Expectation from the JSON alone: stream 7's complete events overlapping the window, times
# relative to the earliest timestamp of the trace.
events = json.load(gzip.open(SAMPLE))["traceEvents"]
origin = min(e["ts"] for e in events if "ts" in e and e.get("ph") != "M")
stream7 = [(e["ts"] - origin, e["dur"]) for e in events if e.get("ph") == "X" and e.get("tid") == 7]
window, expected = None, []
for start_us in range(900, 4800, 10):  # the first 200 µs window with several slices, none folding
    a, b = start_us, start_us + 200
    hits = [(s, d) for s, d in stream7 if s < b and s + d > a]
    visible = [min(s + d, b) - max(s, a) for s, d in hits]
    if len(hits) >= 5 and min(visible) * (0.6 * 800) / 200 >= 3:
        window, expected = (a, b), hits
        break
check(window is not None, "no suitable window in the sample trace")
a, b = window
print(f"window {a}:{b} µs, {len(expected)} slices expected on stream 7")

with tempfile.TemporaryDirectory() as tmp:
    # 1. SVG: XML, slice rectangles, texts (as aria-labels on the glyph runs).
    svg = os.path.join(tmp, "fig.svg")
    p = render(SAMPLE, "-o", svg, "--range", f"{a}:{b}", "--tracks", "stream 7", "--width", "800")
    check(p.returncode == 0, f"svg render failed: {p.stderr}")
    root = ET.parse(svg).getroot()
    check(root.tag == SVG + "svg", "root element is not <svg>")
    labels = [g.get("aria-label") for g in root.iter(SVG + "g") if g.get("aria-label")]
    kinds = {"computation": COMPUTATION, "memory": MEMORY, "other GPU": OTHER_GPU}
    legend_kinds = [k for k in kinds if k in labels]
    opaque = [rgb_of(el.get("style", "")) for el in root.iter(SVG + "path")
              if "fill-opacity:1;" in el.get("style", "")]
    gpu_rects = sum(1 for c in opaque if c in kinds.values())
    check(gpu_rects - len(legend_kinds) == len(expected),
          f"slice rectangles: {gpu_rects - len(legend_kinds)} drawn, {len(expected)} in the trace")
    check("stream 7" in labels, f"row label missing: {labels}")
    check("time since trace start" in labels, "axis caption missing")
    check(any(re.fullmatch(r"[\d.]+ (µs|ms)", t or "") for t in labels), f"no tick labels with units: {labels}")
    check("computation" in legend_kinds, f"legend lacks kernel types: {labels}")
    check(any(t.startswith("sample_bert_h100") for t in labels), "title missing")

    # 2. PNG: requested size (width × scale) and the expected colours.
    png = os.path.join(tmp, "fig.png")
    p = render(SAMPLE, "-o", png, "--range", f"{a}:{b}", "--tracks", "stream 7", "--width", "400", "--scale", "2")
    check(p.returncode == 0, f"png render failed: {p.stderr}")
    width, height, rows = read_png(png)
    check(width == 800, f"PNG width {width}, wanted 400 × 2")
    counts = {}
    for row in rows:
        for px in row:
            counts[px] = counts.get(px, 0) + 1
    dominant = max(counts, key=counts.get)
    check(dominant == (255, 255, 255), f"dominant colour {dominant}, wanted the white paper background")
    blue = sum(n for px, n in counts.items() if all(abs(px[i] - COMPUTATION[i]) <= 6 for i in range(3)))
    check(blue > 500, f"only {blue} computation-blue pixels")
    dark = render(SAMPLE, "-o", png, "--theme", "dark", "--tracks", "stream 7", "-q")
    check(dark.returncode == 0, f"dark render failed: {dark.stderr}")
    _, _, rows = read_png(png)
    check(rows[2][2] == (30, 31, 34), f"dark background is {rows[2][2]}")

    # 3. PDF: one page that poppler reads, with the text as text.
    pdf = os.path.join(tmp, "fig.pdf")
    p = render(SAMPLE, "-o", pdf, "--view", "timeline")
    check(p.returncode == 0, f"pdf render failed: {p.stderr}")
    if shutil.which("pdfinfo"):
        info = subprocess.run(["pdfinfo", pdf], capture_output=True, text=True)
        check(info.returncode == 0 and re.search(r"Pages:\s+1\b", info.stdout), f"pdfinfo: {info.stdout}{info.stderr}")
        text = subprocess.run(["pdftotext", pdf, "-"], capture_output=True, text=True).stdout
        check("stream 7" in text and "computation" in text, "PDF text is not extractable")
        fonts = subprocess.run(["pdffonts", pdf], capture_output=True, text=True).stdout
        check("DejaVu" in fonts and " yes " in fonts, f"font not embedded: {fonts}")
    else:
        print("note: pdfinfo missing (poppler-utils); PDF checked by header only")
        check(open(pdf, "rb").read(5) == b"%PDF-", "not a PDF")

    # 4. The other views render; errors have the documented exit codes.
    for view in ("histogram", "breakdown", "idle"):
        out = os.path.join(tmp, f"{view}.svg")
        p = render(SAMPLE, "-o", out, "--view", view)
        check(p.returncode == 0, f"{view}: {p.stderr}")
        if p.returncode == 0:
            ET.parse(out)
    for args, code in ((["-o", "x.svg", "--view", "diff"], 2), (["-o", "x.svg", "--range", "5ms:1ms"], 2),
                       (["-o", "x.svg", "--range", "soon:later"], 2), (["-o", "x.gif"], 2),
                       (["-o", "x.svg", "--theme", "neon"], 2), (["-o", "x.svg", "--tracks", "no such row"], 1)):
        p = render(SAMPLE, *[os.path.join(tmp, v) if v.startswith("x.") else v for v in args])
        check(p.returncode == code and p.stderr.strip(), f"{args}: exit {p.returncode}, wanted {code} with a message")
    p = render(os.path.join(tmp, "missing.json"), "-o", os.path.join(tmp, "x.svg"))
    check(p.returncode == 1, f"missing trace: exit {p.returncode}")

print("figures: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
