#!/usr/bin/env python3
"""`sightline render DIR|RUN.slfleet --view heatmap` end to end, with no DISPLAY: the rank × step
heatmap of iteration time and the rank × collective heatmap of wait, on the hand-made 3-rank job
and the corpus 8-rank job: rank, step and collective labels, the colour scales' ends against
`sightline report DIR` (its stragglers and collectives tables), heatmap colours in the PNG, the
same figure from the job's fleet file (made with fleet-map and fleet-reduce, no Dask), row orders,
and usage errors."""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gui"))
from testkit import SHARED, SIGHTLINE, check, failures, read_png  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
INPUTS = os.path.join(HERE, "..", "golden", "inputs")
CORPUS_JOB = os.path.join(SHARED, "param_dlrm_8rank")
WIDE = ("--theme", "light", "--width", "1200")  # room for every column label of the corpus job
DARKEST, PALEST = (128, 0, 38), (255, 255, 204)  # the scale's ends (YlOrRd)


def run(*args):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    return subprocess.run([SIGHTLINE, *args], capture_output=True, text=True, timeout=300, env=env)


def render(*args):
    return run("render", *args)


def labels(svg):
    return [g.get("aria-label") for g in ET.parse(svg).getroot().iter(SVG + "g") if g.get("aria-label")]


def make_fleet(job_dir, out, tmp):
    """The fleet of a job without Dask: fleet-plan, one fleet-map per file, fleet-reduce."""
    plan = json.loads(run("fleet-plan", job_dir).stdout)
    summaries = []
    for i, f in enumerate(plan["files"]):
        summary = os.path.join(tmp, f"{os.path.basename(out)}.{i}.slrank")
        p = run("fleet-map", f, "-o", summary, "--index", str(i))
        check(p.returncode == 0, f"fleet-map {f}: {p.stderr}")
        summaries.append(summary)
    p = run("fleet-reduce", *summaries, "-o", out, "--source", job_dir, "--gpus-per-node", "2")
    check(p.returncode == 0, f"fleet-reduce: {p.stderr}")


def report_tables(job_dir):
    p = run("report", job_dir, "--format", "json", "--only", "collectives")
    return json.loads(p.stdout)


def check_job(job_dir, ranks, tmp, name):
    svg = os.path.join(tmp, name + ".svg")
    p = render(job_dir, "--view", "heatmap", "-o", svg, *WIDE)
    check(p.returncode == 0, f"{name}: render --view heatmap failed: {p.stderr}")
    if p.returncode != 0:
        return
    text = labels(svg)
    for r in range(ranks):
        check(text.count(f"rank {r}") == 2, f"{name}: 'rank {r}' not labelled in both heatmaps: {text}")
    for want in ("Iteration time per rank and step", "Wait in collectives per rank and instance", "step 0",
                 "no such step", "not in it"):
        check(want in text, f"{name}: no '{want}' in {text}")
    check(any(t.endswith("rank heatmaps") for t in text), f"{name}: no title in {text}")
    check(any(t.endswith("rows by rank") for t in text), f"{name}: rows not said to be by rank: {text}")
    tables = report_tables(job_dir)
    # Every instance the report lists is a column (labelled when the figure has room for it all).
    names = {f"{c['name']} #{c['instance']}" for c in tables["collectives"]}
    if len(names) <= 8:
        for n in sorted(names):
            check(n in text, f"{name}: collective column '{n}' not labelled: {text}")
    # The wait scale starts at the shortest wait: 0 when some rank arrived last.
    if min(c["wait_us"] for c in tables["collectives"]) == 0:
        check("0" in text, f"{name}: the wait scale does not start at 0: {text}")

    # The same figure from the job's fleet file, as its job tab would show it.
    fleet = os.path.join(tmp, name + ".slfleet")
    make_fleet(job_dir, fleet, tmp)
    fleet_svg = os.path.join(tmp, name + "_fleet.svg")
    p = render(fleet, "--view", "heatmap", "-o", fleet_svg, *WIDE)
    check(p.returncode == 0, f"{name}: render RUN.slfleet --view heatmap failed: {p.stderr}")
    if p.returncode == 0:
        check(open(fleet_svg).read() == open(svg).read(), f"{name}: the fleet's heatmaps differ from the job's")
    # Rows by node (ranks 0-1, 2-3, ... per node) and by slowness: every rank still labelled once per heatmap.
    for order in ("node", "slowness"):
        ordered = os.path.join(tmp, f"{name}_{order}.svg")
        p = render(fleet, "--view", "heatmap", "--order", order, "-o", ordered)
        check(p.returncode == 0, f"{name}: --order {order}: {p.stderr}")
        if p.returncode == 0:
            text = labels(ordered)
            check(any(t.endswith(f"rows by {order}") for t in text), f"{name}: --order {order} not said: {text}")
            check(all(text.count(f"rank {r}") == 2 for r in range(ranks)), f"{name}: --order {order} rows: {text}")


