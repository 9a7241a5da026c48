#!/usr/bin/env python3
"""Every figure kind of `sightline render` on the three largest corpus traces (by file size in
/work/shared/corpus), as SVG, checked for what a paper cannot use:

- no text outside the canvas: each glyph's outline (the <symbol> path Cairo wrote, so real font
  metrics) placed where its <use> puts it must lie inside the viewBox;
- no title cut ("…" at the end of a title);
- no two data labels alike: a column of names (texts of class "label" that end at the same x, as
  the bar charts' and lists' right-aligned names do) never repeats one, and legend and key-table
  entries never repeat.

Also the diff figure of the corpus A100/V100 pair and of the largest traces against each other
(where they align), and the rank overview of the corpus job; the corpus part skips without it.
First, on the bundled sample: `render TRACE` folds deep stacks as the GUI does (4 levels and a
"N more levels" row) unless --max-depth or --tracks asks for the rows, and the pid-0 Python thread
is drawn with the host's threads, not under the GPU's header."""
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gui"))
from testkit import SAMPLE, SHARED, SIGHTLINE, check, failures  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}href"
CORPUS = SHARED
NUMBER = re.compile(r"^[+−-]?[\d.,]+\s*(ns|µs|us|ms|s|%|×\d+)?$")
VIEWS = ["timeline", "histogram", "breakdown", "idle", "critical-path", "roofline"]


def render(*args):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    return subprocess.run([SIGHTLINE, "render", *args, "-q"], capture_output=True, text=True, timeout=300, env=env)


def glyph_boxes(root):
    """Bounding box of each glyph outline, by symbol id (empty glyphs: none)."""
    boxes = {}
    for sym in root.iter(SVG + "symbol"):
        xs, ys = [], []
        for path in sym.iter(SVG + "path"):
            nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", path.get("d", ""))]
            xs += nums[0::2]
            ys += nums[1::2]
        if xs:
            boxes[sym.get("id")] = (min(xs), min(ys), max(xs), max(ys))
    return boxes


def texts_of(path):
    """(class, text, [glyph boxes placed]) per text run, and the canvas size."""
    root = ET.parse(path).getroot()
    _, _, width, height = (float(v) for v in root.get("viewBox").split())
    boxes = glyph_boxes(root)
    check(not any(el.get("transform") for el in root.iter(SVG + "g") if el.get("aria-label")),
          f"{path}: a transformed text run (positions would need the transform)")
    runs = []
    for g in root.iter(SVG + "g"):
        label = g.get("aria-label")
        if label is None:
            continue
        placed = []
        for use in g.iter(SVG + "use"):
            box = boxes.get(use.get(XLINK, "").lstrip("#"))
            x, y = float(use.get("x", 0)), float(use.get("y", 0))
            if box:
                placed.append((x + box[0], y + box[1], x + box[2], y + box[3]))
        runs.append((g.get("class", ""), label, placed))
    return runs, width, height


def check_figure(path, what):
    runs, width, height = texts_of(path)
    check(runs, f"{what}: no text at all")
    for role, text, placed in runs:
        for x0, y0, x1, y1 in placed:
            if x0 < -0.5 or y0 < -0.5 or x1 > width + 0.5 or y1 > height + 0.5:
                check(False, f"{what}: '{text}' ({role}) outside the {width:.0f}×{height:.0f} canvas: "
                             f"glyph at x {x0:.1f}–{x1:.1f}, y {y0:.1f}–{y1:.1f}")
                break
        if role == "title":
            check(not text.endswith("…"), f"{what}: title cut: '{text}'")
    # Columns of names: "label" texts that end at the same x (right-aligned), one per row.
    columns = {}
    for role, text, placed in runs:
        if role == "label" and placed and not NUMBER.match(text.strip()):
            columns.setdefault(round(max(b[2] for b in placed) / 2), []).append(text)
    # A right-aligned column's texts end within a glyph's overhang of each other: merge neighbours.
    for key in sorted(columns):
        if key + 1 in columns:
            columns[key + 1] += columns.pop(key)
    for names in columns.values():
        if len(names) < 3:
            continue  # two texts ending at one x by chance are not a column
        repeated = sorted({n for n in names if names.count(n) > 1})
        check(not repeated, f"{what}: a column of names repeats {repeated}")
    legend = [text for role, text, _ in runs if role == "legend"]
    repeated = sorted({n for n in legend if legend.count(n) > 1})
    check(not repeated, f"{what}: legend or key entries repeat {repeated}")
    return len(runs)


def labels_of(path):
    return [text for _, text, _ in texts_of(path)[0]]


