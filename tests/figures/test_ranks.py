#!/usr/bin/env python3
"""`sightline render DIR --view ranks` end to end, with no DISPLAY: the rank overview of a job with
the straggler bars, checked against `sightline report DIR` (stragglers table): SVG labels and
colours, PNG pixels, PDF text; a failed rank is drawn as failed (exit 1); a file is a usage error."""
import json
import os
import re
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
BUSY = (0, 114, 178)


def render(*args):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    return subprocess.run([SIGHTLINE, "render", *args], capture_output=True, text=True, timeout=300, env=env)


def stragglers(job_dir):
    rep = subprocess.run([SIGHTLINE, "report", job_dir, "--format", "json", "--only", "stragglers"], capture_output=True, text=True)
    return {r["rank"]: r for r in json.loads(rep.stdout)["stragglers"]}


def labels(svg):
    return [g.get("aria-label") for g in ET.parse(svg).getroot().iter(SVG + "g") if g.get("aria-label")]


def fills(svg):
    found = re.findall(r"fill:rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)", open(svg).read())
    return {tuple(round(float(v) * 2.55) for v in f) for f in found}


with tempfile.TemporaryDirectory() as tmp:
    # 1. The hand-made 3-rank job: every rank labelled, rank 1's delay bar labelled with the CLI's value.
    small = os.path.join(INPUTS, "job_small")
    svg = os.path.join(tmp, "small.svg")
    p = render(small, "--view", "ranks", "-o", svg)
    check(p.returncode == 0, f"render job_small failed: {p.stderr}")
    if p.returncode == 0:
        text = labels(svg)
        for r in (0, 1, 2):
            check(f"rank {r}" in text, f"no label 'rank {r}' in {text}")
        s = stragglers(small)
        check(s[1]["delay_caused_us"] == 100 and "100 µs" in text, f"rank 1's delay bar label missing: {text}")
        check("GPU busy (height)" in text and "idle: launch-bound" in text and "idle: collective wait" in text, f"legend: {text}")
        check(any(t.startswith("marked: worst skew, AllReduce #0, 50") and "last rank 1" in t for t in text),
              f"worst-skew note missing: {text}")
        check(BUSY in fills(svg), "no GPU-busy fill in the SVG")

    # 2. A truncated rank: drawn as failed, figure still written, exit 1 (as info/report).
    svg = os.path.join(tmp, "trunc.svg")
    p = render(os.path.join(INPUTS, "job_truncated"), "--view", "ranks", "-o", svg)
    check(p.returncode == 1 and os.path.exists(svg), f"job_truncated: rc {p.returncode}, {p.stderr}")
    if os.path.exists(svg):
        check(any(t.startswith("failed to load") for t in labels(svg)), f"no failed rank drawn: {labels(svg)}")

    # 3. Usage: --view ranks wants a folder.
    p = render(os.path.join(small, "worker0.json"), "--view", "ranks", "-o", os.path.join(tmp, "x.svg"))
    check(p.returncode == 2 and "job" in p.stderr, f"a file with --view ranks: rc {p.returncode}, {p.stderr}")

    # 3b. A job folder draws its rank overview by default; --job FILES draws those ranks only.
    default_svg, ranks_svg = os.path.join(tmp, "default.svg"), os.path.join(tmp, "ranks.svg")
    p, q = render(small, "-o", default_svg), render(small, "--view", "ranks", "-o", ranks_svg)
    check(p.returncode == 0 and q.returncode == 0 and open(default_svg).read() == open(ranks_svg).read(),
          f"render DIR without --view: rc {p.returncode} {p.stderr}")
    svg = os.path.join(tmp, "files.svg")
    p = render("--job", os.path.join(small, "worker0.json"), os.path.join(small, "worker1.json"), "-o", svg)
    check(p.returncode == 0, f"render --job: {p.stderr}")
    if p.returncode == 0:
        text = labels(svg)
        check("rank 0" in text and "rank 1" in text and "rank 2" not in text, f"--job of ranks 0 and 1 drew {text}")
    p = render(small, "--view", "timeline", "-o", svg)
    check(p.returncode == 2 and "--view ranks" in p.stderr, f"a job with --view timeline: rc {p.returncode}, {p.stderr}")

    # 3c. --align: rank 2's host clock 5 s ahead. Aligned on the collectives, the figure is exactly
    # that of the job on one clock (aligned too: its offsets are 0, its axis says "aligned"); with
    # raw clocks it is not.
    shifted = os.path.join(tmp, "job_small")
    os.makedirs(shifted)
    for name in os.listdir(small):
        text = open(os.path.join(small, name)).read()
        if name == "rank_2.trace.json":
            text = re.sub(r'"ts":(\d+)', lambda m: '"ts":%d' % (int(m.group(1)) + 5_000_000), text)
        open(os.path.join(shifted, name), "w").write(text)
    figures = {}
    for name, job, align in (("one clock", small, "collectives"), ("aligned", shifted, "collectives"), ("raw", shifted, "none")):
        figures[name] = os.path.join(tmp, name.replace(" ", "_") + ".svg")
        p = render(job, "--align", align, "--title", "job", "-o", figures[name])
        check(p.returncode == 0, f"--align {align}: {p.stderr}")
    if all(os.path.exists(f) for f in figures.values()):
        one, aligned, raw = (open(figures[n]).read() for n in ("one clock", "aligned", "raw"))
        check(aligned == one, "--align collectives on the shifted job differs from the job on one clock")
        check(raw != one, "--align none on the shifted job draws the same figure as one clock")

    # 4. The corpus job: PNG pixels and PDF text (the worst straggler and its delay).
    if not os.path.isdir(CORPUS_JOB):
        print(f"SKIP corpus job: {CORPUS_JOB} is absent")
    else:
        png = os.path.join(tmp, "job.png")
        p = render(CORPUS_JOB, "--view", "ranks", "-o", png, "--theme", "light", "--width", "1200")
        check(p.returncode == 0, f"corpus PNG failed: {p.stderr}")
        if p.returncode == 0:
            width, height, rows = read_png(png)
            check(width == 1200, f"PNG width {width}")
            busy_rows = sum(1 for row in rows if sum(1 for px in row if px == BUSY) > 20)
            check(busy_rows > 8 * 5, f"only {busy_rows} pixel rows show GPU busy")
        pdf = os.path.join(tmp, "job.pdf")
        p = render(CORPUS_JOB, "--view", "ranks", "-o", pdf)
        check(p.returncode == 0, f"corpus PDF failed: {p.stderr}")
        if p.returncode == 0 and subprocess.run(["which", "pdftotext"], capture_output=True).returncode == 0:
            text = subprocess.run(["pdftotext", pdf, "-"], capture_output=True, text=True).stdout
            worst = max(stragglers(CORPUS_JOB).values(), key=lambda r: r["delay_caused_us"])
            shown = f"{worst['delay_caused_us'] / 1000:.3g} ms"
            check(f"rank {worst['rank']}" in text and shown in text, f"PDF lacks rank {worst['rank']} / {shown}")

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("ok")
