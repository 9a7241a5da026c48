#!/usr/bin/env python3
"""`sightline render` end to end, with no DISPLAY: SVG parsed as XML with the slice count computed
independently from the trace JSON, PNG decoded (size and colours), PDF read by pdfinfo/pdftotext."""
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

from testkit import DATA, SAMPLE, SHARED, SIGHTLINE, check, failures, read_png, sample_stream7_window  # noqa: E402





def render(*args):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    return subprocess.run([SIGHTLINE, "render", *args], capture_output=True, text=True, timeout=120, env=env)


def rgb_of(style):
    m = re.search(r"fill:rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)", style)
    return tuple(round(float(v) * 2.55) for v in m.groups()) if m else None


# Expectation from the JSON alone: stream 7's complete events overlapping the window, times
# relative to the earliest timestamp of the trace.
events, _, window, expected = sample_stream7_window(0.6 * 800, 3)
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


# 5. The diff figure: runs, legend, bars equal to `sightline diff --format json`'s top changes.
CHANGE_LABELS = ["B faster (< -5%)", "within ±5%", "B slower (5–25%)", "B much slower (≥ 25%)",
                 "unmatched (removed in A / added in B)", "not compared"]


def stem(path):
    return os.path.basename(path).replace(".gz", "").replace(".json", "")


def numbered(name, labels):
    # A name on several bars whose paths the key table has no room for: "name #n", the name cut in
    # the middle ("head…tail #n") where it does not fit.
    for t in labels:
        m = re.fullmatch(r"(.*) #\d+", t)
        if m:
            head, _, tail = m.group(1).partition("…")
            if m.group(1) == name or (tail and name.startswith(head) and name.endswith(tail)):
                return True
    return False


def check_diff_figure(a, b, tmp, top, extra=()):
    svg = os.path.join(tmp, "diff.svg")
    p = render(a, b, "--view", "diff", "-o", svg, "--top", str(top), *extra)
    check(p.returncode == 0, f"diff render failed: {p.stderr}")
    if p.returncode != 0:
        return
    labels = [g.get("aria-label") for g in ET.parse(svg).getroot().iter(SVG + "g") if g.get("aria-label")]
    check("A (control) · " + stem(a) in labels and "B (test) · " + stem(b) in labels, f"run labels missing: {labels[:12]}")
    for name in CHANGE_LABELS:
        check(name in labels, f"legend lacks '{name}'")
    check("time since the compared step's start" in labels, "diff axis caption missing")
    d = subprocess.run([SIGHTLINE, "diff", a, b, "--format", "json", *extra[:2]], capture_output=True, text=True, timeout=120)
    check(d.returncode == 0, f"sightline diff failed: {d.stderr}")
    aligned = json.loads(d.stdout)["aligned"]
    ops = aligned["inclusive_regressions"][:top] + aligned["inclusive_improvements"][:top]
    values = sorted(float(t.replace("−", "-").replace(" ms", "")) for t in labels if re.fullmatch(r"[+−]\d+\.\d{3} ms", t))
    expected = sorted(round(o["delta_us"] / 1000, 3) for o in ops)
    check(len(values) == len(ops), f"{len(values)} bars, wanted {len(ops)} (top {top} each way)")
    check(all(abs(x - y) <= 0.0011 for x, y in zip(values, expected)), f"bar values {values} != diff's {expected}")
    keys = {labels[i]: labels[i + 1] for i in range(len(labels) - 1) if re.fullmatch(r"K\d+", labels[i])}
    for o in ops:  # each bar's name: plain, "name (Kn)" with the path in the key table, or a key
        named = o["name"] in labels or any(t.startswith(o["name"] + " (K") for t in labels) or numbered(o["name"], labels)
        keyed = any(v == o["name"] or o["path"].endswith(v.replace("… > ", "")) for v in keys.values())
        check(named or keyed, f"bar for {o['name']} not labelled")
    print(f"diff {stem(a)} vs {stem(b)}: {len(values)} bars match sightline diff")
    return p