with tempfile.TemporaryDirectory() as tmp:
    # 1. The hand-made 3-rank job (one step each, one all-reduce rank 1 arrives last at).
    small = os.path.join(INPUTS, "job_small")
    check_job(small, 3, tmp, "small")
    svg = os.path.join(tmp, "small.svg")
    if os.path.exists(svg):
        text = labels(svg)
        check("AllReduce #0" in text, f"small: no AllReduce #0 column: {text}")
        check("50.0 µs" in text, f"small: the wait scale does not end at the 50 µs rank 0 and 2 wait: {text}")
        slow = os.path.join(tmp, "slow.svg")
        p = render(small, "--view", "heatmap", "--order", "slowness", "-o", slow)
        if p.returncode == 0:
            rows = [t for t in labels(slow) if t.startswith("rank ")]
            # The wait heatmap (second half): rank 1 arrived last and waited least, so it comes last.
            check(rows[-1] == "rank 1", f"small: rows by slowness of wait end with {rows[-1]}: {rows}")

        # The wait in collectives per step alone (--heatmap step-waits): one panel, the same 50 µs.
        sw = os.path.join(tmp, "stepwaits.svg")
        p = render(small, "--view", "heatmap", "--heatmap", "step-waits", "-o", sw, *WIDE)
        check(p.returncode == 0, f"small: --heatmap step-waits failed: {p.stderr}")
        if p.returncode == 0:
            text = labels(sw)
            check("Wait in collectives per rank and step" in text, f"small step-waits: no heading in {text}")
            check("Iteration time per rank and step" not in text, f"small step-waits: the steps panel drawn too: {text}")
            check(all(text.count(f"rank {r}") == 1 for r in range(3)), f"small step-waits: rows {text}")
            check("step 0" in text and "50.0 µs" in text, f"small step-waits: no step 0 or 50 µs scale end in {text}")

    # 2. Usage: a single trace is not a job; --order is for --view heatmap.
    p = render(os.path.join(small, "worker0.json"), "--view", "heatmap", "-o", os.path.join(tmp, "x.svg"))
    check(p.returncode == 2 and "job" in p.stderr, f"a file with --view heatmap: rc {p.returncode}, {p.stderr}")
    p = render(small, "--view", "ranks", "--order", "node", "-o", os.path.join(tmp, "x.svg"))
    check(p.returncode == 2 and "--order" in p.stderr, f"--order with --view ranks: rc {p.returncode}, {p.stderr}")
    p = render(small, "--view", "ranks", "--heatmap", "step-waits", "-o", os.path.join(tmp, "x.svg"))
    check(p.returncode == 2 and "--heatmap" in p.stderr, f"--heatmap with --view ranks: rc {p.returncode}, {p.stderr}")
    p = render(small, "--view", "heatmap", "--heatmap", "steps,speeds", "-o", os.path.join(tmp, "x.svg"))
    check(p.returncode == 2 and "step-waits" in p.stderr, f"--heatmap steps,speeds: rc {p.returncode}, {p.stderr}")

    # 3. The corpus 8-rank job: labels, the fleet's equal figure, and the PNG's scale colours.
    if not os.path.isdir(CORPUS_JOB):
        print(f"SKIP corpus job: {CORPUS_JOB} is absent")
    else:
        check_job(CORPUS_JOB, 8, tmp, "dlrm")
        png = os.path.join(tmp, "dlrm.png")
        p = render(CORPUS_JOB, "--view", "heatmap", "-o", png, "--theme", "light", "--width", "1200")
        check(p.returncode == 0, f"corpus PNG failed: {p.stderr}")
        if p.returncode == 0:
            width, height, rows = read_png(png)
            check(width == 1200, f"PNG width {width}")
            dark_rows = sum(1 for row in rows if sum(1 for px in row if px == DARKEST) > 100)
            check(dark_rows >= 8, f"only {dark_rows} pixel rows show the scale's darkest colour")

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("ok")