with tempfile.TemporaryDirectory() as tmp:
    folded, full = os.path.join(tmp, "folded.svg"), os.path.join(tmp, "full.svg")
    p = render(SAMPLE, "-o", folded)
    check(p.returncode == 0, f"sample render failed: {p.stderr}")
    q = render(SAMPLE, "-o", full, "--max-depth", "100")
    check(q.returncode == 0, f"sample --max-depth 100 failed: {q.stderr}")
    if p.returncode == 0 and q.returncode == 0:
        texts, _, folded_h = texts_of(folded)
        _, _, full_h = texts_of(full)
        labels = [t for _, t, _ in texts]
        more = [t for t in labels if re.fullmatch(r"▸ \d+ more levels", t)]
        check(len(more) >= 1, f"no 'N more levels' row in the default render: {labels}")
        check(any(t.startswith("deep stacks folded to 4 levels") for t in labels), "no note saying what the fold leaves out")
        check(folded_h < full_h * 0.6, f"folded figure {folded_h:.0f} pt tall, every level {full_h:.0f} pt")
        check(not any("more levels" in t for t in labels_of(full)), "--max-depth 100 still folds")
        r = render(SAMPLE, "-o", os.path.join(tmp, "tracks.svg"), "--tracks", "python3")
        check(r.returncode == 0 and not any("more levels" in t for t in labels_of(os.path.join(tmp, "tracks.svg"))),
              "--tracks still folds")
        # Groups by what a track holds: the GPU's header holds no CPU thread (Kineto's pid-0 Python
        # events); "Python thread" is drawn after python3 19392's header, before the profiler's.
        order = [t for t in labels if t in ("GPU 0 · NVIDIA H100 80GB HBM3", "python3 19392", "Python thread", "stream 7")]
        check(order == ["GPU 0 · NVIDIA H100 80GB HBM3", "stream 7", "python3 19392", "Python thread"],
              f"row order under the group headers: {order}")
        # The top Python frame shows its function ("<module>"), not ":".
        check("<module>" in labels and ":" not in labels, f"top frame label: {[t for t in labels if 'module' in t or t == ':']}")

if not os.path.isdir(CORPUS):
    print(f"skipped: no corpus at {CORPUS}")
    sys.exit(0)
traces = sorted((os.path.join(CORPUS, f) for f in os.listdir(CORPUS) if f.endswith((".json.gz", ".json"))),
                key=os.path.getsize, reverse=True)[:3]
print("largest traces:", ", ".join(os.path.basename(t) for t in traces))

with tempfile.TemporaryDirectory() as tmp:
    drawn = 0
    for trace in traces:
        name = os.path.basename(trace).split(".")[0]
        for view in VIEWS:
            out = os.path.join(tmp, f"{name}_{view}.svg")
            p = render(trace, "--view", view, "-o", out)
            if p.returncode == 1 and view == "roofline":  # most traces have no CUPTI counters: said, not drawn
                check("counters" in p.stderr or "cuda_profiler_range" in p.stderr, f"{name} roofline: {p.stderr}")
                continue
            check(p.returncode == 0, f"{name} --view {view} failed: {p.stderr}")
            if p.returncode == 0:
                n = check_figure(out, f"{name} {view}")
                drawn += 1
                print(f"{name} {view}: {n} texts")
    pairs = [(os.path.join(CORPUS, "hta_trace_diff_control_a100.json.gz"), os.path.join(CORPUS, "hta_trace_diff_test_v100.json.gz"))]
    pairs += [(traces[i], traces[j]) for i in range(len(traces)) for j in range(len(traces)) if i < j]
    for a, b in pairs:
        what = f"diff {os.path.basename(a).split('.')[0]} vs {os.path.basename(b).split('.')[0]}"
        out = os.path.join(tmp, "diff.svg")
        p = render(a, b, "--view", "diff", "-o", out)
        if p.returncode == 1 and "aligned" in p.stderr:
            print(f"{what}: no aligned diff ({p.stderr.strip()})")
            continue
        check(p.returncode == 0, f"{what} failed: {p.stderr}")
        if p.returncode == 0:
            print(f"{what}: {check_figure(out, what)} texts")
            heading = [t for t in labels_of(out) if t.startswith("Largest changes")]
            check(heading and not heading[-1].endswith("…") and any(t.endswith("way)") for t in labels_of(out)),
                  f"{what}: the bar chart's heading is cut: {heading}")
            drawn += 1
    job = os.path.join(CORPUS, "param_dlrm_8rank")
    if os.path.isdir(job):
        out = os.path.join(tmp, "ranks.svg")
        p = render(job, "-o", out)
        check(p.returncode in (0, 1) and os.path.exists(out), f"ranks figure failed: {p.stderr}")
        if os.path.exists(out):
            print(f"ranks: {check_figure(out, 'ranks')} texts")
            drawn += 1
    check(drawn >= 3 * 5, f"only {drawn} figures drawn")

print("FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