with tempfile.TemporaryDirectory() as tmp:
    base, test = os.path.join(DATA, "hta_trace_compare_base.json.gz"), os.path.join(DATA, "hta_trace_compare_test.json.gz")
    check_diff_figure(base, test, tmp, 8, ("--iteration-a", "1010"))
    control = os.path.join(SHARED, "hta_trace_diff_control_a100.json.gz")
    if os.path.exists(control):
        p = check_diff_figure(control, os.path.join(SHARED, "hta_trace_diff_test_v100.json.gz"), tmp, 5)
        check(p is not None and "stacks cut below depth 1" in p.stderr, "diff: default depth cut not reported")
    else:
        print("skipped: the shared corpus is absent (A100 vs V100 diff figure)")
    for fmt in ("pdf", "png"):
        out = os.path.join(tmp, "diff." + fmt)
        p = render(base, test, "--view", "diff", "-o", out, "--width", "500", "--scale", "2")
        check(p.returncode == 0, f"diff {fmt}: {p.stderr}")
    width, _, _ = read_png(os.path.join(tmp, "diff.png"))
    check(width == 1000, f"diff PNG width {width}, wanted 500 × 2")
    if shutil.which("pdfinfo"):
        info = subprocess.run(["pdfinfo", os.path.join(tmp, "diff.pdf")], capture_output=True, text=True)
        check(info.returncode == 0 and re.search(r"Pages:\s+1\b", info.stdout), f"diff pdfinfo: {info.stdout}{info.stderr}")
        text = subprocess.run(["pdftotext", os.path.join(tmp, "diff.pdf"), "-"], capture_output=True, text=True).stdout
        check("A (control)" in text and "within ±5%" in text, "diff PDF text is not extractable")
    for args in ([base, "--view", "diff"], [base, test], [base, test, "--view", "timeline"], [base, test, "--view", "diff", "--top", "0"]):
        p = render(*args, "-o", os.path.join(tmp, "x.svg"))
        check(p.returncode == 2 and p.stderr.strip(), f"{args}: exit {p.returncode}, wanted 2 with a message")
    p = render(base, os.path.join(tmp, "missing.json"), "--view", "diff", "-o", os.path.join(tmp, "x.svg"))
    check(p.returncode == 1, f"diff with a missing trace: exit {p.returncode}")

    # 6. Depth limit: drawn + cut = every slice of the thread in the JSON; the cut is in the figure.
    thread = [e for e in events if e.get("ph") == "X" and e.get("pid") == 19392 and e.get("tid") == 19392]
    counts = {}
    for depth in ("0", "2"):
        svg = os.path.join(tmp, f"depth{depth}.svg")
        p = render(SAMPLE, "-o", svg, "--tracks", "tid 19392", "--max-depth", depth)
        m = re.search(r"(\d+) slices, (\d+) folded runs.*stacks cut below depth \d+: (\d+) slices not drawn", p.stderr)
        check(p.returncode == 0 and m, f"--max-depth {depth}: {p.stderr}")
        if not m:
            continue
        drawn, folded, cut = map(int, m.groups())
        check(folded == 0 and drawn + cut == len(thread), f"--max-depth {depth}: {drawn} drawn + {cut} cut != {len(thread)} slices")
        labels = [g.get("aria-label") for g in ET.parse(svg).getroot().iter(SVG + "g") if g.get("aria-label")]
        check(f"stacks cut below depth {depth}: {cut} slices not drawn" in labels, f"no depth note in the figure: {labels}")
        counts[depth] = drawn
    check(counts.get("0") == 2 and counts.get("2", 0) > counts.get("0", 0), f"depth-0 slices {counts}")  # `:` and ProfilerStep#6
    p = render(SAMPLE, "-o", os.path.join(tmp, "x.svg"), "--tracks", "tid 19392")
    check("stacks cut" not in p.stderr, "a cut reported without --max-depth")

print("figures: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
